/**
 * Client-side evaluation snapshots (flipt-auth-and-clients.md §4a, §4d, §6): the namespace
 * document Flipt's client SDKs download and evaluate locally.
 *
 *   GET /internal/v1/evaluation/snapshot/namespace/{key}[?reference=]       Flipt v1 (and v2)
 *   GET /client/v2/environments/{environment}/namespaces/{namespace}/snapshot    Flipt v2
 *
 * The reference: `?reference=` when given; else, on the v1 path, the environment named by
 * `X-Flipt-Environment` / `X-Svc-Environment`, on the v2 path the one in the path (see
 * environments.ts); else the default reference. `X-Flipt-Accept-Server-Version` is read by
 * nobody: every client gets the full document (Flipt downgrades clients that omit it).
 *
 * Each answer carries the ETag; an `If-None-Match` naming it gets 304 with an empty body.
 */
import type Router from '@koa/router';
import { notFound } from '../../errors.js';
import type { Config } from '../../config/types.js';
import type { SnapshotStore } from '../../store/types.js';
import { servedSnapshot } from '../client-snapshot/served.js';
import { ifNoneMatchHits } from '../conditional.js';
import type { AppRouterContext, AppState } from '../context.js';
import { environmentReference, requestReference } from '../environments.js';
import { readSnapshot } from '../read-snapshot.js';

export interface ClientSnapshotRoutesDeps {
  store: SnapshotStore;
  environments: Config['environments'];
}

export function registerClientSnapshotRoutes(router: Router<AppState>, deps: ClientSnapshotRoutesDeps): void {
  const { store, environments } = deps;

  const serve = async (ctx: AppRouterContext, reference: string | undefined, namespaceKey: string) => {
    const snapshot = await readSnapshot(ctx, store, reference);
    const ns = snapshot.namespaces.get(namespaceKey);
    // Flipt's wording for this endpoint.
    if (ns === undefined) throw notFound(`getting flags: namespace "${namespaceKey}" not found`);
    const { etag, body } = servedSnapshot(snapshot, ns);
    ctx.set('ETag', etag);
    if (ifNoneMatchHits(ctx.req.headers['if-none-match'], etag)) {
      ctx.status = 304;
      return;
    }
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = ctx.state.pretty ? JSON.stringify(JSON.parse(body.toString('utf8')), null, 2) : body;
  };

  router.get('/internal/v1/evaluation/snapshot/namespace/:key', async (ctx) => {
    await serve(ctx, requestReference(ctx.state.query, ctx.req.headers, environments), ctx.params.key!);
  });

  router.get('/client/v2/environments/:environment/namespaces/:namespace/snapshot', async (ctx) => {
    // The path's environment is checked even when `?reference=` overrides it: an unknown one is a
    // misconfigured client either way.
    const fromEnvironment = environmentReference(environments, ctx.params.environment!);
    const reference = ctx.state.query.get('reference');
    await serve(ctx, reference !== undefined && reference !== '' ? reference : fromEnvironment, ctx.params.namespace!);
  });
}
