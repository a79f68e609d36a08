/**
 * `/evaluate/v1`: variant, boolean, batch, and the variant alias under a namespace path.
 * Each request resolves exactly one snapshot (its `reference`) and evaluates against it only.
 * The work is the shared evaluation core's (server/evaluation/); this file registers the Koa
 * routes. The node:http fast path (fast-path.ts) answers the same requests through the same core.
 */
import type Router from '@koa/router';
import type { SnapshotStore } from '../../store/types.js';
import type { AppRouterContext, AppState } from '../context.js';
import { parseEvaluation, referenceOf, type EvaluationKind } from '../evaluation/parse-evaluation.js';
import { evaluationResponseText } from '../evaluation/respond-evaluation.js';
import type { ServerMetrics } from '../metrics.js';
import { requestBody } from '../request-body.js';
import { sendJsonText } from '../respond.js';
import { readSnapshot } from '../read-snapshot.js';

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
}
