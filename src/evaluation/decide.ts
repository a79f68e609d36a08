/**
 * What a variant rule whose segments matched answers (flipt-semantics.md §2.2): shared by the
 * interpreter (variant.ts) and the generated matchers (codegen.ts), which call it for partial OR
 * matches (the all-matched case is inlined there).
 */
import type { CompiledFlag, CompiledRule, CompiledVariantFlag } from '../model/compiled.js';
import type { VariantResult } from '../model/evaluation-result.js';
import { variantBucket } from './hash.js';
import { variantResult } from './results.js';

/**
 * `keys` are the matched segment keys: `rule.allKeys` itself when every segment matched (then a
 * precomputed frozen result is returned), else a fresh array in declared order.
 * The first rule whose segments match decides, whatever its distributions say (no fall-through).
 */
export function decideRule(flag: CompiledFlag, v: CompiledVariantFlag, rule: CompiledRule, entityId: string, keys: readonly string[]): VariantResult {
  const bounds = rule.bounds;
  const all = keys === rule.allKeys;
  if (bounds.length === 0) {
    return all ? rule.noDistributions! : variantResult(flag.key, true, keys, 'MATCH_EVALUATION_REASON', v.defaultKey, v.defaultAttachment);
  }
  const bucket = variantBucket(flag.keyCrc, entityId);
  for (let i = 0; i < bounds.length; i++) {
    if (bucket < bounds[i]) {
      const hit = rule.hits[i];
      return all ? hit : variantResult(flag.key, true, keys, 'MATCH_EVALUATION_REASON', hit.variantKey, hit.variantAttachment);
    }
  }
  // Reached only when the last bound is below 1000, where `miss` is built.
  return all ? rule.miss! : variantResult(flag.key, false, keys, v.baseReason, v.defaultKey, v.defaultAttachment);
}
