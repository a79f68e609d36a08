/** Variant flag evaluation (flipt-semantics.md §2.2, §2.3). */
import { invalidArgument } from '../errors.js';
import type { Snapshot } from '../state/model.js';
import { generateVariantMatcher } from './codegen.js';
import { GENERATE_AFTER, type CompiledFlag, type CompiledVariantFlag } from './compile.js';
import { matchSegmentSet, type EvaluationContext } from './constraints.js';
import { decideRule } from './decide.js';
import { findFlag } from './lookup.js';
import type { EvaluationRequest, VariantResult } from './types.js';

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
 * The decision procedure of §2.2 on a compiled variant flag: interpreted for the first calls, then
 * by the flag's generated matcher (codegen.ts) when the runtime allows code generation. A flag
 * evaluated a few times (the CLI, tests) never pays for generating code.
 */
export function runVariant(flag: CompiledFlag, v: CompiledVariantFlag, req: EvaluationRequest): VariantResult {
  if (!flag.enabled) return v.disabled;
  const cell = v.matcher;
  const generated = cell.fn;
  if (generated !== null) return generated(req.context, req.entityId);
  if (cell.calls < GENERATE_AFTER) {
    cell.calls++;
  } else if (cell.calls === GENERATE_AFTER) {
    cell.calls++; // one attempt: on failure the interpreter stays in charge
    const fn = generateVariantMatcher(flag, v);
    if (fn !== null) {
      cell.fn = fn;
      return fn(req.context, req.entityId);
    }
  }
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
