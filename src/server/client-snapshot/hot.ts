/**
 * The client snapshot's hot routes (GET and HEAD, v1 and v2 paths): the reference from the query,
 * the environment header or the v2 path's environment (request.ts), the answer the cached
 * document bytes with their ETag, or 304 when `If-None-Match` names it. Served by both HTTP paths
 * (pipeline/hot-route.ts).
 */
import type { Config } from '../../config/types.js';
import type { HotRoute } from '../pipeline/hot-route.js';
import { clientSnapshotAnswer, clientSnapshotReference } from './request.js';

interface SnapshotRequest {
  readonly namespaceKey: string;
  readonly reference: string | undefined;
}

export function clientSnapshotHotRoutes(deps: { environments: Config['environments'] }): HotRoute<SnapshotRequest>[] {
  const { environments } = deps;
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
      return a.notModified ? { status: 304, body: undefined, headers: ['ETag', a.etag] } : { status: 200, body: a.body, headers: ['ETag', a.etag] };
    },
  });
  return [
    route('/internal/v1/evaluation/snapshot/namespace/:key', 'key', undefined),
    route('/client/v2/environments/:environment/namespaces/:namespace/snapshot', 'namespace', 'environment'),
  ];
}
