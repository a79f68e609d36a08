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
  return encode(value, 0, { nodes: 0 });
}

const ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

function encodeString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => ESCAPES[c]);
}

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
      if (Array.isArray(v)) return `[${v.map((x) => encode(x, depth + 1, budget)).join(',')}]`;
      const keys = Object.keys(v).sort(compareCodePoints);
      const rec = v as Record<string, unknown>;
      return `{${keys.map((k) => `${encodeString(k)}:${encode(rec[k], depth + 1, budget)}`).join(',')}}`;
    }
    default:
      throw new AttachmentError(`a ${typeof v} cannot be represented in JSON`);
  }
}
