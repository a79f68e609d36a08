/**
 * Checks evaluation request bodies (`/evaluate/v1/*`) and turns them into evaluator input.
 *
 * One rule for every field: absent means the protobuf default. Flipt's clients encode with
 * protojson, which leaves out empty strings, empty maps and empty lists, and Flipt reads a field
 * left out as its default; so does vexil. JSON `null` on a field is read as absent too (protojson
 * reads `null` on a singular field as its default value: fields.ts `field`). A field that is
 * present with the wrong type is refused with 400 naming it.
 *
 * Choices (Flipt v1 does no validation here, §2.1):
 * - `flagKey` is required (absent: `invalid field flagKey: is required`); `""` is accepted, as
 *   Flipt accepts it (and answers that flag "" is not found).
 * - `entityId` absent = `""` (hashed as the empty string, as Flipt does).
 * - `namespaceKey` absent or `""` means `default`.
 * - `context` absent = `{}`; when present it is an object whose values are strings (Flipt's
 *   `map<string,string>`), else `invalid field context.<key>: must be a string`. A `null` value is
 *   the empty string: Flipt's gateway decodes bodies with the older protobuf JSON decoder, which
 *   reads `{"k": null}` as `k: ""` (protojson refuses it; Flipt went back to the older decoder in
 *   1.5.1 after users reported that 400 as a breaking change, flipt-io/flipt#664). The key stays
 *   (the legacy API echoes `requestContext: {"k": ""}`), and every operator reads it as it reads
 *   an absent key. Its size is bounded (limits.ts).
 * - `requestId`, `reference` optional strings. snake_case names are accepted everywhere.
 * - Batch: `requests` absent = `[]` (an empty batch). The batch-level `reference` applies to
 *   every item; items may repeat it, but naming a different one is refused (vexil evaluates a
 *   request against exactly one snapshot; Flipt v1 mixed references here, §2.11).
 */
import type { EvaluationRequest } from '../../model/evaluation-request.js';
import { field, invalidField, isPlainObject, optionalString } from '../../http/fields.js';
import { MAX_CONTEXT_KEYS, MAX_CONTEXT_KEY_BYTES, MAX_CONTEXT_VALUE_BYTES } from '../../http/limits.js';

export interface ParsedEvaluationRequest {
  readonly request: EvaluationRequest;
  readonly requestId?: string;
  readonly reference?: string;
}

export interface ParsedBatchRequest {
  readonly requests: readonly ParsedEvaluationRequest[];
  readonly requestId?: string;
  /** The one reference the batch reads (batch-level, or the one its items agree on). */
  readonly reference?: string;
}

/** `prefix` + `name` labels the field in messages (`requests[3].flagKey`). */
function requiredString(obj: Readonly<Record<string, unknown>>, name: string, prefix: string): string {
  const v = field(obj, name);
  if (typeof v === 'string') return v;
  throw invalidField(`${prefix}${name}`, v === undefined ? 'is required' : 'must be a string');
}

/**
 * Whether `s` takes more than `max` bytes in UTF-8. A UTF-16 code unit takes 1 to 3 bytes (a
 * surrogate pair, two units, takes 4), so the length alone decides for nearly every string and
 * only a long one with non-ASCII text is measured.
 */
function utf8BytesExceed(s: string, max: number): boolean {
  if (s.length * 3 <= max) return false;
  if (s.length > max) return true;
  return Buffer.byteLength(s, 'utf8') > max;
}

/** A too-long key as it is named in the message: its start, so the answer stays small. */
function keyLabel(key: string): string {
  let end = 64;
  const last = key.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // do not cut a surrogate pair in two
  return `${key.slice(0, end)}...`;
}

/**
 * The prototype of request contexts: empty, itself without a prototype, so a context lookup of
 * `constructor`, `toString` or `__proto__` reads as absent (and a key `__proto__` is an ordinary
 * member). Unlike Object.create(null) objects, which V8 keeps as dictionaries, objects made from
 * it keep fast properties: cheaper to fill on every request.
 */
const CONTEXT_PROTOTYPE = Object.create(null) as object;

/**
 * Text for a context value that is not a string, or undefined to leave the key out; throws to
 * refuse it (`label` names the value in messages: `context.plan`). `/evaluate/v1` passes none and
 * reads `null` as "" and refuses every other non-string (Flipt's map<string,string>); OFREP
 * accepts JSON scalars this way (and leaves a `null` out: ofrep/request.ts).
 */
export type ContextValueText = (value: unknown, label: string) => string | undefined;

function parseContext(obj: Readonly<Record<string, unknown>>, prefix: string): Record<string, string> {
  return readContext(field(obj, 'context'), prefix);
}

/**
 * An evaluation context from its JSON value (undefined = absent = `{}`), bounded by the context
 * limits (limits.ts); `prefix` + `context` names it in messages (`requests[3].context`). String
 * values are kept as they are; any other value goes through `nonString` when given, else `null`
 * is "" and the rest is refused. (Labels are built only for messages: this runs on every
 * evaluation request.)
 */
export function readContext(v: unknown, prefix: string, nonString?: ContextValueText): Record<string, string> {
  const context = Object.create(CONTEXT_PROTOTYPE) as Record<string, string>;
  if (v === undefined) return context;
  if (!isPlainObject(v)) throw invalidField(`${prefix}context`, 'must be an object of string values');
  let keys = 0;
  // JSON.parse makes plain objects: for-in sees exactly their own keys, in Object.entries' order.
  for (const key in v) {
    if (++keys > MAX_CONTEXT_KEYS) throw invalidField(`${prefix}context`, `must have at most ${MAX_CONTEXT_KEYS} keys`);
    if (utf8BytesExceed(key, MAX_CONTEXT_KEY_BYTES)) {
      throw invalidField(`${prefix}context.${keyLabel(key)}`, `key must be at most ${MAX_CONTEXT_KEY_BYTES} bytes`);
    }
    const raw = v[key];
    let value: string | undefined;
    if (typeof raw === 'string') value = raw;
    else if (nonString === undefined) {
      if (raw !== null) throw invalidField(`${prefix}context.${key}`, 'must be a string');
      value = '';
    }
    else if ((value = nonString(raw, `${prefix}context.${key}`)) === undefined) continue;
    if (utf8BytesExceed(value, MAX_CONTEXT_VALUE_BYTES)) {
      throw invalidField(`${prefix}context.${key}`, `must be at most ${MAX_CONTEXT_VALUE_BYTES} bytes`);
    }
    context[key] = value;
  }
  return context;
}

/**
 * @param prefix label prefix for messages of batch items (`requests[3].`).
 * @param pathNamespace the `{namespaceKey}` of `/evaluate/v1/namespaces/{namespaceKey}/variant`.
 */
export function parseEvaluationRequest(
  body: unknown,
  opts: { prefix?: string; pathNamespace?: string } = {},
): ParsedEvaluationRequest {
  const prefix = opts.prefix ?? '';
  if (!isPlainObject(body)) {
    throw invalidField(prefix === '' ? 'body' : prefix.replace(/\.$/, ''), 'must be an object');
  }
  let namespaceKey = optionalString(body, 'namespaceKey', prefix) ?? '';
  if (opts.pathNamespace !== undefined) {
    if (namespaceKey === '') namespaceKey = opts.pathNamespace;
    else if (namespaceKey !== opts.pathNamespace) {
      throw invalidField(`${prefix}namespaceKey`, `"${namespaceKey}" does not match the path's namespace "${opts.pathNamespace}"`);
    }
  }
  const flagKey = requiredString(body, 'flagKey', prefix);
  const entityId = optionalString(body, 'entityId', prefix) ?? '';
  const context = parseContext(body, prefix);
  const requestId = optionalString(body, 'requestId', prefix);
  const reference = optionalString(body, 'reference', prefix);
  const request: EvaluationRequest = { namespaceKey, flagKey, entityId, context };
  if (requestId === undefined && (reference === undefined || reference === '')) return { request };
  if (reference === undefined || reference === '') return { request, requestId: requestId! };
  return requestId === undefined ? { request, reference } : { request, requestId, reference };
}

export function parseBatchRequest(body: unknown): ParsedBatchRequest {
  if (!isPlainObject(body)) throw invalidField('body', 'must be an object');
  const raw = field(body, 'requests') ?? [];
  if (!Array.isArray(raw)) throw invalidField('requests', 'must be an array');
  const requestId = optionalString(body, 'requestId', '');
  const batchReference = optionalString(body, 'reference', '');
  const requests = raw.map((item, i) => parseEvaluationRequest(item, { prefix: `requests[${i}].` }));

  let reference = batchReference !== undefined && batchReference !== '' ? batchReference : undefined;
  for (const [i, item] of requests.entries()) {
    if (item.reference === undefined) continue;
    if (reference === undefined) reference = item.reference;
    else if (item.reference !== reference) {
      throw invalidField(
        `requests[${i}].reference`,
        `a batch reads one reference; "${item.reference}" differs from "${reference}"`,
      );
    }
  }
  return {
    requests,
    ...(requestId !== undefined ? { requestId } : {}),
    ...(reference !== undefined ? { reference } : {}),
  };
}
