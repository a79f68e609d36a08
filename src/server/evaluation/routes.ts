/**
 * `/evaluate/v1`: variant, boolean, batch, and the variant alias under a namespace path; explain
 * (and its alias), the trace of one evaluation (evaluation/explain-response.ts).
 * Each request resolves exactly one snapshot (its `reference`) and evaluates against it only.
 * The work is the shared evaluation core's (server/evaluation/); this file registers the Koa
 * routes. The node:http fast path (fast-path.ts) answers the same requests through the same core.
 */
import type Router from '@koa/router';
import type { SnapshotStore } from '../../store/types.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { asJsonObject } from '../../http/body.js';
import { explainResponse } from './explain-response.js';
import { parseEvaluation, referenceOf, type EvaluationKind } from './request.js';
import { evaluationResponseText } from './answer.js';
import type { ServerMetrics } from '../pipeline/metrics.js';
import { requestBody } from '../../http/request-body.js';
import { sendJson, sendJsonText } from '../../http/respond.js';
import { parseEvaluationRequest } from './validate-request.js';
import { readSnapshot } from '../pipeline/read-snapshot.js';

export function registerEvaluationRoutes(
  router: Router<AppState>,
  deps: { store: SnapshotStore; metrics: ServerMetrics },
): void {
  const { store, metrics } = deps;

  const handler = (kind: EvaluationKind) => async (ctx: AppRouterContext) => {
    const p = parseEvaluation(kind, await requestBody(ctx), kind === 'variant' ? ctx.params.namespaceKey : undefined);
    const snapshot = await readSnapshot(ctx, store, referenceOf(p));
    // An id the server generated (no sane incoming X-Request-Id) also names the response.
    const generated = ctx.state.requestId !== ctx.get('X-Request-Id') ? ctx.state.requestId : undefined;
    sendJsonText(ctx, evaluationResponseText(p, snapshot, ctx.state.startedAt, metrics, ctx.state.pretty, generated).text);
  };

  const variant = handler('variant');
  router.post('/evaluate/v1/variant', variant);
  router.post('/evaluate/v1/namespaces/:namespaceKey/variant', variant);
  router.post('/evaluate/v1/boolean', handler('boolean'));
  router.post('/evaluate/v1/batch', handler('batch'));

  // The body of a variant or boolean request (the same checks, the same reference rule); the
  // flag's own type says which evaluation is explained.
  const explainHandler = async (ctx: AppRouterContext) => {
    const pathNamespace = ctx.params.namespaceKey;
    const parsed = parseEvaluationRequest(asJsonObject(await requestBody(ctx)), pathNamespace !== undefined ? { pathNamespace } : {});
    const snapshot = await readSnapshot(ctx, store, parsed.reference);
    const generated = ctx.state.requestId !== ctx.get('X-Request-Id') ? ctx.state.requestId : undefined;
    sendJson(ctx, explainResponse(parsed, snapshot, ctx.state.startedAt, generated));
  };
  router.post('/evaluate/v1/explain', explainHandler);
  router.post('/evaluate/v1/namespaces/:namespaceKey/explain', explainHandler);
}
