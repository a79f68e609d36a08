/**
 * `/evaluate/v1` routes that are not hot: explain (and its alias under a namespace path), the
 * trace of one evaluation (explain-response.ts). Variant, boolean, batch and the namespaced
 * variant are hot routes (hot.ts, served by both HTTP paths from server/hot-routes.ts).
 * Each request resolves exactly one snapshot (its `reference`) and evaluates against it only.
 */
import type Router from '@koa/router';
import type { SnapshotStore } from '../../store/types.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { asJsonObject } from '../../http/body.js';
import { explainResponse } from './explain-response.js';
import { requestBody } from '../../http/request-body.js';
import { sendJson } from '../../http/respond.js';
import { parseEvaluationRequest } from './validate-request.js';
import { readSnapshot } from '../pipeline/read-snapshot.js';

export function registerExplainRoutes(router: Router<AppState>, deps: { store: SnapshotStore }): void {
  const { store } = deps;

  // The body of a variant or boolean request (the same checks, the same reference rule); the
  // flag's own type says which evaluation is explained.
  const explainHandler = async (ctx: AppRouterContext) => {
    const pathNamespace = ctx.params.namespaceKey;
    const parsed = parseEvaluationRequest(asJsonObject(await requestBody(ctx)), pathNamespace !== undefined ? { pathNamespace } : {});
    const snapshot = await readSnapshot(ctx, store, parsed.reference);
    // An id the server generated (no sane incoming X-Request-Id) also names the response.
    const generated = ctx.state.requestId !== ctx.get('X-Request-Id') ? ctx.state.requestId : undefined;
    sendJson(ctx, explainResponse(parsed, snapshot, ctx.state.startedAt, generated));
  };
  router.post('/evaluate/v1/explain', explainHandler);
  router.post('/evaluate/v1/namespaces/:namespaceKey/explain', explainHandler);
}
