/**
 * "What does this entity get": every flag of a namespace evaluated for one entity and context in
 * one `POST /evaluate/v1/batch` request (docs/api/evaluation.md). Builds that request's body and
 * reads its answer back as one row per flag (key, type, what is served, the reason in words, the
 * segments), in the order of the flags asked for. The batch answers item i for request i; an error
 * item (a flag gone between the list and the batch) is a row that says so. Pure, no DOM.
 */
import type { BooleanEvaluation, EvaluationReason, VariantEvaluation } from '../types.js';

export interface BatchBody {
  requests: Array<{ namespaceKey: string; flagKey: string; entityId: string; context: Record<string, string> }>;
  reference?: string;
}

export type BatchItem =
  | { type: 'VARIANT_EVALUATION_RESPONSE_TYPE'; variantResponse: VariantEvaluation }
  | { type: 'BOOLEAN_EVALUATION_RESPONSE_TYPE'; booleanResponse: BooleanEvaluation }
  | { type: 'ERROR_EVALUATION_RESPONSE_TYPE'; errorResponse: { flagKey: string; namespaceKey: string; reason: string } };

export interface BatchAnswer {
  requestId: string;
  responses: BatchItem[];
  requestDurationMillis: number;
}

/** The batch asking for each of `flagKeys` (one reference for all, when one is browsed). */
export function batchBody(namespace: string, flagKeys: readonly string[], entityId: string, context: Record<string, string>, reference?: string): BatchBody {
  return {
    requests: flagKeys.map((flagKey) => ({ namespaceKey: namespace, flagKey, entityId, context })),
    ...(reference !== undefined && reference !== '' ? { reference } : {}),
  };
}

/**
 * The server's request body limit (docs/api/README.md, "Request limits"; src/http/limits.ts, which
 * the UI may not import: test/ui/lib/batch-evaluation.test.ts checks the two agree).
 */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Why a body cannot be sent as it is, or undefined: the server reads at most MAX_BODY_BYTES of a
 * request (413 beyond), and the context is repeated in every item of the batch.
 */
export function batchBodyProblem(text: string, flagCount: number): string | undefined {
  const bytes = new TextEncoder().encode(text).length;
  if (bytes <= MAX_BODY_BYTES) return undefined;
  const mib = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  return `The batch for ${flagCount} flags with this context is ${mib(bytes)}, above the server's request limit of ${mib(MAX_BODY_BYTES)}: the context is sent once per flag, so shorten it.`;
}

export interface EntityRow {
  flagKey: string;
  type: 'variant' | 'boolean' | 'error';
  /** The variant key (`(no variant)` when none), `true` / `false`, or `error`. */
  served: string;
  /** The reason in words: `match`, `default`, `flag disabled`, `flag not found`, ... */
  reason: string;
  /** The segment keys that matched, comma-separated (`` when none). */
  segments: string;
  /** The variant's attachment (JSON text, `` when none or not a variant). */
  attachment: string;
}

const REASON_WORDS: Record<string, string> = {
  MATCH_EVALUATION_REASON: 'match',
  DEFAULT_EVALUATION_REASON: 'default',
  FLAG_DISABLED_EVALUATION_REASON: 'flag disabled',
  UNKNOWN_EVALUATION_REASON: 'unknown',
  NOT_FOUND_ERROR_EVALUATION_REASON: 'flag not found',
  UNKNOWN_ERROR_EVALUATION_REASON: 'evaluation error',
};

/** An evaluation reason (or error reason) in words; an unlisted one as the API names it. */
export function reasonWords(reason: EvaluationReason | string): string {
  return REASON_WORDS[reason] ?? reason;
}

/** One row per item of the answer, in the order asked (`flagKeys` names items the answer lacks). */
export function entityRows(flagKeys: readonly string[], answer: BatchAnswer): EntityRow[] {
  return flagKeys.map((flagKey, i) => {
    const item = answer.responses[i];
    if (item === undefined) return { flagKey, type: 'error', served: 'error', reason: 'no answer', segments: '', attachment: '' };
    switch (item.type) {
      case 'VARIANT_EVALUATION_RESPONSE_TYPE': {
        const v = item.variantResponse;
        return {
          flagKey,
          type: 'variant',
          served: v.variantKey === '' ? '(no variant)' : v.variantKey,
          reason: reasonWords(v.reason),
          segments: v.segmentKeys.join(', '),
          attachment: v.variantAttachment,
        };
      }
      case 'BOOLEAN_EVALUATION_RESPONSE_TYPE': {
        const b = item.booleanResponse;
        return { flagKey, type: 'boolean', served: String(b.enabled), reason: reasonWords(b.reason), segments: b.segmentKeys.join(', '), attachment: '' };
      }
      default:
        return { flagKey, type: 'error', served: 'error', reason: reasonWords(item.errorResponse.reason), segments: '', attachment: '' };
    }
  });
}
