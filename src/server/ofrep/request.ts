/**
 * OFREP request bodies (`{"context": {...}}`) as evaluator input.
 *
 * OpenFeature contexts are typed: providers send numbers and booleans as JSON numbers and
 * booleans (a Date as its ISO string). Flipt's OFREP endpoint types the context
 * `map<string,string>` and refuses them; vexil turns each scalar into the text a Flipt constraint
 * reads it from, so a number constraint compares the number and a boolean constraint the boolean:
 *
 * - a number → its shortest round-trip decimal (JavaScript's `String(n)`: `3`, `0.1`, `1e+21`,
 *   `-0` → `0`), which Go's strconv.ParseFloat (values.ts parseGoFloat) reads back as exactly the
 *   same float64; so `eq`, `lt`, `isoneof` ... compare the number the client sent. (A JSON
 *   number is a float64 on both sides: `12345678901234567890` is already `12345678901234567000`
 *   when parsed; string constraints see this text.)
 * - `true` / `false` → `"true"` / `"false"` (Go's strconv.ParseBool reads both);
 * - `null` → the key is left out: Flipt reads a missing key as "" and so does every operator
 *   (`notpresent` matches), exactly as if the client had not sent it; so it evaluates as a `null`
 *   value on `/evaluate/v1`, which is "" there (validate-request.ts; OFREP answers echo no
 *   context, so the key's absence shows nowhere);
 * - an object or an array → 400 INVALID_CONTEXT naming the key: no constraint can read one, and
 *   silently dropping it would evaluate a different context than the caller meant.
 *
 * `targetingKey` is the entity id (and stays in the context, as in Flipt); absent, the entity id
 * is "" (as an absent `entityId` on `/evaluate/v1`), where Flipt draws a random one per request,
 * so every answer is reproducible. The context obeys the limits of `/evaluate/v1` (limits.ts).
 *
 * Bulk requests may name their flags in `context.flags`, as Flipt's OFREP does: a comma-separated
 * string (Flipt's form; each key trimmed) or a JSON array of strings (the form Flipt's docs show).
 * Empty keys are dropped and a repeated key is answered once (at most MAX_BULK_FLAGS keys, limits.ts);
 * `flags` is a request option and not part of the evaluated context.
 */
import { field, invalidField, isPlainObject } from '../../http/fields.js';
import { asJsonObject } from '../../http/body.js';
import { MAX_BULK_FLAGS } from '../../http/limits.js';
import { readContext } from '../evaluation/validate-request.js';

export const TARGETING_KEY = 'targetingKey';
const FLAGS = 'flags';

export interface OfrepRequest {
  readonly entityId: string;
  readonly context: Readonly<Record<string, string>>;
}

export interface OfrepBulkRequest extends OfrepRequest {
  /** The flags asked for, in order; undefined = the namespace's default set (ofrep/bulk.ts). */
  readonly flags: readonly string[] | undefined;
}

/** The text a Flipt constraint reads a JSON scalar from (see above); undefined = leave the key out. */
export function scalarText(value: unknown, label: string): string | undefined {
  switch (typeof value) {
    case 'number':
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      if (value === null || value === undefined) return undefined;
      throw invalidField(label, 'must be a string, number, boolean or null');
  }
}

function contextValue(body: unknown): unknown {
  const context = field(asJsonObject(body), 'context');
  if (context !== undefined && !isPlainObject(context)) throw invalidField('context', 'must be an object');
  return context;
}

function withEntity(context: Record<string, string>): OfrepRequest {
  return { entityId: context[TARGETING_KEY] ?? '', context };
}

/** A single-flag evaluation body. */
export function parseOfrepRequest(body: unknown): OfrepRequest {
  return withEntity(readContext(contextValue(body), '', scalarText));
}

/** A bulk evaluation body: the context without `flags`, and the flags it names. */
export function parseOfrepBulkRequest(body: unknown): OfrepBulkRequest {
  const raw = contextValue(body);
  let flags: string[] | undefined;
  let rest = raw;
  if (isPlainObject(raw) && Object.hasOwn(raw, FLAGS)) {
    flags = flagList(raw[FLAGS]);
    const { [FLAGS]: _flags, ...others } = raw;
    rest = others;
  }
  return { ...withEntity(readContext(rest, '', scalarText)), flags };
}

function flagList(value: unknown): string[] | undefined {
  if (value === null) return undefined; // null reads as absent, as everywhere in request bodies
  if (typeof value !== 'string' && !Array.isArray(value)) {
    throw invalidField(`context.${FLAGS}`, 'must be a comma-separated string or an array of strings');
  }
  const keys: unknown[] = typeof value === 'string' ? value.split(',') : value;
  const out = new Set<string>();
  for (const [i, key] of keys.entries()) {
    if (typeof key !== 'string') throw invalidField(`context.${FLAGS}[${i}]`, 'must be a string');
    const trimmed = key.trim();
    if (trimmed === '') continue;
    out.add(trimmed);
    if (out.size > MAX_BULK_FLAGS) throw invalidField(`context.${FLAGS}`, `must name at most ${MAX_BULK_FLAGS} flags`);
  }
  return [...out];
}
