/**
 * `/evaluate/v1`: variant, boolean, batch, and the variant alias under a namespace path.
 * Each request resolves exactly one snapshot (its `reference`) and evaluates against it only.
 */
import type Router from '@koa/router';
import { Code, VexilError } from '../../errors.js';
import { evaluateBatch, evaluateBoolean, evaluateVariant } from '../../evaluation/index.js';
import type { BatchItemResult, BooleanResult, EvaluationRequest, VariantResult } from '../../evaluation/types.js';
import type { Snapshot } from '../../state/model.js';
import type { SnapshotStore } from '../../store/types.js';
import { asJsonObject, readJson } from '../../http/body.js';
import { isoTimestamp, nanosSince } from '../../http/clock.js';
import { decimalText, jsonStrings, quote } from '../../http/json-text.js';
import type { AppRouterContext, AppState } from '../context.js';
import type { CounterSeries, ServerMetrics } from '../metrics.js';
import { sendJsonText } from '../respond.js';
import { parseBatchRequest, parseEvaluationRequest, type ParsedBatchRequest, type ParsedEvaluationRequest } from '../validate-request.js';
import { newUuid } from '../uuid.js';
import { readSnapshot } from './snapshot.js';

export interface Timing {
  /** Since the request entered the server; responses show it as `requestDurationMillis`. */
  durationNanos: number;
  timestamp: string;
}

function timing(startedAt: number): Timing {
  return { durationNanos: nanosSince(startedAt), timestamp: isoTimestamp() };
}

export function variantBody(r: VariantResult, requestId: string, t: Timing, flagKey: string) {
  return {
    match: r.match,
    segmentKeys: [...r.segmentKeys],
    reason: r.reason,
    variantKey: r.variantKey,
    variantAttachment: r.variantAttachment,
    requestId,
    requestDurationMillis: t.durationNanos / 1e6,
    timestamp: t.timestamp,
    flagKey,
  };
}

export function booleanBody(r: BooleanResult, requestId: string, t: Timing) {
  return {
    enabled: r.enabled,
    reason: r.reason,
    requestId,
    requestDurationMillis: t.durationNanos / 1e6,
    timestamp: t.timestamp,
    flagKey: r.flagKey,
    segmentKeys: [...r.segmentKeys],
  };
}

/**
 * The JSON text of a variant or boolean response, exactly `JSON.stringify(variantBody(...))` /
 * `JSON.stringify(booleanBody(...))`, built from cached fragments: everything before
 * `"requestId"` and (for booleans) after `"timestamp"` depends on the result alone, and the
 * evaluator returns the same frozen result objects again and again (compile.ts precomputes
 * them), so their fragments are serialised once per result object. Results made per call (not
 * frozen) are serialised each time, the same way.
 */
interface Fragments {
  /** `{...,"requestId":` */
  readonly head: string;
  /** From `,"flagKey":` to the closing brace. */
  readonly tail: string;
  /** Whether head and tail are ASCII (then a response's length in bytes is its length). */
  readonly ascii: boolean;
}

const NON_ASCII = /[^\x00-\x7f]/;

function fragments(head: string, tail: string): Fragments {
  return { head, tail, ascii: !NON_ASCII.test(head) && !NON_ASCII.test(tail) };
}

const variantFragments = new WeakMap<VariantResult, Fragments>();
const booleanFragments = new WeakMap<BooleanResult, Fragments>();

function variantFragmentsOf(r: VariantResult): Fragments {
  let f = variantFragments.get(r);
  if (f !== undefined) return f;
  f = fragments(
    `{"match":${r.match ? 'true' : 'false'},"segmentKeys":${jsonStrings(r.segmentKeys)},"reason":${quote(r.reason)},` +
      `"variantKey":${quote(r.variantKey)},"variantAttachment":${quote(r.variantAttachment)},"requestId":`,
    `,"flagKey":${quote(r.flagKey)}}`,
  );
  if (Object.isFrozen(r)) variantFragments.set(r, f);
  return f;
}

function booleanFragmentsOf(r: BooleanResult): Fragments {
  let f = booleanFragments.get(r);
  if (f !== undefined) return f;
  f = fragments(
    `{"enabled":${r.enabled ? 'true' : 'false'},"reason":${quote(r.reason)},"requestId":`,
    `,"flagKey":${quote(r.flagKey)},"segmentKeys":${jsonStrings(r.segmentKeys)}}`,
  );
  if (Object.isFrozen(r)) booleanFragments.set(r, f);
  return f;
}

/**
 * The request-dependent middle: `<id>,"requestDurationMillis":<n>,"timestamp":"<t>"`, given the
 * id as JSON text already. The timestamp is an ISO string: nothing in it needs escaping.
 */
function middle(requestIdJson: string, t: Timing): string {
  return `${requestIdJson},"requestDurationMillis":${decimalText(t.durationNanos, 6)},"timestamp":"${t.timestamp}"`;
}

/**
 * The response's `requestId` as JSON text: the body's own, else the server's id for the request
 * (from requestIdFor: a UUID or an id of characters JSON never escapes, so only quoted), else a
 * fresh UUID.
 */
function requestIdJson(bodyRequestId: string | undefined, serverRequestId: string | undefined): string {
  if (bodyRequestId) return quote(bodyRequestId);
  return `"${serverRequestId || newUuid()}"`;
}

/** `idJson` is `requestId` as JSON text when the caller has it (then `requestId` is not read). */
export function variantJson(r: VariantResult, requestId: string, t: Timing, flagKey: string, idJson = quote(requestId)): string {
  const f = variantFragmentsOf(r);
  const tail = flagKey === r.flagKey ? f.tail : `,"flagKey":${quote(flagKey)}}`;
  return f.head + middle(idJson, t) + tail;
}

export function booleanJson(r: BooleanResult, requestId: string, t: Timing, idJson = quote(requestId)): string {
  const f = booleanFragmentsOf(r);
  return f.head + middle(idJson, t) + f.tail;
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
 * The evaluation counter's series of a successful evaluation, kept per result object: a result
 * that came back names its flag and reason, and its namespace (which exists, or the evaluation
 * would have failed) is the request's. A result object shared between namespaces (equal flags)
 * is looked up again when the namespace differs.
 */
const seriesByResult = new WeakMap<object, { namespace: string; metrics: ServerMetrics; series: CounterSeries }>();

function countSuccess(metrics: ServerMetrics, snapshot: Snapshot, req: EvaluationRequest, result: VariantResult | BooleanResult, type: 'variant' | 'boolean'): void {
  const namespace = req.namespaceKey === '' ? 'default' : req.namespaceKey;
  const cached = seriesByResult.get(result);
  if (cached !== undefined && cached.namespace === namespace && cached.metrics === metrics) {
    cached.series.inc();
    return;
  }
  const series = metrics.evaluationSeries({ namespace: namespaceLabel(snapshot, req), flag: result.flagKey, type, reason: result.reason });
  if (Object.isFrozen(result)) seriesByResult.set(result, { namespace, metrics, series });
  series.inc();
}

/** Evaluates one request and counts the outcome (a success by its result, a not-found as an error). */
function evaluateCounted<R extends VariantResult | BooleanResult>(
  evaluate: (snapshot: Snapshot, req: EvaluationRequest) => R,
  type: 'variant' | 'boolean',
  snapshot: Snapshot,
  parsed: ParsedEvaluationRequest,
  metrics: ServerMetrics,
): R {
  let result: R;
  try {
    result = evaluate(snapshot, parsed.request);
  } catch (err) {
    countError(metrics, snapshot, parsed.request, err);
    throw err;
  }
  countSuccess(metrics, snapshot, parsed.request, result, type);
  return result;
}

const evaluateVariantCounted = (snapshot: Snapshot, parsed: ParsedEvaluationRequest, metrics: ServerMetrics) =>
  evaluateCounted(evaluateVariant, 'variant', snapshot, parsed, metrics);
const evaluateBooleanCounted = (snapshot: Snapshot, parsed: ParsedEvaluationRequest, metrics: ServerMetrics) =>
  evaluateCounted(evaluateBoolean, 'boolean', snapshot, parsed, metrics);

/**
 * Evaluates against the request's one snapshot, counts the evaluations and returns the response
 * object (the caller serialises it). `startedAt` is when the request entered the server
 * (clock.ts monotonicMs).
 * `requestId` is the request's own id when the server generated it (from requestIdFor): a
 * response whose body names no `requestId` carries that one, so body, `X-Request-Id` and log line
 * agree; without it a fresh UUID is generated.
 */
export function evaluationResponse(p: ParsedEvaluation, snapshot: Snapshot, startedAt: number, metrics: ServerMetrics, requestId?: string): object {
  switch (p.kind) {
    case 'variant': {
      const parsed = p.parsed;
      const result = evaluateVariantCounted(snapshot, parsed, metrics);
      return variantBody(result, parsed.requestId || requestId || newUuid(), timing(startedAt), parsed.request.flagKey);
    }
    case 'boolean': {
      const parsed = p.parsed;
      const result = evaluateBooleanCounted(snapshot, parsed, metrics);
      return booleanBody(result, parsed.requestId || requestId || newUuid(), timing(startedAt));
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
        requestId: parsed.requestId || requestId || newUuid(),
        responses,
        requestDurationMillis: t.durationNanos / 1e6,
      };
    }
  }
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
): ResponseText {
  if (!pretty && p.kind !== 'batch') {
    const bodyId = p.parsed.requestId;
    // The server's ids are ASCII (requestIdFor); a body's own id is checked.
    const idAscii = !bodyId || !NON_ASCII.test(bodyId);
    const idJson = requestIdJson(bodyId, requestId);
    if (p.kind === 'variant') {
      const result = evaluateVariantCounted(snapshot, p.parsed, metrics);
      const flagKey = p.parsed.request.flagKey;
      const ascii = idAscii && flagKey === result.flagKey && variantFragmentsOf(result).ascii;
      return { text: variantJson(result, '', timing(startedAt), flagKey, idJson), ascii };
    }
    const result = evaluateBooleanCounted(snapshot, p.parsed, metrics);
    return { text: booleanJson(result, '', timing(startedAt), idJson), ascii: idAscii && booleanFragmentsOf(result).ascii };
  }
  const out = evaluationResponse(p, snapshot, startedAt, metrics, requestId);
  return { text: pretty ? JSON.stringify(out, null, 2) : JSON.stringify(out), ascii: false };
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
