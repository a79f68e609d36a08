/**
 * JSON text written by hand on the per-request paths: string literals for the request log line
 * (server/pipeline/request-log.ts) and the evaluation responses (server/evaluation/evaluation-json.ts).
 * Each function returns exactly what `JSON.stringify` returns for the same value; a string that
 * needs no escaping (a URL, a method, an address, a key: almost always) is only wrapped in quotes.
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

/** Below this, `n / 10 ** places` of an integer `n` has at most 15 significant digits. */
const EXACT_DECIMAL_LIMIT = 1e15;
const POWERS_OF_TEN = [1, 10, 100, 1e3, 1e4, 1e5, 1e6] as const;

/**
 * `jsonNumber(n / 10 ** places)` for an integer `n` (durations: nanoseconds shown as
 * milliseconds), built from the integer's digits. For 0 <= n < 1e15 and places <= 6 the quotient
 * is the double nearest the decimal n·10^-places, which has at most 15 significant digits, so that
 * decimal (trailing zeros dropped) is also the shortest text that reads back as the double: exactly
 * what `String` prints, in plain notation since the value is 0 or at least 1e-6. Other inputs take
 * the general road. About half the cost of printing the double (measured: 55 vs 120 ns).
 */
export function decimalText(n: number, places: number): string {
  const scale = POWERS_OF_TEN[places];
  if (scale === undefined || !Number.isInteger(n) || n < 0 || n >= EXACT_DECIMAL_LIMIT) return jsonNumber(n / 10 ** places);
  const whole = Math.floor(n / scale);
  const frac = n - whole * scale;
  if (frac === 0) return String(whole);
  // frac + scale prints as "1" and then the fraction's `places` digits, zero-padded.
  const digits = String(frac + scale);
  let end = digits.length;
  while (digits.charCodeAt(end - 1) === 48 /* 0 */) end--;
  return `${whole}.${digits.slice(1, end)}`;
}

/** `JSON.stringify(list)` for an array of strings. */
export function jsonStrings(list: readonly string[]): string {
  if (list.length === 0) return '[]';
  let out = `[${quote(list[0]!)}`;
  for (let i = 1; i < list.length; i++) out += `,${quote(list[i]!)}`;
  return `${out}]`;
}
