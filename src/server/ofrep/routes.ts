/**
 * OFREP, the OpenFeature Remote Evaluation Protocol (flipt-auth-and-clients.md §4b), so any
 * OpenFeature SDK with an OFREP provider evaluates against vexil:
 *
 *   GET  /ofrep/v1/configuration          what the provider may assume (ofrep/configuration.ts)
 *   POST /ofrep/v1/evaluate/flags/{key}   one flag: {"context": {...}} (ofrep/request.ts)
 *   POST /ofrep/v1/evaluate/flags         several flags, with ETag / If-None-Match (ofrep/bulk.ts)
 *
 * The namespace is the `X-Svc-Namespace` / `X-Flipt-Namespace` header (default `default`), as the
 * body has no place for it. The reference: the `X-Svc-Reference` / `X-Flipt-Reference` header,
 * else `?reference=`, else the environment the `X-Svc-Environment` / `X-Flipt-Environment` header
 * names (pipeline/environments.ts), else the default reference. Errors are written in the OFREP schema
 * (ofrep/errors.ts, mounted in app.ts for every path under /ofrep/).
 *
 * The single-flag evaluation is a hot route (hot.ts, served by both HTTP paths from
 * server/hot-routes.ts); this file registers the configuration and the bulk evaluation.
 */
import type Router from '@koa/router';
import type { Config } from '../../config/types.js';
import type { SnapshotStore } from '../../store/types.js';
import { ifNoneMatchHits } from '../pipeline/conditional.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import type { ServerMetrics } from '../pipeline/metrics.js';
import { bulkNamespace, bulkText } from './bulk.js';
import { ofrepConfiguration } from './configuration.js';
import { bulkEtag } from './etag.js';
import { parseOfrepBulkRequest } from './request.js';
import { ofrepNamespace, ofrepReference, referenceFailure } from './target.js';
import { requestBody } from '../../http/request-body.js';
import { sendJson, sendJsonText } from '../../http/respond.js';
import { readSnapshot } from '../pipeline/read-snapshot.js';

export interface OfrepRoutesDeps {
  store: SnapshotStore;
  metrics: ServerMetrics;
  config: Pick<Config, 'storage' | 'environments'>;
}

export function registerOfrepRoutes(router: Router<AppState>, deps: OfrepRoutesDeps): void {
  const { store, metrics, config } = deps;
  const configuration = ofrepConfiguration(config.storage);

  const namespaceKeyOf = (ctx: AppRouterContext) => ofrepNamespace(ctx.req.headers);
  /** The request's snapshot; an unknown reference or environment is no missing flag (GENERAL). */
  const snapshotOf = async (ctx: AppRouterContext) => {
    try {
      return await readSnapshot(ctx, store, ofrepReference(ctx.req.headers, ctx.state.query, config.environments));
    } catch (err) {
      throw referenceFailure(err);
    }
  };
  const send = (ctx: AppRouterContext, text: string) => sendJsonText(ctx, ctx.state.pretty ? JSON.stringify(JSON.parse(text), null, 2) : text);

  router.get('/ofrep/v1/configuration', (ctx) => sendJson(ctx, configuration));

  router.post('/ofrep/v1/evaluate/flags', async (ctx) => {
    const req = parseOfrepBulkRequest(await requestBody(ctx));
    const namespaceKey = namespaceKeyOf(ctx);
    const snapshot = await snapshotOf(ctx);
    const ns = bulkNamespace(snapshot, namespaceKey);
    const etag = bulkEtag(snapshot, ns, req);
    ctx.set('ETag', etag);
    if (ifNoneMatchHits(ctx.req.headers['if-none-match'], etag)) {
      ctx.status = 304;
      return;
    }
    send(ctx, bulkText(snapshot, ns, req, metrics));
  });
}
