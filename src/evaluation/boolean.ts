/** Boolean flag evaluation (flipt-semantics.md §2.4). */
import { invalidArgument } from '../errors.js';
import type { CompiledBooleanFlag, CompiledFlag } from '../model/compiled.js';
import type { EvaluationContext, EvaluationRequest } from '../model/evaluation-request.js';
import type { BooleanResult } from '../model/evaluation-result.js';
import type { Snapshot } from '../model/snapshot.js';
import { matchSegmentSet } from './constraints.js';
import { thresholdValue } from './hash.js';
import { findFlag } from './lookup.js';
import { ROLLOUT_SEGMENT, ROLLOUT_THRESHOLD } from './opcodes.js';
import { booleanResult } from './results.js';

/**
 * Evaluates a boolean flag. Throws NotFound (namespace / flag) and InvalidArgument
 * `flag type VARIANT_FLAG_TYPE invalid`. The result may be a shared frozen object: copy, never mutate.
 */
export function evaluateBoolean(snapshot: Snapshot, req: EvaluationRequest): BooleanResult {
  const flag = findFlag(snapshot, req.namespaceKey, req.flagKey);
  const compiled = flag.compiled;
  if (compiled.boolean === null) throw invalidArgument(`flag type ${flag.type} invalid`);
  return runBoolean(compiled, compiled.boolean, req);
}

/** By the flag's generated matcher once it is made, by the interpreter until then (see runVariant). */
export function runBoolean(flag: CompiledFlag, b: CompiledBooleanFlag, req: EvaluationRequest): BooleanResult {
  const cell = b.matcher;
  const generated = cell.fn;
  if (generated !== null) return generated(req.context, req.entityId);
  cell.interpreted++;
  return interpretBoolean(flag, b, req.entityId, req.context);
}

/**
 * The interpreter. Rollouts in rank order; the first that matches decides. `flag.enabled` is only
 * the fall-through value: a disabled boolean flag still evaluates its rollouts (and never answers
 * FLAG_DISABLED).
 */
export function interpretBoolean(flag: CompiledFlag, b: CompiledBooleanFlag, entityId: string, context: EvaluationContext): BooleanResult {
  const rollouts = b.rollouts;
  let n = -1; // crc32(entityId ‖ flagKey) % 100, computed on the first threshold rollout reached
  for (let r = 0; r < rollouts.length; r++) {
    const rollout = rollouts[r];
    if (rollout.kind === ROLLOUT_THRESHOLD) {
      if (n < 0) n = thresholdValue(entityId, flag.key);
      // float32(n) < float32(percentage): n is an integer, exact in float32.
      if (n < rollout.percentage) return rollout.result;
    } else if (rollout.kind === ROLLOUT_SEGMENT) {
      const keys = matchSegmentSet(rollout, entityId, context);
      if (keys === null) continue;
      return keys === rollout.allKeys ? rollout.result : booleanResult(flag.key, rollout.value, 'MATCH_EVALUATION_REASON', keys);
    }
  }
  return b.fallThrough;
}
