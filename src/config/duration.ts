/**
 * Go-style durations (`300ms`, `30s`, `1m30s`, `1.5h`), the form Flipt's config uses, to milliseconds.
 *
 * Grammar (as Go's time.ParseDuration): an optional sign, then one or more `<number><unit>` parts,
 * where a number is `12`, `1.5`, `.5` or `1.`, and the unit is one of ns, us, µs, μs, ms, s, m, h.
 * The bare string `0` is allowed without a unit. Fractions below a nanosecond are truncated, as in Go.
 */

export class DurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

/** Examples shown in every "invalid duration" message. */
export const DURATION_EXAMPLES = 'e.g. 30s, 1m30s, 24h';

const NS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5 micro sign
  'μs': 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

// Go keeps durations in an int64 of nanoseconds; longer ones are an error there too.
const MAX_NS = 2n ** 63n - 1n;

const PART = /^(\d*)(?:\.(\d*))?([a-zµμ]+)/;

export interface ParseDurationOptions {
  /** Accept a leading `-` (default false: no config duration can be negative). */
  allowNegative?: boolean;
}

/** Parses a Go duration string into milliseconds (possibly fractional for sub-millisecond units). */
export function parseDuration(input: string, opts: ParseDurationOptions = {}): number {
  const ns = parseDurationNs(input, opts);
  return Number(ns) / 1e6;
}

/** Same as parseDuration, in exact nanoseconds. */
export function parseDurationNs(input: string, opts: ParseDurationOptions = {}): bigint {
  if (typeof input !== 'string') throw invalid(input);
  let s = input;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s.startsWith('-');
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw invalid(input);

  let total = 0n;
  while (s !== '') {
    const m = PART.exec(s);
    if (!m) throw invalid(input);
    const [whole, intDigits = '', fracDigits, unit = ''] = m;
    if (intDigits === '' && (fracDigits === undefined || fracDigits === '')) throw invalid(input);
    const perUnit = NS_PER_UNIT[unit];
    if (perUnit === undefined) {
      throw new DurationError(
        `invalid duration ${JSON.stringify(input)}: unknown unit "${unit}" (use ns, us, ms, s, m or h; ${DURATION_EXAMPLES})`,
      );
    }
    let part = BigInt(intDigits === '' ? '0' : intDigits) * perUnit;
    if (fracDigits) part += (BigInt(fracDigits) * perUnit) / 10n ** BigInt(fracDigits.length);
    total += part;
    if (total > MAX_NS) throw new DurationError(`invalid duration ${JSON.stringify(input)}: too long`);
    s = s.slice(whole.length);
  }
  if (negative && total !== 0n) {
    if (!opts.allowNegative) {
      throw new DurationError(`invalid duration ${JSON.stringify(input)}: must not be negative`);
    }
    return -total;
  }
  return total;
}

/** True when `input` is a duration parseDuration accepts with the same options. */
export function isDuration(input: unknown, opts: ParseDurationOptions = {}): boolean {
  if (typeof input !== 'string') return false;
  try {
    parseDurationNs(input, opts);
    return true;
  } catch {
    return false;
  }
}

function invalid(input: unknown): DurationError {
  return new DurationError(`invalid duration ${JSON.stringify(input)} (expected ${DURATION_EXAMPLES})`);
}
