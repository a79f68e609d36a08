/**
 * CONTRACT (to be implemented by the evaluation work): parsers with Go's exact semantics, shared by
 * evaluation (context values) and by validation (constraint values must parse).
 */

/** Go strconv.ParseFloat(s, 64): sign, exponents, hex floats, Inf/Infinity/NaN, `_` per Go literal rules, no spaces. NaN result → parse failure is signalled by `undefined`. */
export function parseGoFloat(s: string): number | undefined {
  void s;
  throw new Error('not implemented yet');
}

/** Go strconv.ParseBool: 1 t T TRUE true True 0 f F FALSE false False. */
export function parseGoBool(s: string): boolean | undefined {
  void s;
  throw new Error('not implemented yet');
}

/** An instant from RFC 3339 (fraction optional) or a date-only `YYYY-MM-DD` (midnight UTC). Comparable with compareInstant. */
export interface Instant {
  readonly seconds: number;
  readonly nanos: number;
}
export function parseGoTime(s: string): Instant | undefined {
  void s;
  throw new Error('not implemented yet');
}

/** A JSON array of strings (`'["a","b"]'`); undefined when not that. */
export function parseStringArray(s: string): string[] | undefined {
  void s;
  throw new Error('not implemented yet');
}

/** A JSON array of numbers (`"[1, 2.5]"`); undefined when not that. */
export function parseNumberArray(s: string): number[] | undefined {
  void s;
  throw new Error('not implemented yet');
}
