/**
 * The one place result objects are made, so every VariantResult / BooleanResult shares one
 * object shape (V8 keeps property access on them monomorphic). Results built at compile time are
 * frozen and shared between calls: callers must copy, never mutate.
 */
import type { BooleanResult, EvaluationReason, VariantResult } from '../model/evaluation-result.js';

export const NO_KEYS: readonly string[] = Object.freeze([]);

export function variantResult(
  flagKey: string,
  match: boolean,
  segmentKeys: readonly string[],
  reason: EvaluationReason,
  variantKey: string,
  variantAttachment: string,
): VariantResult {
  return { flagKey, match, segmentKeys, reason, variantKey, variantAttachment };
}

export function booleanResult(
  flagKey: string,
  enabled: boolean,
  reason: EvaluationReason,
  segmentKeys: readonly string[],
): BooleanResult {
  return { flagKey, enabled, reason, segmentKeys };
}
