/**
 * Parsers with Go's exact semantics, shared by evaluation (context values, per call) and by
 * validation (constraint values must parse). Flipt feeds context strings and constraint values
 * through Go's strconv.ParseFloat, strconv.ParseBool, time.Parse and encoding/json; whatever those
 * accept or refuse decides whether a constraint can match, so we accept and refuse the same inputs.
 */

// ---------------------------------------------------------------------------------------------
// strconv.ParseFloat(s, 64)
// ---------------------------------------------------------------------------------------------

/**
 * The common case, a plain decimal `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`
 * (ASCII digits, no underscores), is a syntax JS's Number() parses identically.
 *
 * A forward scan rather than a regex: context values are request input, and the regex this
 * replaces (`\d+\.?\d*`: two ways to split a run of digits) backtracked quadratically on a long
 * run of digits that then fails to match. Each character is looked at once.
 */
export function isPlainDecimal(s: string): boolean {
  const len = s.length;
  let i = 0;
  let c = s.charCodeAt(0); // NaN past the end, which is no digit, sign, dot or letter
  if (c === 43 /* + */ || c === 45 /* - */) c = s.charCodeAt(++i);
  // Mantissa: digits around at most one dot, at least one digit in all.
  let digits = 0;
  while (isDecDigit(c)) {
    digits++;
    c = s.charCodeAt(++i);
  }
  if (c === 46 /* . */) {
    c = s.charCodeAt(++i);
    while (isDecDigit(c)) {
      digits++;
      c = s.charCodeAt(++i);
    }
  }
  if (digits === 0) return false;
  if (c === 101 /* e */ || c === 69 /* E */) {
    c = s.charCodeAt(++i);
    if (c === 43 || c === 45) c = s.charCodeAt(++i);
    if (!isDecDigit(c)) return false;
    while (isDecDigit(c)) c = s.charCodeAt(++i);
  }
  return i === len;
}

/**
 * Go strconv.ParseFloat(s, 64). Returns undefined where Go returns an error:
 * - syntax errors (surrounding spaces included: Go never trims);
 * - out of range (ErrRange: a finite literal that rounds to ±Inf, e.g. `1e309`). Underflow to 0 is
 *   not an error in Go and returns 0 here too.
 *
 * Accepted, as in Go: optional sign; decimal mantissa with optional `.` and `e` exponent; hex
 * mantissa `0x…` which then REQUIRES a `p` exponent (`0x1p4` = 16, `0x10` is an error);
 * `inf`/`infinity` with optional sign and `nan` without sign, case-insensitive (so `NaN` returns
 * NaN: callers compare it the way Go does, where every comparison except `!=` is false).
 *
 * Underscores: Go's ParseFloat accepts `_` between digits for every base, not only after a base
 * prefix (its own test table accepts `1_23.50_0_0e+1_2` = 1.235e14). The rule is Go's literal rule:
 * an underscore must sit between two digits, or between the `0x` prefix and a digit; signs, `.`,
 * the exponent letter and the exponent sign are not digits.
 */
export function parseGoFloat(s: string): number | undefined {
  // The most common context value, an unsigned integer of up to 15 digits, is exact in a double
  // accumulated digit by digit (same value as Number(s) and Go); no regex, no Number() call.
  const len = s.length;
  if (len > 0 && len <= 15) {
    let n = 0;
    let i = 0;
    for (; i < len; i++) {
      const d = s.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
    }
    if (i === len) return n;
  }
  if (isPlainDecimal(s)) {
    const n = Number(s);
    return Number.isFinite(n) ? n : undefined;
  }
  return parseGoFloatSlow(s);
}

function parseGoFloatSlow(s: string): number | undefined {
  const len = s.length;
  if (len === 0) return undefined;

  // Specials. A sign may precede inf/infinity but not nan.
  const c0 = s.charCodeAt(0);
  const signed = c0 === 43 /* + */ || c0 === 45; /* - */
  const word = (signed ? s.slice(1) : s).toLowerCase();
  if (word === 'inf' || word === 'infinity') return c0 === 45 ? -Infinity : Infinity;
  if (!signed && word === 'nan') return NaN;

  let i = signed ? 1 : 0;
  const neg = c0 === 45;
  let hex = false;
  if (i + 2 < len && s.charCodeAt(i) === 48 /* 0 */ && (s.charCodeAt(i + 1) | 0x20) === 120 /* x */) {
    hex = true;
    i += 2;
  }

  let underscores = false;
  let sawDot = false;
  let sawDigits = false;
  let fracDigits = 0;
  let digits = '';
  for (; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c === 95 /* _ */) {
      underscores = true;
      continue;
    }
    if (c === 46 /* . */) {
      if (sawDot) break;
      sawDot = true;
      continue;
    }
    if (isDecDigit(c) || (hex && isHexLetter(c))) {
      sawDigits = true;
      if (hex) digits += s[i]; // only a hex mantissa is converted from its digits
      if (sawDot) fracDigits++;
      continue;
    }
    break;
  }
  if (!sawDigits) return undefined;

  let exp = 0;
  if (i < len && (s.charCodeAt(i) | 0x20) === (hex ? 112 /* p */ : 101) /* e */) {
    i++;
    if (i >= len) return undefined;
    let esign = 1;
    const sc = s.charCodeAt(i);
    if (sc === 43) i++;
    else if (sc === 45) {
      i++;
      esign = -1;
    }
    if (i >= len || !isDecDigit(s.charCodeAt(i))) return undefined;
    for (; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c === 95) {
        underscores = true;
        continue;
      }
      if (!isDecDigit(c)) break;
      // Like Go, stop accumulating once the exponent is far past any representable magnitude.
      if (exp < 100_000) exp = exp * 10 + (c - 48);
    }
    exp *= esign;
  } else if (hex) {
    return undefined; // a hex mantissa must carry a p exponent
  }
  if (i !== len) return undefined;
  if (underscores && !underscoresOK(s)) return undefined;

  if (!hex) {
    const n = Number(underscores ? s.replace(/_/g, '') : s);
    return Number.isFinite(n) ? n : undefined;
  }
  const v = hexToFloat64(digits, exp - 4 * fracDigits);
  if (v === undefined) return undefined;
  return neg ? -v : v;
}

function isDecDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
function isHexLetter(c: number): boolean {
  const l = c | 0x20;
  return l >= 97 && l <= 102;
}

/** Go's literal rule for `_`: only between digits, or between a base prefix and a digit. */
function underscoresOK(s: string): boolean {
  // last: 0 = start, 1 = digit or base prefix, 2 = underscore, 3 = anything else
  let last = 0;
  let i = 0;
  const c0 = s.charCodeAt(0);
  if (c0 === 43 || c0 === 45) i = 1;
  let hex = false;
  if (
    s.length - i >= 2 &&
    s.charCodeAt(i) === 48 &&
    ((s.charCodeAt(i + 1) | 0x20) === 120 || (s.charCodeAt(i + 1) | 0x20) === 98 || (s.charCodeAt(i + 1) | 0x20) === 111)
  ) {
    hex = (s.charCodeAt(i + 1) | 0x20) === 120;
    i += 2;
    last = 1;
  }
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isDecDigit(c) || (hex && isHexLetter(c))) {
      last = 1;
      continue;
    }
    if (c === 95) {
      if (last !== 1) return false;
      last = 2;
      continue;
    }
    if (last === 2) return false;
    last = 3;
  }
  return last !== 2;
}

/** mantissa (hex digits) × 2^binExp, correctly rounded (half to even) to float64; undefined on overflow. */
function hexToFloat64(hexDigits: string, binExp: number): number | undefined {
  let m = BigInt('0x' + hexDigits);
  if (m === 0n) return 0;
  const bitLen = m.toString(2).length;
  const top = bitLen - 1 + binExp; // exponent of the leading bit
  if (top > 1023) return undefined;
  // Bit weight of the last kept bit: 53 significant bits, but never below the subnormal quantum.
  const quantum = Math.max(top - 52, -1074);
  let e = binExp;
  const shift = quantum - binExp;
  if (shift > 0) {
    const sh = BigInt(shift);
    const rest = m & ((1n << sh) - 1n);
    const half = 1n << (sh - 1n);
    m >>= sh;
    if (rest > half || (rest === half && (m & 1n) === 1n)) m += 1n;
    e = quantum;
  }
  const v = ldexp(Number(m), e);
  return Number.isFinite(v) ? v : undefined;
}

/** x × 2^e in steps that stay exact while the final result is representable. */
function ldexp(x: number, e: number): number {
  while (e > 1023) {
    x *= 2 ** 1023;
    e -= 1023;
  }
  while (e < -1022) {
    x *= 2 ** -1022;
    e += 1022;
  }
  return x * 2 ** e;
}

// ---------------------------------------------------------------------------------------------
// strconv.ParseBool
// ---------------------------------------------------------------------------------------------

/** Go strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False; anything else undefined. */
export function parseGoBool(s: string): boolean | undefined {
  switch (s) {
    case '1':
    case 't':
    case 'T':
    case 'TRUE':
    case 'true':
    case 'True':
      return true;
    case '0':
    case 'f':
    case 'F':
    case 'FALSE':
    case 'false':
    case 'False':
      return false;
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// time.Parse(time.RFC3339, s), then time.Parse(time.DateOnly, s)
// ---------------------------------------------------------------------------------------------

/** An instant at nanosecond precision: whole seconds since the Unix epoch (may be negative) and 0..999,999,999 nanos. */
export interface Instant {
  readonly seconds: number;
  readonly nanos: number;
}

/** Negative, zero or positive as a is before, equal to, or after b (Go's Before / Equal / After). */
export function compareInstant(a: Instant, b: Instant): number {
  return a.seconds !== b.seconds ? a.seconds - b.seconds : a.nanos - b.nanos;
}

/**
 * What Flipt's tryParseDateTime accepts: `time.Parse(time.RFC3339, v)`, else `time.Parse("2006-01-02", v)`
 * (midnight UTC). time.Parse tries a strict RFC 3339 fast path and falls back to Go's general
 * layout parser, so the accepted set is the general parser's reading of the RFC 3339 layout:
 *   YYYY-MM-DD 'T' H[H]:MM:SS [('.'|',') digits+] ('Z' | ('+'|'-') HH ':' MM)
 * - year exactly 4 digits (0000-9999), month 01-12, day valid for the month (leap years proleptic);
 * - hour one or two digits (0-23), minutes and seconds exactly two (0-59; no leap second);
 * - any number of fraction digits, truncated (not rounded) to nanoseconds;
 * - `T` and `Z` upper case only; offsets up to +24:60 (Go range-checks `> 24` / `> 60`);
 * - nothing before or after (no spaces).
 */
export function parseGoTime(s: string): Instant | undefined {
  const len = s.length;
  if (len < 10) return undefined;
  const year = fixedDigits(s, 0, 4);
  const month = fixedDigits(s, 5, 2);
  const day = fixedDigits(s, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return undefined;
  if (day > daysIn(month, year)) return undefined;
  const days = daysFromCivil(year, month, day);
  if (len === 10) return { seconds: days * 86400, nanos: 0 };

  if (s.charCodeAt(10) !== 84 /* T */) return undefined;
  let i = 11;
  if (i >= len || !isDecDigit(s.charCodeAt(i))) return undefined;
  let hour = s.charCodeAt(i) - 48;
  i++;
  if (i < len && isDecDigit(s.charCodeAt(i))) {
    hour = hour * 10 + (s.charCodeAt(i) - 48);
    i++;
  }
  if (hour > 23 || s.charCodeAt(i) !== 58 /* : */) return undefined;
  const minute = fixedDigits(s, i + 1, 2);
  if (minute < 0 || minute > 59 || s.charCodeAt(i + 3) !== 58) return undefined;
  const second = fixedDigits(s, i + 4, 2);
  if (second < 0 || second > 59) return undefined;
  i += 6;

  let nanos = 0;
  const sep = s.charCodeAt(i);
  if ((sep === 46 || sep === 44) /* . , */ && i + 1 < len && isDecDigit(s.charCodeAt(i + 1))) {
    i++;
    let n = 0;
    for (; i < len && isDecDigit(s.charCodeAt(i)); i++) {
      if (n < 9) nanos = nanos * 10 + (s.charCodeAt(i) - 48);
      n++;
    }
    for (; n < 9; n++) nanos *= 10;
  }

  let offset = 0;
  if (i < len && s.charCodeAt(i) === 90 /* Z */) {
    i++;
  } else {
    if (len - i < 6) return undefined;
    const sign = s.charCodeAt(i);
    const oh = fixedDigits(s, i + 1, 2);
    const om = fixedDigits(s, i + 4, 2);
    if ((sign !== 43 && sign !== 45) || s.charCodeAt(i + 3) !== 58 || oh < 0 || om < 0 || oh > 24 || om > 60) return undefined;
    offset = (oh * 60 + om) * 60;
    if (sign === 45) offset = -offset;
    i += 6;
  }
  if (i !== len) return undefined;
  return { seconds: days * 86400 + hour * 3600 + minute * 60 + second - offset, nanos };
}

/** The value of exactly n ASCII digits at s[at..], or -1. */
function fixedDigits(s: string, at: number, n: number): number {
  if (at + n > s.length) return -1;
  let v = 0;
  for (let k = at; k < at + n; k++) {
    const c = s.charCodeAt(k);
    if (!isDecDigit(c)) return -1;
    v = v * 10 + (c - 48);
  }
  return v;
}

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (no two-digit-year mapping, unlike Date.UTC). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

// ---------------------------------------------------------------------------------------------
// encoding/json into []string / []float64
// ---------------------------------------------------------------------------------------------

/**
 * `json.Unmarshal(s, &[]string{})` without error → its result; error → undefined.
 * Go-exact corners: top-level `null` is not an error and yields an empty list (so `isnotoneof`
 * matches every non-empty value); a `null` element becomes "" (Go leaves the zero value). Any
 * other non-string element, or anything but an array, is an error.
 */
export function parseStringArray(s: string): string[] | undefined {
  const v = parseJson(s);
  if (v === null) return [];
  if (!Array.isArray(v)) return undefined;
  const out: string[] = new Array<string>(v.length);
  for (let i = 0; i < v.length; i++) {
    const e: unknown = v[i];
    if (typeof e === 'string') out[i] = e;
    else if (e === null) out[i] = '';
    else return undefined;
  }
  return out;
}

/**
 * `json.Unmarshal(s, &[]float64{})` without error → its result; error → undefined.
 * As in Go: top-level `null` → empty list, `null` element → 0, a number out of float64 range
 * (`1e400`) is an error, and JSON number syntax is strict (no `+1`, `01`, `.5`, hex, NaN).
 */
export function parseNumberArray(s: string): number[] | undefined {
  const v = parseJson(s);
  if (v === null) return [];
  if (!Array.isArray(v)) return undefined;
  const out: number[] = new Array<number>(v.length);
  for (let i = 0; i < v.length; i++) {
    const e: unknown = v[i];
    if (typeof e === 'number' && Number.isFinite(e)) out[i] = e;
    else if (e === null) out[i] = 0;
    else return undefined;
  }
  return out;
}

const NOT_JSON = Symbol('not json');
function parseJson(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return NOT_JSON;
  }
}
