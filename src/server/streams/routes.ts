/**
 * Live updates: the two protocols over the one stream hub (streams/hub.ts).
 *
 *   GET /client/v2/environments/{environment}/namespaces/{namespace}/stream    Flipt v2, NDJSON
 *   GET /evaluate/v1/namespaces/{namespace}/stream[?reference=][&snapshot=true]   Server-Sent Events
 *
 * The reference is chosen as for the client snapshot (client-snapshot/request.ts): on the v2 path
 * the path's environment, `?reference=` overriding it; on the SSE path `?reference=`, else the
 * environment of `X-Flipt-Environment` / `X-Svc-Environment`, else the default reference.
 *
 * The SSE path names its namespace in the path, not in the query: authentication decides from
 * the path before routing (auth/scope.ts), so a namespace-scoped token reaches the stream of its
 * namespace exactly as it reaches that namespace's snapshot, and the form matches
 * `/evaluate/v1/namespaces/{namespace}/variant`.
 *
 * The handler returns as soon as the stream is open: the request line and the latency metric
 * record the time to open it, not the life of the connection (which vexil_streams_* and the
 * `stream closed` log line describe).
 */
import type Router from '@koa/router';
import { invalidArgument, notFound } from '../../errors.js';
import type { AuthGate } from '../../auth/middleware.js';
import type { Clock } from '../../auth/types.js';
import type { Config } from '../../config/types.js';
import type { SnapshotStore } from '../../store/types.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { clientSnapshotReference } from '../client-snapshot/request.js';
import { NDJSON_CONTENT_TYPE, SSE_CONTENT_TYPE } from './frames.js';
import type { StreamHub, StreamProtocol } from './hub.js';
import { streamAuthentication } from './stream-auth.js';
import { readSnapshot } from '../pipeline/read-snapshot.js';

export interface StreamRoutesDeps {
  store: SnapshotStore;
  hub: StreamHub;
  environments: Config['environments'];
  /** The authentication decision, asked again for a stream's credential while it stays open. */
  authGate?: AuthGate;
  /** The auth service's clock (token expiry is measured on it); default Date.now. */
  authClock?: Clock;
}

export function registerStreamRoutes(router: Router<AppState>, deps: StreamRoutesDeps): void {
  const { store, hub, environments } = deps;
  const authClock = deps.authClock ?? Date.now;

  const open = async (
    ctx: AppRouterContext,
    protocol: StreamProtocol,
    reference: string | undefined,
    namespace: string,
    sse: { withSnapshot: boolean; lastEventId: string | undefined } | undefined,
  ) => {
    hub.admit(); // before any work: a full server answers 503 at no cost
    const snapshot = await readSnapshot(ctx, store, reference);
    if (!snapshot.namespaces.has(namespace)) {
      // The client snapshot's wording on Flipt's path.
      throw notFound(protocol === 'ndjson' ? `getting flags: namespace "${namespace}" not found` : `namespace "${namespace}" not found`);
    }
    ctx.status = 200;
    ctx.set('Content-Type', protocol === 'ndjson' ? NDJSON_CONTENT_TYPE : SSE_CONTENT_TYPE);
    ctx.set('Cache-Control', 'no-cache');
    // nginx buffers proxied answers by default; a stream must pass through as it is written.
    ctx.set('X-Accel-Buffering', 'no');
    // A HEAD request sees the head a stream would have, and no stream.
    if (ctx.method === 'HEAD') return;
    const auth = streamAuthentication(ctx, deps.authGate, authClock);
    hub.open({
      protocol,
      snapshot,
      namespace,
      withSnapshot: sse?.withSnapshot ?? false,
      ...(sse?.lastEventId !== undefined ? { lastEventId: sse.lastEventId } : {}),
      res: ctx.res,
      ...(auth !== undefined ? { auth } : {}),
      log: ctx.state.log,
    });
    // The hub writes the response from now on.
    ctx.respond = false;
  };

  router.get('/client/v2/environments/:environment/namespaces/:namespace/stream', async (ctx) => {
    const reference = clientSnapshotReference(ctx.params.environment!, ctx.state.query, ctx.req.headers, environments);
    await open(ctx, 'ndjson', reference, ctx.params.namespace!, undefined);
  });

  router.get('/evaluate/v1/namespaces/:namespace/stream', async (ctx) => {
    const reference = clientSnapshotReference(undefined, ctx.state.query, ctx.req.headers, environments);
    const lastEventId = ctx.get('Last-Event-ID');
    await open(ctx, 'sse', reference, ctx.params.namespace!, {
      withSnapshot: booleanParam(ctx.state.query.get('snapshot'), 'snapshot'),
      lastEventId: lastEventId === '' ? undefined : lastEventId,
    });
  });
}

/** `true`/`1` or `false`/`0`; absent is false. */
function booleanParam(value: string | undefined, name: string): boolean {
  if (value === undefined || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw invalidArgument(`${name} must be true or false (got "${value.length > 64 ? `${value.slice(0, 64)}…` : value}")`);
}
