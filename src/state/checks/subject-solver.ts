/**
 * Whether some value of ONE subject (one context property, or the entity id) satisfies ALL of a
 * list of compiled constraints on it, decided from the evaluator's own semantics: every witness is
 * tried with `matchConstraint` itself, and "never" is answered only where the candidate values
 * tried are provably complete (or a listed proof rule applies), so it is never a guess:
 *
 * - a constraint that compiles to "never matches" (`le`, an empty `isoneof`...) decides alone;
 * - `eq`/`isoneof` on strings: only the listed strings can match, so they are the candidates;
 * - `neq`/`isnotoneof`/`empty`/`notempty` only: a value behaves like one of "", a fresh blank, a
 *   fresh non-blank value or a listed string;
 * - numbers: the parsed float64 is all that matters; ranges are intersected exactly (next float
 *   up/down), NaN and infinities included, excluded points counted;
 * - date-times: the same over whole nanoseconds;
 * - booleans: "true", "false", blank and non-boolean values cover every case;
 * - `prefix`/`suffix`/`contains`/`notcontains`: proof rules only (two prefixes neither of which
 *   extends the other, a prefix starting with white space, `notcontains` of a required part...).
 * A subset of the constraints that is unsatisfiable makes the whole list unsatisfiable; mixtures
 * of kinds with no such subset get "unknown" unless a witness satisfies them all.
 *
 * Bounds: work is linear in the constraints and the values they list (plus one candidate per
 * excluded value); pure, no I/O.
 */
import type { CompiledConstraint } from '../../model/compiled.js';
import { isGoSpace, matchConstraint } from '../../evaluation/constraints.js';
import {
  OP_BLANK,
  OP_BOOL_FALSE,
  OP_BOOL_TRUE,
  OP_NEVER,
  OP_NOT_BLANK,
  OP_NUM_EQ,
  OP_NUM_GT,
  OP_NUM_GTE,
  OP_NUM_LT,
  OP_NUM_LTE,
  OP_NUM_NEQ,
  OP_NUM_NOTONEOF,
  OP_NUM_ONEOF,
  OP_STR_CONTAINS,
  OP_STR_EQ,
  OP_STR_NEQ,
  OP_STR_NOTCONTAINS,
  OP_STR_NOTONEOF,
  OP_STR_ONEOF,
  OP_STR_PREFIX,
  OP_STR_SUFFIX,
  OP_TIME_EQ,
  OP_TIME_GT,
  OP_TIME_GTE,
  OP_TIME_LT,
  OP_TIME_LTE,
  OP_TIME_NEQ,
} from '../../evaluation/opcodes.js';
import { parseGoFloat, parseGoTime } from '../../evaluation/values.js';

export type SubjectVerdict =
  /** No value satisfies them all; `because` = indices (into the input) of an unsatisfiable subset. */
  | { readonly verdict: 'never'; readonly because: readonly number[] }
  /** `witness` satisfies them all (as the context value, or the entity id). */
  | { readonly verdict: 'sometimes'; readonly witness: string }
  | { readonly verdict: 'unknown' };

type Kind = 'blank' | 'strset' | 'strneg' | 'substr' | 'num' | 'bool' | 'time' | 'never';

function kindOf(op: number): Kind {
  if (op === OP_NEVER) return 'never';
  if (op === OP_BLANK || op === OP_NOT_BLANK) return 'blank';
  if (op === OP_STR_EQ || op === OP_STR_ONEOF) return 'strset';
  if (op === OP_STR_NEQ || op === OP_STR_NOTONEOF) return 'strneg';
  if (op >= OP_STR_PREFIX && op <= OP_STR_NOTCONTAINS) return 'substr';
  if (op >= OP_NUM_EQ && op <= OP_NUM_NOTONEOF) return 'num';
  if (op === OP_BOOL_TRUE || op === OP_BOOL_FALSE) return 'bool';
  return 'time';
}

/** The entity id stands for the value; the property is the caller's business. */
const NO_CONTEXT: Record<string, string> = {};

function satisfiesAll(cs: readonly CompiledConstraint[], idx: readonly number[], v: string): boolean {
  for (const i of idx) {
    const c = cs[i];
    const ok = c.entity ? matchConstraint(c, v, NO_CONTEXT) : matchConstraint(c, '', { [c.property]: v });
    if (!ok) return false;
  }
  return true;
}

/** Decides `constraints` (all on one subject) together. */
export function solveSubject(constraints: readonly CompiledConstraint[]): SubjectVerdict {
  const all = constraints.map((_, i) => i);
  const byKind = new Map<Kind, number[]>();
  for (const i of all) {
    const k = kindOf(constraints[i].op);
    if (k === 'never') return { verdict: 'never', because: [i] };
    let list = byKind.get(k);
    if (list === undefined) byKind.set(k, (list = []));
    list.push(i);
  }
  const blank = byKind.get('blank') ?? [];
  const candidates: string[] = [];
  const tryAll = (values: readonly string[]): string | undefined => {
    for (const v of values) if (satisfiesAll(constraints, all, v)) return v;
    return undefined;
  };

  // A finite set of strings: exact.
  const strset = byKind.get('strset');
  if (strset !== undefined) {
    const c = constraints[strset[0]];
    const values = c.op === OP_STR_EQ ? [c.str] : [...c.strings!];
    const w = tryAll(values);
    return w !== undefined ? { verdict: 'sometimes', witness: w } : { verdict: 'never', because: all };
  }

  const groups: Array<{ idx: number[]; exact: (idx: number[]) => GroupResult }> = [];
  const kinds = [...byKind.keys()].filter((k) => k !== 'blank');
  if (kinds.length === 0) groups.push({ idx: blank, exact: () => ({ never: false, candidates: ['', ' ', 'x'] }) });
  for (const k of kinds) {
    const idx = [...blank, ...byKind.get(k)!].sort((a, b) => a - b);
    if (k === 'strneg') groups.push({ idx, exact: (ix) => ({ never: false, candidates: strnegCandidates(constraints, ix) }) });
    else if (k === 'num') groups.push({ idx, exact: (ix) => numberGroup(constraints, ix) });
    else if (k === 'time') groups.push({ idx, exact: (ix) => timeGroup(constraints, ix) });
    else if (k === 'bool') groups.push({ idx, exact: () => ({ never: false, candidates: ['true', 'false', '', ' ', 'x'] }) });
    else if (k === 'substr') groups.push({ idx, exact: (ix) => substrGroup(constraints, ix) });
  }
  for (const g of groups) {
    const r = g.exact(g.idx);
    if (r.never) return { verdict: 'never', because: g.idx };
    // A complete candidate list that fails its own group proves that group unsatisfiable.
    const complete = r.partial !== true;
    let ownWitness = false;
    for (const v of r.candidates) {
      if (satisfiesAll(constraints, g.idx, v)) {
        ownWitness = true;
        break;
      }
    }
    if (!ownWitness && complete && g.idx.length > 0) return { verdict: 'never', because: g.idx };
    candidates.push(...r.candidates);
  }
  const w = tryAll(candidates);
  if (w !== undefined) return { verdict: 'sometimes', witness: w };
  return { verdict: 'unknown' };
}

interface GroupResult {
  readonly never: boolean;
  readonly candidates: string[];
  /** The candidates are not known to be complete (a failing list proves nothing). */
  readonly partial?: boolean;
}


/** neq/isnotoneof with blank ops: "", a blank and a non-blank value no constraint names, and the named ones. */
function strnegCandidates(cs: readonly CompiledConstraint[], idx: readonly number[]): string[] {
  const named: string[] = [];
  let longest = 0;
  for (const i of idx) {
    const c = cs[i];
    if (c.op === OP_STR_NEQ) named.push(c.str);
    else if (c.op === OP_STR_NOTONEOF) named.push(...c.strings!);
  }
  for (const s of named) longest = Math.max(longest, s.length);
  return ['', ' '.repeat(longest + 1), 'x'.repeat(longest + 1), ...named];
}

// ----- numbers ---------------------------------------------------------------------------------------

const bits = new DataView(new ArrayBuffer(8));

/** The next float64 above x (−0 and +0 are one value here, as for `<`). */
function nextUp(x: number): number {
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x === 0) return Number.MIN_VALUE;
  bits.setFloat64(0, x);
  const b = bits.getBigUint64(0);
  bits.setBigUint64(0, x > 0 ? b + 1n : b - 1n);
  return bits.getFloat64(0);
}

function nextDown(x: number): number {
  return -nextUp(-x);
}

/** A text Go's ParseFloat reads back as exactly `n`, or undefined. */
function numberText(n: number): string | undefined {
  const s = Number.isNaN(n) ? 'NaN' : n === Infinity ? '+Inf' : n === -Infinity ? '-Inf' : String(n);
  const back = parseGoFloat(s);
  if (back === undefined) return undefined;
  return Object.is(back, n) || back === n || (Number.isNaN(back) && Number.isNaN(n)) ? s : undefined;
}

function numberGroup(cs: readonly CompiledConstraint[], idx: readonly number[]): GroupResult {
  let lo = -Infinity;
  let hi = Infinity;
  let finite: number[] | undefined;
  const excluded: number[] = [];
  let needsNumber = false;
  for (const i of idx) {
    const c = cs[i];
    const op = c.op;
    if (op === OP_BLANK || op === OP_NOT_BLANK) continue;
    needsNumber = true;
    if (op === OP_NUM_EQ || op === OP_NUM_ONEOF) {
      const values = op === OP_NUM_EQ ? [c.num] : [...c.numbers!];
      finite ??= values;
    } else if (op === OP_NUM_NEQ) excluded.push(c.num);
    else if (op === OP_NUM_NOTONEOF) excluded.push(...c.numbers!);
    else if (Number.isNaN(c.num)) return { never: true, candidates: [] }; // every comparison with NaN is false
    else if (op === OP_NUM_GT) lo = Math.max(lo, nextUp(c.num));
    else if (op === OP_NUM_GTE) lo = Math.max(lo, c.num);
    else if (op === OP_NUM_LT) hi = Math.min(hi, nextDown(c.num));
    else if (op === OP_NUM_LTE) hi = Math.min(hi, c.num);
  }
  if (!needsNumber) return { never: false, candidates: ['', ' ', 'x'] };
  let partial = false;
  const texts: string[] = [];
  const add = (n: number) => {
    const s = numberText(n);
    if (s === undefined) partial = true;
    else texts.push(s);
  };
  if (finite !== undefined) {
    for (const n of finite) add(n);
    return { never: false, candidates: texts, partial };
  }
  add(NaN); // satisfies neq and isnotoneof only: tried like any other value
  if (lo <= hi) {
    // One more value than there are excluded ones: if all of them are excluded, the range is too.
    let x = lo;
    for (let k = 0; k <= excluded.length && x <= hi; k++) {
      add(x);
      if (x === hi) break;
      x = nextUp(x);
    }
  }
  return { never: false, candidates: texts, partial };
}

// ----- date-times -------------------------------------------------------------------------------------

const NS = 1_000_000_000n;
/** 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999Z: the instants written here in UTC. */
const UTC_MIN = -62167219200n * NS;
const UTC_MAX = 253402300799n * NS + (NS - 1n);

function instantNs(c: CompiledConstraint): bigint {
  return BigInt(c.sec) * NS + BigInt(c.nsec);
}

/** RFC 3339 in UTC with nine fraction digits, read back exactly by parseGoTime; undefined outside 0000..9999. */
export function timeText(ns: bigint): string | undefined {
  if (ns < UTC_MIN || ns > UTC_MAX) return undefined;
  let sec = ns / NS;
  let frac = ns % NS;
  if (frac < 0n) {
    frac += NS;
    sec -= 1n;
  }
  const iso = new Date(Number(sec) * 1000).toISOString();
  if (!/^\d{4}-/.test(iso)) return undefined;
  const s = `${iso.slice(0, 19)}.${frac.toString().padStart(9, '0')}Z`;
  const back = parseGoTime(s);
  return back !== undefined && BigInt(back.seconds) * NS + BigInt(back.nanos) === ns ? s : undefined;
}

function timeGroup(cs: readonly CompiledConstraint[], idx: readonly number[]): GroupResult {
  let lo: bigint | undefined;
  let hi: bigint | undefined;
  let finite: bigint | undefined;
  const excluded = new Set<bigint>();
  let needsTime = false;
  for (const i of idx) {
    const c = cs[i];
    const op = c.op;
    if (op === OP_BLANK || op === OP_NOT_BLANK) continue;
    needsTime = true;
    const t = instantNs(c);
    if (op === OP_TIME_EQ) finite ??= t;
    else if (op === OP_TIME_NEQ) excluded.add(t);
    else if (op === OP_TIME_GT) lo = lo === undefined || t + 1n > lo ? t + 1n : lo;
    else if (op === OP_TIME_GTE) lo = lo === undefined || t > lo ? t : lo;
    else if (op === OP_TIME_LT) hi = hi === undefined || t - 1n < hi ? t - 1n : hi;
    else if (op === OP_TIME_LTE) hi = hi === undefined || t < hi ? t : hi;
  }
  if (!needsTime) return { never: false, candidates: ['', ' ', 'x'] };
  if (finite !== undefined) {
    const s = timeText(finite);
    return s === undefined ? { never: false, candidates: [], partial: true } : { never: false, candidates: [s] };
  }
  if (lo !== undefined && hi !== undefined) {
    if (lo > hi) return { never: true, candidates: [] };
    if (hi - lo + 1n <= BigInt(excluded.size)) {
      let free = false;
      for (let t = lo; t <= hi && !free; t++) free = !excluded.has(t);
      if (!free) return { never: true, candidates: [] };
    }
  }
  // Witnesses from the low end (or the high end when only that is bounded), inside what UTC text can say.
  const texts: string[] = [];
  let start = lo ?? (hi !== undefined ? hi - BigInt(excluded.size) : 0n);
  if (start < UTC_MIN) start = UTC_MIN;
  for (let k = 0, t = start; k <= excluded.size; k++, t++) {
    if (hi !== undefined && t > hi) break;
    const s = timeText(t);
    if (s !== undefined) texts.push(s);
  }
  // Ordering decided "never" above; a failing list here only means no UTC text was found.
  return { never: false, candidates: texts, partial: true };
}

// ----- prefix, suffix, contains ----------------------------------------------------------------------

function hasNonSpace(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isGoSpace(s.charCodeAt(i))) return true;
  return false;
}

function substrGroup(cs: readonly CompiledConstraint[], idx: readonly number[]): GroupResult {
  const prefixes: string[] = [];
  const suffixes: string[] = [];
  const parts: string[] = [];
  const forbidden: string[] = [];
  let blank = false;
  for (const i of idx) {
    const c = cs[i];
    if (c.op === OP_BLANK) blank = true;
    else if (c.op === OP_STR_PREFIX) prefixes.push(c.str);
    else if (c.op === OP_STR_SUFFIX) suffixes.push(c.str);
    else if (c.op === OP_STR_CONTAINS) parts.push(c.str);
    else if (c.op === OP_STR_NOTCONTAINS) forbidden.push(c.str);
  }
  const never: GroupResult = { never: true, candidates: [] };
  // The value is trimmed first: it neither starts nor ends with white space.
  for (const p of prefixes) if (p.length > 0 && isGoSpace(p.charCodeAt(0))) return never;
  for (const s of suffixes) if (s.length > 0 && isGoSpace(s.charCodeAt(s.length - 1))) return never;
  const longestPrefix = prefixes.reduce((a, b) => (b.length > a.length ? b : a), '');
  const longestSuffix = suffixes.reduce((a, b) => (b.length > a.length ? b : a), '');
  for (const p of prefixes) if (!longestPrefix.startsWith(p)) return never;
  for (const s of suffixes) if (!longestSuffix.endsWith(s)) return never;
  // The value contains its trimmed self, so every required part; `notcontains ""` never holds.
  const required = [...prefixes, ...suffixes, ...parts];
  for (const f of forbidden) if (required.some((r) => r.includes(f))) return never;
  if (blank && required.some(hasNonSpace)) return never;

  const operands = [...required, ...forbidden];
  let sep = 'q';
  for (const ch of 'qzjxkvwy_~#') {
    if (!operands.some((o) => o.includes(ch))) {
      sep = ch;
      break;
    }
  }
  const body = parts.join(sep);
  const candidates = [
    longestPrefix + body + longestSuffix,
    longestPrefix + sep + body + sep + longestSuffix,
    longestPrefix + sep + parts.join('') + sep + longestSuffix,
    sep,
    ' ',
  ];
  return { never: false, candidates, partial: true };
}
