/**
 * JSON string literals for the request log line (request-log.ts): the same text as
 * `JSON.stringify(s)`, but a string that needs no escaping (a URL, a method, an address: almost
 * always) is only wrapped in quotes.
 */

/** Characters JSON.stringify escapes: quote, backslash, controls, and (lone) surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(s)` for a string. */
export function quote(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}
