/**
 * Client-side evaluation snapshots (flipt-auth-and-clients.md §4a, §4d, §6): the namespace
 * document Flipt's client SDKs download and evaluate locally.
 *
 *   GET /internal/v1/evaluation/snapshot/namespace/{key}[?reference=]       Flipt v1 (and v2)
 *   GET /client/v2/environments/{environment}/namespaces/{namespace}/snapshot    Flipt v2
 *
 * The reference: `?reference=` when given; else, on the v1 path, the environment named by
 * `X-Flipt-Environment` / `X-Svc-Environment`, on the v2 path the one in the path (see
 * pipeline/environments.ts); else the default reference. `X-Flipt-Accept-Server-Version` is read by
 * nobody: every client gets the full document (Flipt downgrades clients that omit it).
 *
 * Each answer carries the ETag; an `If-None-Match` naming it gets 304 with an empty body.
 */
import type Router from '@koa/router';
import type { Config } from '../../config/types.js';
import type { SnapshotStore } from '../../store/types.js';
import { clientSnapshotAnswer, clientSnapshotReference } from './request.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { readSnapshot } from '../pipeline/read-snapshot.js';

export interface ClientSnapshotRoutesDeps {
  store: SnapshotStore;
  environments: Config['environments'];
}

/**
 * The Koa routes. The evaluation fast path (fast-path.ts) answers the same GET and HEAD requests
 * when it can, with the same decisions (client-snapshot/request.ts); these serve the rest (an
 * encoded or trailing-slash path, and every request when the fast path is off).
 */
export function registerClientSnapshotRoutes(router: Router<AppState>, deps: ClientSnapshotRoutesDeps): void {
  const { store, environments } = deps;

  const serve = async (ctx: AppRouterContext, pathEnvironment: string | undefined, namespaceKey: string) => {
    const reference = clientSnapshotReference(pathEnvironment, ctx.state.query, ctx.req.headers, environments);
    const snapshot = await readSnapshot(ctx, store, reference);
    const answer = clientSnapshotAnswer(snapshot, namespaceKey, ctx.req.headers['if-none-match'], ctx.state.pretty);
    ctx.set('ETag', answer.etag);
    if (answer.notModified) {
      ctx.status = 304;
      return;
    }
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = answer.body;
  };

  router.get('/internal/v1/evaluation/snapshot/namespace/:key', async (ctx) => {
    await serve(ctx, undefined, ctx.params.key!);
  });

  router.get('/client/v2/environments/:environment/namespaces/:namespace/snapshot', async (ctx) => {
    await serve(ctx, ctx.params.environment!, ctx.params.namespace!);
  });
}
