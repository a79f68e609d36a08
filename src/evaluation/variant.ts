/** Variant flag evaluation (flipt-semantics.md §2.2, §2.3). */
import { invalidArgument } from '../errors.js';
import type { CompiledFlag, CompiledVariantFlag } from '../model/compiled.js';
import type { EvaluationContext, EvaluationRequest } from '../model/evaluation-request.js';
import type { VariantResult } from '../model/evaluation-result.js';
import type { Snapshot } from '../model/snapshot.js';
import { matchSegmentSet } from './constraints.js';
import { decideRule } from './decide.js';
import { findFlag } from './lookup.js';

/**
 * Evaluates a variant flag. Throws NotFound (namespace / flag) and InvalidArgument
 * `flag type BOOLEAN_FLAG_TYPE invalid`. The result may be a shared frozen object: copy, never mutate.
 */
export function evaluateVariant(snapshot: Snapshot, req: EvaluationRequest): VariantResult {
  const flag = findFlag(snapshot, req.namespaceKey, req.flagKey);
  const compiled = flag.compiled;
  if (compiled.variant === null) throw invalidArgument(`flag type ${flag.type} invalid`);
  return runVariant(compiled, compiled.variant, req);
}

/**
 * The decision procedure of §2.2 on a compiled variant flag: by the flag's generated matcher once
 * it is made (codegen.ts prepareMatcher, off the request path), by the interpreter until then.
 */
export function runVariant(flag: CompiledFlag, v: CompiledVariantFlag, req: EvaluationRequest): VariantResult {
  if (!flag.enabled) return v.disabled;
  const cell = v.matcher;
  const generated = cell.fn;
  if (generated !== null) return generated(req.context, req.entityId);
  cell.interpreted++;
  return interpretVariant(flag, v, req.entityId, req.context);
}

/** The interpreter: the rules in rank order over the compiled data. For an enabled flag. */
export function interpretVariant(flag: CompiledFlag, v: CompiledVariantFlag, entityId: string, context: EvaluationContext): VariantResult {
  const rules = v.rules;
  for (let r = 0; r < rules.length; r++) {
    const rule = rules[r];
    const keys = matchSegmentSet(rule, entityId, context);
    if (keys !== null) return decideRule(flag, v, rule, entityId, keys);
  }
  return v.noMatch!;
}
