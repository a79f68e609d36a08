/**
 * Evaluation with counting: each evaluation answered over HTTP is counted in
 * `vexil_evaluations_total` by namespace, flag, type and reason, with label values bounded by
 * what exists in the snapshot. The series of a successful evaluation is cached per result object,
 * so counting one costs a map lookup and an increment.
 */
import { Code, VexilError } from '../../errors.js';
import { evaluateBoolean, evaluateVariant } from '../../evaluation/index.js';
import type { BooleanResult, VariantResult } from '../../model/evaluation-result.js';
import type { EvaluationRequest } from '../../model/evaluation-request.js';
import type { Snapshot } from '../../model/snapshot.js';
import type { CounterSeries, ServerMetrics } from '../pipeline/metrics.js';
import type { ParsedEvaluationRequest } from './validate-request.js';

/** Label values for the evaluation counter, bounded by what exists in the snapshot. */
export function namespaceLabel(snapshot: Snapshot, req: EvaluationRequest): string {
  const ns = req.namespaceKey === '' ? 'default' : req.namespaceKey;
  return snapshot.namespaces.has(ns) ? ns : '';
}

function flagLabel(snapshot: Snapshot, req: EvaluationRequest): string {
  const ns = snapshot.namespaces.get(req.namespaceKey === '' ? 'default' : req.namespaceKey);
  return ns?.flags.has(req.flagKey) ? req.flagKey : '';
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

export const evaluateVariantCounted = (snapshot: Snapshot, parsed: ParsedEvaluationRequest, metrics: ServerMetrics) =>
  evaluateCounted(evaluateVariant, 'variant', snapshot, parsed, metrics);
export const evaluateBooleanCounted = (snapshot: Snapshot, parsed: ParsedEvaluationRequest, metrics: ServerMetrics) =>
  evaluateCounted(evaluateBoolean, 'boolean', snapshot, parsed, metrics);
