/**
 * Answers of Flipt's legacy evaluation API (flipt-semantics.md §2.9), from the evaluation core
 * that answers `/evaluate/v1/variant` (the same algorithm, as in Flipt; counted the same way by
 * evaluation-metrics.ts). Field order as Flipt writes them:
 *
 *   {requestId, entityId, requestContext, match, flagKey, segmentKey, timestamp, value,
 *    requestDurationMillis, attachment, reason, namespaceKey, segmentKeys}
 *
 * `segmentKey` is the first of `segmentKeys` ("" when none); `value` the variant key;
 * `requestContext` the context as sent; reasons by name (the legacy enum shares its names with
 * the evaluation API's for every reason an evaluation can give). Errors are HTTP errors, never a
 * reason in a body: a missing flag or namespace 404, a boolean flag 400
 * `flag type BOOLEAN_FLAG_TYPE invalid` (the legacy API evaluates variant flags only).
 *
 * Batch: `{requestId, responses, requestDurationMillis}`; items in request order, each with
 * `requestId: ""`, the batch's `timestamp` and `requestDurationMillis: 0` (Flipt's interceptor
 * times the batch, not its items). With `excludeNotFound` an item whose flag or namespace does not
 * exist is left out; otherwise it fails the batch with its 404, as any other error does.
 */
import { Code, VexilError } from '../../errors.js';
import type { EvaluationRequest } from '../../model/evaluation-request.js';
import type { VariantResult } from '../../model/evaluation-result.js';
import type { Snapshot } from '../../model/snapshot.js';
import { timing } from '../evaluation/evaluation-bodies.js';
import { evaluateVariantCounted } from '../evaluation/evaluation-metrics.js';
import type { ServerMetrics } from '../pipeline/metrics.js';
import { newUuid } from '../pipeline/uuid.js';
import type { LegacyBatchRequest, LegacyEvaluationRequest } from './request.js';

export function legacyBody(r: VariantResult, req: EvaluationRequest, requestId: string, timestamp: string, durationMillis: number) {
  return {
    requestId,
    entityId: req.entityId,
    requestContext: req.context,
    match: r.match,
    flagKey: req.flagKey,
    segmentKey: r.segmentKeys[0] ?? '',
    timestamp,
    value: r.variantKey,
    requestDurationMillis: durationMillis,
    attachment: r.variantAttachment,
    reason: r.reason,
    namespaceKey: req.namespaceKey,
    segmentKeys: [...r.segmentKeys],
  };
}

/**
 * `startedAt`: when the request entered the server (http/clock.ts monotonicMs). `serverRequestId`:
 * the request's own id when the server generated it; a body without `requestId` is answered with
 * it (else with a fresh UUID), as on `/evaluate/v1`.
 */
export function legacyEvaluationResponse(
  snapshot: Snapshot,
  parsed: LegacyEvaluationRequest,
  startedAt: number,
  metrics: ServerMetrics,
  serverRequestId?: string,
): object {
  const result = evaluateVariantCounted(snapshot, parsed, metrics);
  const t = timing(startedAt);
  return legacyBody(result, parsed.request, parsed.requestId || serverRequestId || newUuid(), t.timestamp, t.durationNanos / 1e6);
}

export function legacyBatchResponse(
  snapshot: Snapshot,
  batch: LegacyBatchRequest,
  startedAt: number,
  metrics: ServerMetrics,
  serverRequestId?: string,
): object {
  const answered: Array<{ request: EvaluationRequest; result: VariantResult }> = [];
  for (const item of batch.requests) {
    try {
      answered.push({ request: item.request, result: evaluateVariantCounted(snapshot, item, metrics) });
    } catch (err) {
      if (batch.excludeNotFound && err instanceof VexilError && err.code === Code.NotFound) continue;
      throw err;
    }
  }
  const t = timing(startedAt);
  return {
    requestId: batch.requestId || serverRequestId || newUuid(),
    responses: answered.map((a) => legacyBody(a.result, a.request, '', t.timestamp, 0)),
    requestDurationMillis: t.durationNanos / 1e6,
  };
}
