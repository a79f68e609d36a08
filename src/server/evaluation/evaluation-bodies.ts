/**
 * The response objects of `/evaluate/v1` variant and boolean answers (batch items carry the same
 * ones), with their field order, and the request timing they show. evaluation-json.ts writes
 * the same objects as text without building them.
 */
import type { BooleanResult, VariantResult } from '../../model/evaluation-result.js';
import { isoTimestamp, nanosSince } from '../../http/clock.js';

export interface Timing {
  /** Since the request entered the server; responses show it as `requestDurationMillis`. */
  durationNanos: number;
  timestamp: string;
}

/** The timing of a response made now, for a request that entered at `startedAt` (http/clock.ts monotonicMs). */
export function timing(startedAt: number): Timing {
  return { durationNanos: nanosSince(startedAt), timestamp: isoTimestamp() };
}

export function variantBody(r: VariantResult, requestId: string, t: Timing, flagKey: string) {
  return {
    match: r.match,
    segmentKeys: [...r.segmentKeys],
    reason: r.reason,
    variantKey: r.variantKey,
    variantAttachment: r.variantAttachment,
    requestId,
    requestDurationMillis: t.durationNanos / 1e6,
    timestamp: t.timestamp,
    flagKey,
  };
}

export function booleanBody(r: BooleanResult, requestId: string, t: Timing) {
  return {
    enabled: r.enabled,
    reason: r.reason,
    requestId,
    requestDurationMillis: t.durationNanos / 1e6,
    timestamp: t.timestamp,
    flagKey: r.flagKey,
    segmentKeys: [...r.segmentKeys],
  };
}
