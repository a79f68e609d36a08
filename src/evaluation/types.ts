/** Inputs and outputs of the pure evaluators (transport fields like timestamp are added by callers). */
export type EvaluationReason =
  | 'UNKNOWN_EVALUATION_REASON'
  | 'FLAG_DISABLED_EVALUATION_REASON'
  | 'MATCH_EVALUATION_REASON'
  | 'DEFAULT_EVALUATION_REASON';

export interface EvaluationRequest {
  /** Empty means `default`. */
  readonly namespaceKey: string;
  readonly flagKey: string;
  readonly entityId: string;
  /** A missing key reads as "" (absent and empty are the same, as in Flipt). */
  readonly context: Readonly<Record<string, string>>;
}

export interface VariantResult {
  readonly flagKey: string;
  readonly match: boolean;
  /** Matched segment keys of the deciding rule, in the rule's declared order (deterministic). */
  readonly segmentKeys: readonly string[];
  readonly reason: EvaluationReason;
  readonly variantKey: string;
  readonly variantAttachment: string;
}

export interface BooleanResult {
  readonly flagKey: string;
  readonly enabled: boolean;
  readonly reason: EvaluationReason;
  readonly segmentKeys: readonly string[];
}

export type BatchItemResult =
  | { readonly type: 'VARIANT_EVALUATION_RESPONSE_TYPE'; readonly variant: VariantResult }
  | { readonly type: 'BOOLEAN_EVALUATION_RESPONSE_TYPE'; readonly boolean: BooleanResult }
  | {
      readonly type: 'ERROR_EVALUATION_RESPONSE_TYPE';
      readonly error: {
        readonly flagKey: string;
        /** As sent (may be ""). */
        readonly namespaceKey: string;
        readonly reason: 'NOT_FOUND_ERROR_EVALUATION_REASON' | 'UNKNOWN_ERROR_EVALUATION_REASON';
      };
    };
