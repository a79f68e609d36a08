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
import { asJsonObject, readJson } from '../body.js';
import type { AppRouterContext, AppState } from '../context.js';
import { isoTimestamp } from '../clock.js';
import type { ServerMetrics } from '../metrics.js';
import { sendJson } from '../respond.js';
import { parseBatchRequest, parseEvaluationRequest, type ParsedBatchRequest, type ParsedEvaluationRequest } from '../validate-request.js';
import { readSnapshot } from './snapshot.js';

interface Timing {
  requestDurationMillis: number;
  timestamp: string;
}

function timing(startedAt: bigint): Timing {
  return {
    requestDurationMillis: Number(process.hrtime.bigint() - startedAt) / 1e6,
    timestamp: isoTimestamp(),
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

export type EvaluationKind = 'variant' | 'boolean' | 'batch';

export type ParsedEvaluation =
  | { kind: 'variant' | 'boolean'; parsed: ParsedEvaluationRequest }
  | { kind: 'batch'; parsed: ParsedBatchRequest };

/**
 * Validates a parsed JSON body for one evaluation endpoint. Shared by the Koa routes and the
 * node:http fast path (fast-path.ts), so both refuse exactly the same requests.
 */
export function parseEvaluation(kind: EvaluationKind, body: unknown, pathNamespace?: string): ParsedEvaluation {
  const object = asJsonObject(body);
  if (kind === 'batch') return { kind, parsed: parseBatchRequest(object) };
  return { kind, parsed: parseEvaluationRequest(object, pathNamespace !== undefined ? { pathNamespace } : {}) };
}

/** The reference the request reads (undefined = the default one). */
export function referenceOf(p: ParsedEvaluation): string | undefined {
  return p.parsed.reference;
}

function countError(metrics: ServerMetrics, snapshot: Snapshot, req: EvaluationRequest, err: unknown): void {
  if (err instanceof VexilError && err.code === Code.NotFound) {
    metrics.countEvaluation({
      namespace: namespaceLabel(snapshot, req),
      flag: flagLabel(snapshot, req),
      type: 'error',
      reason: 'NOT_FOUND_ERROR_EVALUATION_REASON',
    });
  }
}

/**
 * Evaluates against the request's one snapshot, counts the evaluations and returns the response
 * object (the caller serialises it). `startedAt` is when the request entered the server.
 */
export function evaluationResponse(p: ParsedEvaluation, snapshot: Snapshot, startedAt: bigint, metrics: ServerMetrics): object {
  switch (p.kind) {
    case 'variant': {
      const parsed = p.parsed;
      let result: VariantResult;
      try {
        result = evaluateVariant(snapshot, parsed.request);
      } catch (err) {
        countError(metrics, snapshot, parsed.request, err);
        throw err;
      }
      metrics.countEvaluation({
        namespace: namespaceLabel(snapshot, parsed.request),
        flag: result.flagKey,
        type: 'variant',
        reason: result.reason,
      });
      return variantBody(result, parsed.requestId || randomUUID(), timing(startedAt), parsed.request.flagKey);
    }
    case 'boolean': {
      const parsed = p.parsed;
      let result: BooleanResult;
      try {
        result = evaluateBoolean(snapshot, parsed.request);
      } catch (err) {
        countError(metrics, snapshot, parsed.request, err);
        throw err;
      }
      metrics.countEvaluation({
        namespace: namespaceLabel(snapshot, parsed.request),
        flag: result.flagKey,
        type: 'boolean',
        reason: result.reason,
      });
      return booleanBody(result, parsed.requestId || randomUUID(), timing(startedAt));
    }
    case 'batch': {
      const parsed = p.parsed;
      const requests = parsed.requests.map((r) => r.request);
      const items: readonly BatchItemResult[] = evaluateBatch(snapshot, requests);
      // Every non-error item carries the whole batch's timestamp and duration (Flipt §2.8).
      const t = timing(startedAt);
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
      return {
        requestId: parsed.requestId || randomUUID(),
        responses,
        requestDurationMillis: t.requestDurationMillis,
      };
    }
  }
}

/** The body, read once per request (authentication may have read it before routing). */
export function requestBody(ctx: AppRouterContext): Promise<unknown> {
  return (ctx.state.jsonBody ??= readJson(ctx.req));
}

export function registerEvaluationRoutes(
  router: Router<AppState>,
  deps: { store: SnapshotStore; metrics: ServerMetrics },
): void {
  const { store, metrics } = deps;

  const handler = (kind: EvaluationKind) => async (ctx: AppRouterContext) => {
    const p = parseEvaluation(kind, await requestBody(ctx), kind === 'variant' ? ctx.params.namespaceKey : undefined);
    const snapshot = await readSnapshot(ctx, store, referenceOf(p));
    sendJson(ctx, evaluationResponse(p, snapshot, ctx.state.startedAt, metrics));
  };

  const variant = handler('variant');
  router.post('/evaluate/v1/variant', variant);
  router.post('/evaluate/v1/namespaces/:namespaceKey/variant', variant);
  router.post('/evaluate/v1/boolean', handler('boolean'));
  router.post('/evaluate/v1/batch', handler('batch'));
}
