/**
 * `/evaluate/v1`: variant, boolean, batch, and the variant alias under a namespace path.
 * Each request resolves exactly one snapshot (its `reference`) and evaluates against it only.
 */
import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import { Code, VexilError } from '../../errors.js';
import { evaluateBatch, evaluateBoolean, evaluateVariant } from '../../evaluation/index.js';
import type { BatchItemResult, BooleanResult, EvaluationRequest, VariantResult } from '../../evaluation/types.js';
import type { Snapshot } from '../../state/model.js';
import type { SnapshotStore } from '../../store/types.js';
import { readJsonObject } from '../body.js';
import type { AppRouterContext, AppState } from '../context.js';
import type { ServerMetrics } from '../metrics.js';
import { sendJson } from '../respond.js';
import { parseBatchRequest, parseEvaluationRequest } from '../validate-request.js';
import { readSnapshot } from './snapshot.js';

interface Timing {
  requestDurationMillis: number;
  timestamp: string;
}

function timing(ctx: AppRouterContext): Timing {
  return {
    requestDurationMillis: Number(process.hrtime.bigint() - ctx.state.startedAt) / 1e6,
    timestamp: new Date().toISOString(),
  };
}

function variantBody(r: VariantResult, requestId: string, t: Timing, flagKey: string) {
  return {
    match: r.match,
    segmentKeys: [...r.segmentKeys],
    reason: r.reason,
    variantKey: r.variantKey,
    variantAttachment: r.variantAttachment,
    requestId,
    requestDurationMillis: t.requestDurationMillis,
    timestamp: t.timestamp,
    flagKey,
  };
}

function booleanBody(r: BooleanResult, requestId: string, t: Timing) {
  return {
    enabled: r.enabled,
    reason: r.reason,
    requestId,
    requestDurationMillis: t.requestDurationMillis,
    timestamp: t.timestamp,
    flagKey: r.flagKey,
    segmentKeys: [...r.segmentKeys],
  };
}

/** Label values for the evaluation counter, bounded by what exists in the snapshot. */
function namespaceLabel(snapshot: Snapshot, req: EvaluationRequest): string {
  const ns = req.namespaceKey === '' ? 'default' : req.namespaceKey;
  return snapshot.namespaces.has(ns) ? ns : '';
}

function flagLabel(snapshot: Snapshot, req: EvaluationRequest): string {
  const ns = snapshot.namespaces.get(req.namespaceKey === '' ? 'default' : req.namespaceKey);
  return ns?.flags.has(req.flagKey) ? req.flagKey : '';
}

export function registerEvaluationRoutes(
  router: Router<AppState>,
  deps: { store: SnapshotStore; metrics: ServerMetrics },
): void {
  const { store, metrics } = deps;

  function countError(snapshot: Snapshot, req: EvaluationRequest, err: unknown): void {
    if (err instanceof VexilError && err.code === Code.NotFound) {
      metrics.countEvaluation({
        namespace: namespaceLabel(snapshot, req),
        flag: flagLabel(snapshot, req),
        type: 'error',
        reason: 'NOT_FOUND_ERROR_EVALUATION_REASON',
      });
    }
  }

  const variant = async (ctx: AppRouterContext) => {
    const body = await readJsonObject(ctx.req);
    const pathNamespace = ctx.params.namespaceKey;
    const parsed = parseEvaluationRequest(body, pathNamespace !== undefined ? { pathNamespace } : {});
    const snapshot = await readSnapshot(ctx, store, parsed.reference);
    let result: VariantResult;
    try {
      result = evaluateVariant(snapshot, parsed.request);
    } catch (err) {
      countError(snapshot, parsed.request, err);
      throw err;
    }
    metrics.countEvaluation({
      namespace: namespaceLabel(snapshot, parsed.request),
      flag: result.flagKey,
      type: 'variant',
      reason: result.reason,
    });
    sendJson(ctx, variantBody(result, parsed.requestId || randomUUID(), timing(ctx), parsed.request.flagKey));
  };

  router.post('/evaluate/v1/variant', variant);
  router.post('/evaluate/v1/namespaces/:namespaceKey/variant', variant);

  router.post('/evaluate/v1/boolean', async (ctx) => {
    const parsed = parseEvaluationRequest(await readJsonObject(ctx.req));
    const snapshot = await readSnapshot(ctx, store, parsed.reference);
    let result: BooleanResult;
    try {
      result = evaluateBoolean(snapshot, parsed.request);
    } catch (err) {
      countError(snapshot, parsed.request, err);
      throw err;
    }
    metrics.countEvaluation({
      namespace: namespaceLabel(snapshot, parsed.request),
      flag: result.flagKey,
      type: 'boolean',
      reason: result.reason,
    });
    sendJson(ctx, booleanBody(result, parsed.requestId || randomUUID(), timing(ctx)));
  });

  router.post('/evaluate/v1/batch', async (ctx) => {
    const parsed = parseBatchRequest(await readJsonObject(ctx.req));
    const snapshot = await readSnapshot(ctx, store, parsed.reference);
    const requests = parsed.requests.map((r) => r.request);
    const items: readonly BatchItemResult[] = evaluateBatch(snapshot, requests);
    // Every non-error item carries the whole batch's timestamp and duration (Flipt §2.8).
    const t = timing(ctx);
    const responses = items.map((item, i) => {
      const req = requests[i]!;
      const innerId = parsed.requests[i]!.requestId ?? '';
      switch (item.type) {
        case 'VARIANT_EVALUATION_RESPONSE_TYPE':
          metrics.countEvaluation({ namespace: namespaceLabel(snapshot, req), flag: item.variant.flagKey, type: 'variant', reason: item.variant.reason });
          return { type: item.type, variantResponse: variantBody(item.variant, innerId, t, req.flagKey) };
        case 'BOOLEAN_EVALUATION_RESPONSE_TYPE':
          metrics.countEvaluation({ namespace: namespaceLabel(snapshot, req), flag: item.boolean.flagKey, type: 'boolean', reason: item.boolean.reason });
          return { type: item.type, booleanResponse: booleanBody(item.boolean, innerId, t) };
        case 'ERROR_EVALUATION_RESPONSE_TYPE':
          metrics.countEvaluation({ namespace: namespaceLabel(snapshot, req), flag: '', type: 'error', reason: item.error.reason });
          return {
            type: item.type,
            errorResponse: { flagKey: item.error.flagKey, namespaceKey: item.error.namespaceKey, reason: item.error.reason },
          };
      }
    });
    sendJson(ctx, {
      requestId: parsed.requestId || randomUUID(),
      responses,
      requestDurationMillis: t.requestDurationMillis,
    });
  });
}
