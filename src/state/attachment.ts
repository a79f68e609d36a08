/**
 * A variant attachment as Flipt returns it: the value re-encoded as compact JSON the way Go's
 * encoding/json does it: object keys sorted by bytes, no spaces, `<` `>` `&` U+2028 U+2029 escaped
 * as \u003c \u003e \u0026 \u2028 \u2029, and `"null"` for a variant without attachment.
 * JavaScript's number formatting already matches Go's for float64 (1 for 1.0, 1e+21, 1e-7).
 */
import { compareCodePoints } from './order.js';

/** Attachments nested deeper than this are refused rather than risking the stack. */
export const MAX_ATTACHMENT_DEPTH = 256;
/**
 * Values (nodes) per attachment. YAML aliases share one parsed object, so a few lines of
 * `&a [*b, *b, ...]` can stand for billions of values once written out: refuse, don't hang.
 */
export const MAX_ATTACHMENT_NODES = 100_000;

export class AttachmentError extends Error {}

export function serializeAttachment(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value !== 'object') return encode(value, 0, { nodes: 0 });
  // Fast path: check the value, collect its object keys, then let JSON.stringify write it in one
  // native pass, keys ordered by an allowlist of every key sorted Go's way (JSON.stringify writes
  // each object's properties in allowlist order, at every depth). A flat string, no intermediate
  // pieces: this runs for every variant of the state.
  const scan: Scan = { nodes: 0, objects: 0, keys: [], surrogates: false, slow: false };
  check(value, 0, scan);
  if (scan.slow || scan.objects * scan.keys.length > MAX_ALLOWLIST_WORK) return encode(value, 0, { nodes: 0 });
  const keys = scan.surrogates ? scan.keys.sort(compareCodePoints) : scan.keys.sort();
  const json = JSON.stringify(value, keys);
  // <, >, &, U+2028 and U+2029 can only occur inside string literals of JSON text.
  return GO_ESCAPED.test(json) ? json.replace(GO_ESCAPED_ALL, (c) => ESCAPES[c]) : json;
}

/** The plain encoder alone (the reference the fast path is tested against). */
export function serializeAttachmentPlain(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  return encode(value, 0, { nodes: 0 });
}

interface Scan {
  nodes: number;
  objects: number;
  /** Distinct object keys, at every depth. */
  keys: string[];
  surrogates: boolean;
  /** Use the plain encoder: too many distinct keys, or `__proto__` (which JSON.stringify would read from every object's prototype). */
  slow: boolean;
}

/** More distinct keys than this: the allowlist scan per object gets slow; use the plain encoder. */
const MAX_KEYS = 64;
/** JSON.stringify looks every allowlisted key up in every object: bound objects × keys. */
const MAX_ALLOWLIST_WORK = 100_000;

/** The same refusals as `encode`, without writing anything. */
function check(v: unknown, depth: number, scan: Scan): void {
  if (depth > MAX_ATTACHMENT_DEPTH) throw new AttachmentError(`nested deeper than ${MAX_ATTACHMENT_DEPTH} levels`);
  if (++scan.nodes > MAX_ATTACHMENT_NODES) throw new AttachmentError(`more than ${MAX_ATTACHMENT_NODES} values (aliases expanded)`);
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(v)) throw new AttachmentError(`${String(v)} cannot be represented in JSON`);
      return;
    case 'object': {
      if (v === null) return;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) check(v[i], depth + 1, scan);
        return;
      }
      scan.objects++;
      const rec = v as Record<string, unknown>;
      for (const k of Object.keys(rec)) {
        if (!scan.slow && !scan.keys.includes(k)) {
          if (scan.keys.length === MAX_KEYS || k === '__proto__') scan.slow = true;
          else {
            scan.keys.push(k);
            if (!scan.surrogates && hasSurrogate(k)) scan.surrogates = true;
          }
        }
        check(rec[k], depth + 1, scan);
      }
      return;
    }
    default:
      throw new AttachmentError(`a ${typeof v} cannot be represented in JSON`);
  }
}

function hasSurrogate(k: string): boolean {
  for (let i = 0; i < k.length; i++) {
    const c = k.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) return true;
  }
  return false;
}

const ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};
const GO_ESCAPED = /[<>&\u2028\u2029]/;
const GO_ESCAPED_ALL = /[<>&\u2028\u2029]/g;

function encodeString(s: string): string {
  const json = JSON.stringify(s);
  // Most strings have none of Go's extra escapes: skip the replace (and its callback) for them.
  return GO_ESCAPED.test(s) ? json.replace(GO_ESCAPED_ALL, (c) => ESCAPES[c]) : json;
}

/** Go sorts map keys by UTF-8 bytes; without surrogates that is the UTF-16 order of the default sort. */
function sortKeys(keys: string[]): string[] {
  return keys.some(hasSurrogate) ? keys.sort(compareCodePoints) : keys.sort();
}

/** The plain encoder: scalars, and values with too many distinct keys for the fast path. */
function encode(v: unknown, depth: number, budget: { nodes: number }): string {
  if (depth > MAX_ATTACHMENT_DEPTH) throw new AttachmentError(`nested deeper than ${MAX_ATTACHMENT_DEPTH} levels`);
  if (++budget.nodes > MAX_ATTACHMENT_NODES) throw new AttachmentError(`more than ${MAX_ATTACHMENT_NODES} values (aliases expanded)`);
  switch (typeof v) {
    case 'string':
      return encodeString(v);
    case 'number':
      if (!Number.isFinite(v)) throw new AttachmentError(`${String(v)} cannot be represented in JSON`);
      return String(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (v === null) return 'null';
      if (Array.isArray(v)) {
        let out = '[';
        for (let i = 0; i < v.length; i++) out += (i === 0 ? '' : ',') + encode(v[i], depth + 1, budget);
        return out + ']';
      }
      const keys = sortKeys(Object.keys(v));
      const rec = v as Record<string, unknown>;
      let out = '{';
      for (let i = 0; i < keys.length; i++) out += (i === 0 ? '' : ',') + encodeString(keys[i]) + ':' + encode(rec[keys[i]], depth + 1, budget);
      return out + '}';
    }
    default:
      throw new AttachmentError(`a ${typeof v} cannot be represented in JSON`);
  }
}
