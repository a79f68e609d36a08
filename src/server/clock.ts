/**
 * The wall-clock time as an RFC 3339 string, formatted at most once per millisecond: every
 * evaluation response and request log line carries one, and `Date#toISOString` showed in the
 * request profile. The text is exactly `new Date().toISOString()`.
 */
let lastMs = Number.NaN;
let lastText = '';

export function isoTimestamp(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastText = new Date(now).toISOString();
  }
  return lastText;
}
