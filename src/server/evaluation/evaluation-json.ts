/**
 * The JSON text of a variant or boolean response, exactly `JSON.stringify(variantBody(...))` /
 * `JSON.stringify(booleanBody(...))` (evaluation-bodies.ts), built from cached fragments:
 * everything before `"requestId"` and (for booleans) after `"timestamp"` depends on the result
 * alone, and the evaluator returns the same frozen result objects again and again (compile.ts
 * precomputes them), so their fragments are serialised once per result object. Results made per
 * call (not frozen) are serialised each time, the same way.
 */
import type { BooleanResult, VariantResult } from '../../model/evaluation-result.js';
import { decimalText, jsonStrings, quote } from '../../http/json-text.js';
import { newUuid } from '../pipeline/uuid.js';
import type { Timing } from './evaluation-bodies.js';

export interface Fragments {
  /** `{...,"requestId":` */
  readonly head: string;
  /** From `,"flagKey":` to the closing brace. */
  readonly tail: string;
  /** Whether head and tail are ASCII (then a response's length in bytes is its length). */
  readonly ascii: boolean;
}

/** Matches a character outside ASCII: a text without one has as many UTF-8 bytes as characters. */
export const NON_ASCII = /[^\x00-\x7f]/;

function fragments(head: string, tail: string): Fragments {
  return { head, tail, ascii: !NON_ASCII.test(head) && !NON_ASCII.test(tail) };
}

const variantFragments = new WeakMap<VariantResult, Fragments>();
const booleanFragments = new WeakMap<BooleanResult, Fragments>();

export function variantFragmentsOf(r: VariantResult): Fragments {
  let f = variantFragments.get(r);
  if (f !== undefined) return f;
  f = fragments(
    `{"match":${r.match ? 'true' : 'false'},"segmentKeys":${jsonStrings(r.segmentKeys)},"reason":${quote(r.reason)},` +
      `"variantKey":${quote(r.variantKey)},"variantAttachment":${quote(r.variantAttachment)},"requestId":`,
    `,"flagKey":${quote(r.flagKey)}}`,
  );
  if (Object.isFrozen(r)) variantFragments.set(r, f);
  return f;
}

export function booleanFragmentsOf(r: BooleanResult): Fragments {
  let f = booleanFragments.get(r);
  if (f !== undefined) return f;
  f = fragments(
    `{"enabled":${r.enabled ? 'true' : 'false'},"reason":${quote(r.reason)},"requestId":`,
    `,"flagKey":${quote(r.flagKey)},"segmentKeys":${jsonStrings(r.segmentKeys)}}`,
  );
  if (Object.isFrozen(r)) booleanFragments.set(r, f);
  return f;
}

/**
 * The request-dependent middle: `<id>,"requestDurationMillis":<n>,"timestamp":"<t>"`, given the
 * id as JSON text already. The timestamp is an ISO string: nothing in it needs escaping.
 */
function middle(requestIdJson: string, t: Timing): string {
  return `${requestIdJson},"requestDurationMillis":${decimalText(t.durationNanos, 6)},"timestamp":"${t.timestamp}"`;
}

/**
 * The response's `requestId` as JSON text: the body's own, else the server's id for the request
 * (from requestIdFor: a UUID or an id of characters JSON never escapes, so only quoted), else a
 * fresh UUID.
 */
export function requestIdJson(bodyRequestId: string | undefined, serverRequestId: string | undefined): string {
  if (bodyRequestId) return quote(bodyRequestId);
  return `"${serverRequestId || newUuid()}"`;
}

/** `idJson` is `requestId` as JSON text when the caller has it (then `requestId` is not read). */
export function variantJson(r: VariantResult, requestId: string, t: Timing, flagKey: string, idJson = quote(requestId)): string {
  const f = variantFragmentsOf(r);
  const tail = flagKey === r.flagKey ? f.tail : `,"flagKey":${quote(flagKey)}}`;
  return f.head + middle(idJson, t) + tail;
}

export function booleanJson(r: BooleanResult, requestId: string, t: Timing, idJson = quote(requestId)): string {
  const f = booleanFragmentsOf(r);
  return f.head + middle(idJson, t) + f.tail;
}
