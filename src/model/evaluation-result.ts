/**
 * What the pure evaluators answer: variant, boolean and batch results and their reasons (transport
 * fields like timestamp are added by callers). Types only (ground floor): the evaluators
 * (`evaluation/`), the compiled program's precomputed results (compiled.ts), the HTTP answers
 * and the CLI share them. Results are built by `evaluation/results.ts`.
 */
export type EvaluationReason =
  | 'UNKNOWN_EVALUATION_REASON'
  | 'FLAG_DISABLED_EVALUATION_REASON'
  | 'MATCH_EVALUATION_REASON'
  | 'DEFAULT_EVALUATION_REASON';

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
