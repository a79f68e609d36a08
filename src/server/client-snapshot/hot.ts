/**
 * The client snapshot's hot routes (GET and HEAD, v1 and v2 paths): the reference from the query,
 * the environment header or the v2 path's environment (request.ts), the answer the cached
 * document bytes with their ETag, or 304 when `If-None-Match` names it; both with the
 * Cache-Control of pipeline/cache-control.ts (immutable for a pinned commit named in the URL, else
 * revalidate with the ETag). Served by both HTTP paths (pipeline/hot-route.ts).
 */
import type { Config } from '../../config/types.js';
import type { SnapshotStore } from '../../store/types.js';
import { REVALIDATE, readCacheControl } from '../pipeline/cache-control.js';
import type { HotRoute } from '../pipeline/hot-route.js';
import { clientSnapshotAnswer, clientSnapshotReference } from './request.js';

interface SnapshotRequest {
  readonly namespaceKey: string;
  readonly reference: string | undefined;
}

export function clientSnapshotHotRoutes(deps: { environments: Config['environments']; store: SnapshotStore }): HotRoute<SnapshotRequest>[] {
  const { environments, store } = deps;
  const route = (pattern: string, namespaceParam: string, environmentParam: string | undefined): HotRoute<SnapshotRequest> => ({
    method: 'GET',
    pattern,
    errors: 'api',
    prepare: (req) => ({
      namespaceKey: req.params[namespaceParam]!,
      reference: clientSnapshotReference(environmentParam === undefined ? undefined : req.params[environmentParam]!, req.query, req.headers, environments),
    }),
    reference: (p) => p.reference,
    answer(p, snapshot, req) {
      const a = clientSnapshotAnswer(snapshot, p.namespaceKey, req.headers['if-none-match'], req.pretty);
      const headers = ['ETag', a.etag, 'Cache-Control', readCacheControl(store, req.query, req.authenticated, REVALIDATE)!];
      return a.notModified ? { status: 304, body: undefined, headers } : { status: 200, body: a.body, headers };
    },
  });
  return [
    route('/internal/v1/evaluation/snapshot/namespace/:key', 'key', undefined),
    route('/client/v2/environments/:environment/namespaces/:namespace/snapshot', 'namespace', 'environment'),
  ];
}
