/** Variant flag evaluation (flipt-semantics.md §2.2, §2.3). */
import { invalidArgument } from '../errors.js';
import type { Snapshot } from '../state/model.js';
import type { CompiledFlag, CompiledVariantFlag } from './compile.js';
import { matchSegmentSet } from './constraints.js';
import { variantBucket } from './hash.js';
import { findFlag } from './lookup.js';
import { variantResult } from './results.js';
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

/** The decision procedure of §2.2 on a compiled variant flag. */
export function runVariant(flag: CompiledFlag, v: CompiledVariantFlag, req: EvaluationRequest): VariantResult {
  if (!flag.enabled) return v.disabled;
  const rules = v.rules;
  const entityId = req.entityId;
  for (let r = 0; r < rules.length; r++) {
    const rule = rules[r];
    const keys = matchSegmentSet(rule, entityId, req.context);
    if (keys === null) continue;

    // The first rule whose segments match decides, whatever its distributions say (no fall-through).
    const bounds = rule.bounds;
    const all = keys === rule.allKeys;
    if (bounds.length === 0) {
      return all ? rule.noDistributions : variantResult(flag.key, true, keys, 'MATCH_EVALUATION_REASON', v.defaultKey, v.defaultAttachment);
    }
    const bucket = variantBucket(flag.keyCrc, entityId);
    for (let i = 0; i < bounds.length; i++) {
      if (bucket < bounds[i]) {
        return all
          ? rule.hits[i]
          : variantResult(flag.key, true, keys, 'MATCH_EVALUATION_REASON', rule.variantKeys[i], rule.attachments[i]);
      }
    }
    return all ? rule.miss : variantResult(flag.key, false, keys, v.baseReason, v.defaultKey, v.defaultAttachment);
  }
  return v.noMatch;
}
