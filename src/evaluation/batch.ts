/** Batch evaluation (flipt-semantics.md §2.8). */
import type { EvaluationRequest } from '../model/evaluation-request.js';
import type { BatchItemResult } from '../model/evaluation-result.js';
import type { Snapshot } from '../model/snapshot.js';
import { runBoolean } from './boolean.js';
import { lookupFlag } from './lookup.js';
import { runVariant } from './variant.js';

/**
 * One result per request, in order, dispatched by the flag's own type (no type errors in a batch).
 * A missing namespace or flag becomes an error item carrying the namespaceKey as sent (may be "");
 * any other error (only `unknown constraint type`, unreachable with validated state) is thrown and
 * fails the whole batch, as in Flipt.
 */
export function evaluateBatch(snapshot: Snapshot, requests: readonly EvaluationRequest[]): BatchItemResult[] {
  const out: BatchItemResult[] = new Array<BatchItemResult>(requests.length);
  for (let i = 0; i < requests.length; i++) {
    const req = requests[i];
    const flag = lookupFlag(snapshot, req.namespaceKey, req.flagKey);
    if (flag === undefined) {
      out[i] = {
        type: 'ERROR_EVALUATION_RESPONSE_TYPE',
        error: { flagKey: req.flagKey, namespaceKey: req.namespaceKey, reason: 'NOT_FOUND_ERROR_EVALUATION_REASON' },
      };
      continue;
    }
    const compiled = flag.compiled;
    out[i] =
      compiled.variant !== null
        ? { type: 'VARIANT_EVALUATION_RESPONSE_TYPE', variant: runVariant(compiled, compiled.variant, req) }
        : { type: 'BOOLEAN_EVALUATION_RESPONSE_TYPE', boolean: runBoolean(compiled, compiled.boolean!, req) };
  }
  return out;
}
