/**
 * JSON text written by hand on the per-request paths: string literals for the request log line
 * (request-log.ts) and the evaluation responses (routes/evaluation.ts). Each function returns
 * exactly what `JSON.stringify` returns for the same value; a string that needs no escaping (a
 * URL, a method, an address, a key: almost always) is only wrapped in quotes.
 */

/** Characters JSON.stringify escapes: quote, backslash, controls, and (lone) surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(s)` for a string. */
export function quote(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** `JSON.stringify(n)` for a number: its shortest round-trip text, `null` when not finite. */
export function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/** `JSON.stringify(list)` for an array of strings. */
export function jsonStrings(list: readonly string[]): string {
  if (list.length === 0) return '[]';
  let out = `[${quote(list[0]!)}`;
  for (let i = 1; i < list.length; i++) out += `,${quote(list[i]!)}`;
  return `${out}]`;
}
