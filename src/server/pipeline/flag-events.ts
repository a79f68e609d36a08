/**
 * Flag evaluations on a request's server span: one `feature_flag.evaluation` event per evaluated
 * flag, with the attributes of OpenTelemetry's feature-flag semantic conventions
 * (https://opentelemetry.io/docs/specs/semconv/feature-flags/feature-flags-events/ and the
 * attribute registry, as exported by @opentelemetry/semantic-conventions' incubating entry,
 * EVENT_FEATURE_FLAG_EVALUATION = "feature_flag.evaluation"; OpenFeature's appendix D maps the
 * same names):
 *
 *   feature_flag.key             the flag key
 *   feature_flag.provider.name   "vexil"
 *   feature_flag.set.id          the namespace key
 *   feature_flag.version         the revision of the snapshot evaluated
 *   feature_flag.result.variant  the variant key ("true"/"false" for a boolean flag, as OFREP says)
 *   feature_flag.result.reason   lowercase snake case: targeting_match, default, disabled, unknown, error
 *   error.type                   on an error item of a batch: flag_not_found or general
 *
 * Redacted, always: `feature_flag.result.value` (an attachment may hold private data; the
 * conventions leave its redaction to the instrumentation and prefer the variant) and
 * `feature_flag.context.id` (the entity id names a user). Nothing here runs unless the request's
 * span is recording: callers pass the span only when it is.
 */
import type { Span } from '@opentelemetry/api';
import type { BooleanResult, EvaluationReason, VariantResult } from '../../model/evaluation-result.js';
import type { Snapshot } from '../../model/snapshot.js';

export const FLAG_EVALUATION_EVENT = 'feature_flag.evaluation';
export const PROVIDER_NAME = 'vexil';

const REASONS: Readonly<Record<EvaluationReason, string>> = {
  FLAG_DISABLED_EVALUATION_REASON: 'disabled',
  MATCH_EVALUATION_REASON: 'targeting_match',
  DEFAULT_EVALUATION_REASON: 'default',
  UNKNOWN_EVALUATION_REASON: 'unknown',
};

function namespaceOf(namespaceKey: string): string {
  return namespaceKey === '' ? 'default' : namespaceKey;
}

export function recordVariantEvaluation(span: Span, snapshot: Snapshot, namespaceKey: string, r: VariantResult): void {
  span.addEvent(FLAG_EVALUATION_EVENT, {
    'feature_flag.key': r.flagKey,
    'feature_flag.provider.name': PROVIDER_NAME,
    'feature_flag.set.id': namespaceOf(namespaceKey),
    'feature_flag.version': snapshot.revision,
    'feature_flag.result.variant': r.variantKey,
    'feature_flag.result.reason': REASONS[r.reason],
  });
}

export function recordBooleanEvaluation(span: Span, snapshot: Snapshot, namespaceKey: string, r: BooleanResult): void {
  span.addEvent(FLAG_EVALUATION_EVENT, {
    'feature_flag.key': r.flagKey,
    'feature_flag.provider.name': PROVIDER_NAME,
    'feature_flag.set.id': namespaceOf(namespaceKey),
    'feature_flag.version': snapshot.revision,
    'feature_flag.result.variant': r.enabled ? 'true' : 'false',
    'feature_flag.result.reason': REASONS[r.reason],
  });
}

/** An evaluation that failed (a batch's error item): reason `error` and the error's class. */
export function recordFailedEvaluation(span: Span, snapshot: Snapshot, namespaceKey: string, flagKey: string, notFound: boolean): void {
  span.addEvent(FLAG_EVALUATION_EVENT, {
    'feature_flag.key': flagKey,
    'feature_flag.provider.name': PROVIDER_NAME,
    'feature_flag.set.id': namespaceOf(namespaceKey),
    'feature_flag.version': snapshot.revision,
    'feature_flag.result.reason': 'error',
    'error.type': notFound ? 'flag_not_found' : 'general',
  });
}
