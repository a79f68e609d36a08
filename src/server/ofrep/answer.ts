/**
 * One flag evaluated for OFREP (flipt-auth-and-clients.md §4b): the flag's type decides the
 * evaluation (OFREP requests carry no type), through the evaluation core that answers
 * `/evaluate/v1`, counted the same way (evaluation-metrics.ts).
 *
 *   variant flag: value = variant = the variant key; metadata.segments = the matched segment
 *                 keys joined by ","; metadata.attachment = the variant's attachment (JSON text)
 *   boolean flag: value = true/false, variant = "true"/"false"; metadata.segments as above
 *   reason:       FLAG_DISABLED → DISABLED, MATCH → TARGETING_MATCH, DEFAULT → DEFAULT, else UNKNOWN
 *   both:         metadata.version = the revision of the snapshot evaluated; metadata.flagSetId =
 *                 the namespace key. OpenFeature's telemetry (the evaluation event of
 *                 @openfeature/core) reads these two metadata keys into feature_flag.version and
 *                 feature_flag.set.id.
 *
 * Where Flipt differs: it writes no metadata for boolean flags (vexil names the matched segments
 * for both types), and it writes `attachment: "null"` for a variant without one (vexil leaves the
 * key out: "null" is how state files spell "no attachment").
 *
 * A response is a pure function of the flag key, the result object and (version, flagSetId), and
 * the evaluator hands out the same frozen result objects again and again, so each one's JSON text
 * is made once, around a gap for the two set fields. (A compiled flag, and with it its frozen
 * results, can be shared by snapshots of several revisions and references whose content is the
 * same: the set fields are never part of what is kept per result.)
 */
import type { Span } from '@opentelemetry/api';
import type { BooleanResult, EvaluationReason, VariantResult } from '../../model/evaluation-result.js';
import { lookupFlag } from '../../evaluation/lookup.js';
import type { Snapshot } from '../../model/snapshot.js';
import { evaluateBooleanCounted, evaluateVariantCounted } from '../evaluation/evaluation-metrics.js';
import type { ServerMetrics } from '../pipeline/metrics.js';
import { recordBooleanEvaluation, recordVariantEvaluation } from '../pipeline/flag-events.js';
import type { OfrepRequest } from './request.js';

export type OfrepReason = 'DISABLED' | 'TARGETING_MATCH' | 'DEFAULT' | 'UNKNOWN';

export interface EvaluatedFlag {
  readonly key: string;
  readonly reason: OfrepReason;
  readonly variant: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly value: string | boolean;
}

const REASONS: Readonly<Record<EvaluationReason, OfrepReason>> = {
  FLAG_DISABLED_EVALUATION_REASON: 'DISABLED',
  MATCH_EVALUATION_REASON: 'TARGETING_MATCH',
  DEFAULT_EVALUATION_REASON: 'DEFAULT',
  UNKNOWN_EVALUATION_REASON: 'UNKNOWN',
};

function segmentsMetadata(segmentKeys: readonly string[]): Record<string, string> {
  return segmentKeys.length > 0 ? { segments: segmentKeys.join(',') } : {};
}

export function evaluatedVariant(key: string, r: VariantResult): EvaluatedFlag {
  const metadata = segmentsMetadata(r.segmentKeys);
  if (r.variantAttachment !== '' && r.variantAttachment !== 'null') metadata.attachment = r.variantAttachment;
  return { key, reason: REASONS[r.reason], variant: r.variantKey, metadata, value: r.variantKey };
}

export function evaluatedBoolean(key: string, r: BooleanResult): EvaluatedFlag {
  return { key, reason: REASONS[r.reason], variant: r.enabled ? 'true' : 'false', metadata: segmentsMetadata(r.segmentKeys), value: r.enabled };
}

/**
 * JSON text per frozen result object (the flag key is the result's own: see evaluatedFlagText),
 * in two parts: up to the flag's own metadata entries, and from the metadata's end on.
 */
const texts = new WeakMap<VariantResult | BooleanResult, FlagText>();

interface FlagText {
  /** `{"key":…,"reason":…,"variant":…,"metadata":{<the flag's entries>` and the comma after them, if any. */
  readonly head: string;
  /** `},"value":…}` */
  readonly tail: string;
}

function flagText(flag: EvaluatedFlag): FlagText {
  const entries = JSON.stringify(flag.metadata).slice(1, -1);
  const head = `{"key":${JSON.stringify(flag.key)},"reason":"${flag.reason}","variant":${JSON.stringify(flag.variant)},"metadata":{${entries}${entries === '' ? '' : ','}`;
  return { head, tail: `},"value":${JSON.stringify(flag.value)}}` };
}

/** `"version":<revision>,"flagSetId":<namespace>` per snapshot and namespace. */
const setFields = new WeakMap<Snapshot, Map<string, string>>();

/** The metadata entries every OFREP answer from `snapshot`'s namespace carries, as JSON text (no braces). */
export function flagSetMetadataText(snapshot: Snapshot, namespaceKey: string): string {
  let byNamespace = setFields.get(snapshot);
  if (byNamespace === undefined) setFields.set(snapshot, (byNamespace = new Map()));
  let text = byNamespace.get(namespaceKey);
  if (text === undefined) {
    text = `"version":${JSON.stringify(snapshot.revision)},"flagSetId":${JSON.stringify(namespaceKey)}`;
    byNamespace.set(namespaceKey, text);
  }
  return text;
}

/**
 * Evaluates `flagKey` of `namespaceKey` and returns the OFREP answer as JSON text. Throws what the
 * evaluation core throws: NotFound for a missing namespace or flag. `span`: the request's
 * recording span, which gets the evaluation as an event (pipeline/flag-events.ts).
 */
export function evaluatedFlagText(
  snapshot: Snapshot,
  namespaceKey: string,
  flagKey: string,
  req: OfrepRequest,
  metrics: ServerMetrics,
  span?: Span,
): string {
  const parsed = { request: { namespaceKey, flagKey, entityId: req.entityId, context: req.context } };
  // A missing flag goes through the variant path, which throws its NotFound and counts it.
  const isBoolean = lookupFlag(snapshot, namespaceKey, flagKey)?.type === 'BOOLEAN_FLAG_TYPE';
  const result = isBoolean ? evaluateBooleanCounted(snapshot, parsed, metrics) : evaluateVariantCounted(snapshot, parsed, metrics);
  if (span !== undefined) {
    if (isBoolean) recordBooleanEvaluation(span, snapshot, namespaceKey, result as BooleanResult);
    else recordVariantEvaluation(span, snapshot, namespaceKey, result as VariantResult);
  }
  let text = texts.get(result);
  if (text === undefined) {
    text = flagText(isBoolean ? evaluatedBoolean(flagKey, result as BooleanResult) : evaluatedVariant(flagKey, result as VariantResult));
    // Results made per call are not frozen; a frozen one names the flag it was evaluated for.
    if (Object.isFrozen(result) && result.flagKey === flagKey) texts.set(result, text);
  }
  // Only an existing namespace gets here (the evaluation throws NotFound for a missing one).
  return text.head + flagSetMetadataText(snapshot, namespaceKey) + text.tail;
}
