/**
 * The answer to a validated evaluation request (request.ts): evaluated against the
 * request's one snapshot, counted (evaluation-metrics.ts) and shaped as the response object or
 * its JSON text. Every HTTP path that answers `/evaluate/v1` (the Koa routes and the node:http
 * fast path) answers through here.
 */
import type { Span } from '@opentelemetry/api';
import { evaluateBatch } from '../../evaluation/index.js';
import type { BatchItemResult } from '../../model/evaluation-result.js';
import type { Snapshot } from '../../model/snapshot.js';
import type { EvaluationRequest } from '../../model/evaluation-request.js';
import type { ServerMetrics } from '../pipeline/metrics.js';
import { newUuid } from '../pipeline/uuid.js';
import { recordBooleanEvaluation, recordFailedEvaluation, recordVariantEvaluation } from '../pipeline/flag-events.js';
import { booleanBody, timing, variantBody } from './evaluation-bodies.js';
import { NON_ASCII, booleanFragmentsOf, booleanJson, requestIdJson, variantFragmentsOf, variantJson } from './evaluation-json.js';
import { evaluateBooleanCounted, evaluateVariantCounted, namespaceLabel } from './evaluation-metrics.js';
import type { ParsedEvaluation } from './request.js';

/**
 * Evaluates against the request's one snapshot, counts the evaluations and returns the response
 * object (the caller serialises it). `startedAt` is when the request entered the server
 * (http/clock.ts monotonicMs).
 * `requestId` is the request's own id when the server generated it (from requestIdFor): a
 * response whose body names no `requestId` carries that one, so body, `X-Request-Id` and log line
 * agree; without it a fresh UUID is generated. `span`: the request's recording span, which gets
 * each evaluation as an event (pipeline/flag-events.ts).
 */
export function evaluationResponse(
  p: ParsedEvaluation,
  snapshot: Snapshot,
  startedAt: number,
  metrics: ServerMetrics,
  requestId?: string,
  span?: Span,
): object {
  switch (p.kind) {
    case 'variant': {
      const parsed = p.parsed;
      const result = evaluateVariantCounted(snapshot, parsed, metrics);
      if (span !== undefined) recordVariantEvaluation(span, snapshot, parsed.request.namespaceKey, result);
      return variantBody(result, parsed.requestId || requestId || newUuid(), timing(startedAt), parsed.request.flagKey);
    }
    case 'boolean': {
      const parsed = p.parsed;
      const result = evaluateBooleanCounted(snapshot, parsed, metrics);
      if (span !== undefined) recordBooleanEvaluation(span, snapshot, parsed.request.namespaceKey, result);
      return booleanBody(result, parsed.requestId || requestId || newUuid(), timing(startedAt));
    }
    case 'batch': {
      const parsed = p.parsed;
      const requests = parsed.requests.map((r) => r.request);
      const items: readonly BatchItemResult[] = evaluateBatch(snapshot, requests);
      if (span !== undefined) recordBatch(span, snapshot, requests, items);
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
        requestId: parsed.requestId || requestId || newUuid(),
        responses,
        requestDurationMillis: t.durationNanos / 1e6,
      };
    }
  }
}

function recordBatch(span: Span, snapshot: Snapshot, requests: readonly EvaluationRequest[], items: readonly BatchItemResult[]): void {
  items.forEach((item, i) => {
    const ns = requests[i]!.namespaceKey;
    if (item.type === 'VARIANT_EVALUATION_RESPONSE_TYPE') recordVariantEvaluation(span, snapshot, ns, item.variant);
    else if (item.type === 'BOOLEAN_EVALUATION_RESPONSE_TYPE') recordBooleanEvaluation(span, snapshot, ns, item.boolean);
    else recordFailedEvaluation(span, snapshot, item.error.namespaceKey, item.error.flagKey, item.error.reason === 'NOT_FOUND_ERROR_EVALUATION_REASON');
  });
}

/** A response body and whether it is known to be ASCII (its length in bytes is then its length). */
export interface ResponseText {
  readonly text: string;
  readonly ascii: boolean;
}

/**
 * evaluationResponse as the response's JSON text (indented under `pretty`). Variant and boolean
 * answers are written from cached fragments (variantJson, booleanJson): the same text
 * JSON.stringify would give, without serialising the constant part of a result each time. Their
 * pieces say whether they are ASCII, so the caller can size and send the text without scanning it.
 */
export function evaluationResponseText(
  p: ParsedEvaluation,
  snapshot: Snapshot,
  startedAt: number,
  metrics: ServerMetrics,
  pretty: boolean,
  requestId?: string,
  span?: Span,
): ResponseText {
  if (!pretty && p.kind !== 'batch') {
    const bodyId = p.parsed.requestId;
    // The server's ids are ASCII (requestIdFor); a body's own id is checked.
    const idAscii = !bodyId || !NON_ASCII.test(bodyId);
    const idJson = requestIdJson(bodyId, requestId);
    if (p.kind === 'variant') {
      const result = evaluateVariantCounted(snapshot, p.parsed, metrics);
      if (span !== undefined) recordVariantEvaluation(span, snapshot, p.parsed.request.namespaceKey, result);
      const flagKey = p.parsed.request.flagKey;
      const ascii = idAscii && flagKey === result.flagKey && variantFragmentsOf(result).ascii;
      return { text: variantJson(result, '', timing(startedAt), flagKey, idJson), ascii };
    }
    const result = evaluateBooleanCounted(snapshot, p.parsed, metrics);
    if (span !== undefined) recordBooleanEvaluation(span, snapshot, p.parsed.request.namespaceKey, result);
    return { text: booleanJson(result, '', timing(startedAt), idJson), ascii: idAscii && booleanFragmentsOf(result).ascii };
  }
  const out = evaluationResponse(p, snapshot, startedAt, metrics, requestId, span);
  return { text: pretty ? JSON.stringify(out, null, 2) : JSON.stringify(out), ascii: false };
}
