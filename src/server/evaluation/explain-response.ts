/**
 * The answer of `POST /evaluate/v1/explain`: one flag evaluated (by its own type) and the trace of
 * how the decision was reached (evaluation/explain.ts, the one `vexil evaluate` prints).
 *
 * `result` is made by the same evaluator and the same body builder as `/evaluate/v1/variant` or
 * `/evaluate/v1/boolean` (evaluation-bodies.ts), so it is the body those endpoints answer for the
 * same request; only requestDurationMillis and timestamp (and a generated requestId) differ.
 * Explaining is for people: it is not counted in `vexil_evaluations_total` and never runs on the
 * fast path (explain is no hot route: Koa serves it).
 */
import { Code, VexilError } from '../../errors.js';
import { evaluateBoolean, evaluateVariant } from '../../evaluation/index.js';
import { explain, type Explanation } from '../../evaluation/explain.js';
import type { CompiledFlag, CompiledSegmentSet } from '../../model/compiled.js';
import { findFlag } from '../../evaluation/lookup.js';
import type { Snapshot } from '../../model/snapshot.js';
import { newUuid } from '../pipeline/uuid.js';
import { booleanBody, timing, variantBody } from './evaluation-bodies.js';
import type { ParsedEvaluationRequest } from './validate-request.js';

/**
 * Most segment and constraint checks one explanation may show. The trace lists every constraint
 * of every segment of every rule (or rollout) considered, repeated segments included: about 110
 * bytes of JSON and 1.5 µs each (97,000 checks made 10.8 MB in ~130 ms). At this bound an answer
 * stays near 1 MB and ~15 ms; a flag beyond it (say 100 rules over a 100-constraint segment) is
 * refused with 400 rather than answered with megabytes. Ordinary flags are far below it.
 */
export const MAX_EXPLAINED_CHECKS = 10_000;

export interface ExplainResponse {
  readonly flagKey: string;
  readonly namespaceKey: string;
  readonly flagType: 'VARIANT_FLAG_TYPE' | 'BOOLEAN_FLAG_TYPE';
  /** The body `/evaluate/v1/variant` or `/evaluate/v1/boolean` answers for this request. */
  readonly result: object;
  readonly explanation: Explanation;
}

/**
 * Explains one validated request against its snapshot. NotFound (namespace, flag) as the
 * evaluators throw it. `requestId`: the server's id for the request when it generated one.
 */
export function explainResponse(parsed: ParsedEvaluationRequest, snapshot: Snapshot, startedAt: number, requestId?: string): ExplainResponse {
  const req = parsed.request;
  const flag = findFlag(snapshot, req.namespaceKey, req.flagKey);
  const checks = explainedChecks(flag.compiled);
  if (checks > MAX_EXPLAINED_CHECKS) {
    throw new VexilError(
      Code.FailedPrecondition,
      `flag "${flag.key}" is too large to explain: its trace would show ${checks} segment and constraint checks (at most ${MAX_EXPLAINED_CHECKS})`,
    );
  }
  const explanation = explain(snapshot, req);
  const id = parsed.requestId || requestId || newUuid();
  // The evaluator itself (not the explanation's copy of its result), uncounted: the same code the
  // evaluation endpoints run, so `result` cannot drift from their answer.
  const result =
    explanation.flagType === 'VARIANT_FLAG_TYPE'
      ? variantBody(evaluateVariant(snapshot, req), id, timing(startedAt), req.flagKey)
      : booleanBody(evaluateBoolean(snapshot, req), id, timing(startedAt));
  return { flagKey: flag.key, namespaceKey: explanation.namespaceKey, flagType: explanation.flagType, result, explanation };
}

/** How many segment and constraint checks the trace of `flag` shows at most (every rule/rollout considered). */
function explainedChecks(flag: CompiledFlag): number {
  const sets: readonly CompiledSegmentSet[] = flag.variant?.rules ?? flag.boolean?.rollouts ?? [];
  let checks = 0;
  for (const set of sets) {
    checks += 1;
    for (const segment of set.segments) checks += 1 + segment.constraints.length;
  }
  return checks;
}
