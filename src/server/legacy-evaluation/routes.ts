/**
 * Flipt's legacy evaluation API, for older Flipt SDKs (flipt-semantics.md §2.9):
 *
 *   POST /api/v1/evaluate                              namespace from the body (empty = default)
 *   POST /api/v1/namespaces/{namespaceKey}/evaluate
 *   POST /api/v1/batch-evaluate
 *   POST /api/v1/namespaces/{namespaceKey}/batch-evaluate
 *
 * Requests and answers: request.ts and answer.ts. They read the default
 * reference (the legacy API has none). Like every `/api/v1` path they belong to the management
 * section for authentication (`exclude.management`), as in Flipt.
 */
import type Router from '@koa/router';
import { asJsonObject } from '../../http/body.js';
import type { SnapshotStore } from '../../store/types.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { parseLegacyBatch, parseLegacyEvaluation } from './request.js';
import { legacyBatchResponse, legacyEvaluationResponse } from './answer.js';
import type { ServerMetrics } from '../pipeline/metrics.js';
import { requestBody } from '../../http/request-body.js';
import { sendJson } from '../../http/respond.js';
import { readSnapshot } from '../pipeline/read-snapshot.js';

export function registerLegacyEvaluationRoutes(router: Router<AppState>, deps: { store: SnapshotStore; metrics: ServerMetrics }): void {
  const { store, metrics } = deps;
  // An id the server generated (no sane incoming X-Request-Id) also names the response.
  const generatedId = (ctx: AppRouterContext) => (ctx.state.requestId !== ctx.get('X-Request-Id') ? ctx.state.requestId : undefined);
  const pathNamespace = (ctx: AppRouterContext) => (ctx.params.namespaceKey !== undefined ? { pathNamespace: ctx.params.namespaceKey } : {});

  const evaluate = async (ctx: AppRouterContext) => {
    const parsed = parseLegacyEvaluation(asJsonObject(await requestBody(ctx)), pathNamespace(ctx));
    const snapshot = await readSnapshot(ctx, store, undefined);
    sendJson(ctx, legacyEvaluationResponse(snapshot, parsed, ctx.state.startedAt, metrics, generatedId(ctx)));
  };
  const batch = async (ctx: AppRouterContext) => {
    const parsed = parseLegacyBatch(asJsonObject(await requestBody(ctx)), pathNamespace(ctx));
    const snapshot = await readSnapshot(ctx, store, undefined);
    sendJson(ctx, legacyBatchResponse(snapshot, parsed, ctx.state.startedAt, metrics, generatedId(ctx)));
  };

  router.post('/api/v1/evaluate', evaluate);
  router.post('/api/v1/namespaces/:namespaceKey/evaluate', evaluate);
  router.post('/api/v1/batch-evaluate', batch);
  router.post('/api/v1/namespaces/:namespaceKey/batch-evaluate', batch);
}
