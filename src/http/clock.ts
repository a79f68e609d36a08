/**
 * The clocks of the request path.
 *
 * Request timing: a request notes `monotonicMs()` when it arrives and later asks for the whole
 * nanoseconds since. performance.now() reads the same monotonic clock as process.hrtime, as a
 * number, so no BigInt is made and converted twice per request.
 */
export function monotonicMs(): number {
  return performance.now();
}

/** Whole nanoseconds since `startMs` (a monotonicMs() reading). */
export function nanosSince(startMs: number): number {
  return Math.round((performance.now() - startMs) * 1e6);
}

let lastMs = Number.NaN;
let lastText = '';

/**
 * The wall-clock time as an RFC 3339 string, formatted at most once per millisecond: every
 * evaluation response and request log line carries one, and `Date#toISOString` showed in the
 * request profile. The text is exactly `new Date().toISOString()`.
 */
export function isoTimestamp(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastText = new Date(now).toISOString();
  }
  return lastText;
}
