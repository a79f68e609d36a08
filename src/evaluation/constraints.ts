/**
 * Per-request matching of compiled constraints, segments and segment sets (flipt-semantics.md
 * §2.5, §2.6). Hot path: no closures, no allocation except the matched-keys array of a partial
 * OR match and the parse of a datetime context value.
 */
import { invalidArgument } from '../errors.js';
import type { CompiledConstraint, CompiledSegment, CompiledSegmentSet } from '../model/compiled.js';
import type { EvaluationContext } from '../model/evaluation-request.js';
import {
  OP_BLANK,
  OP_BOOL_FALSE,
  OP_BOOL_TRUE,
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
} from './opcodes.js';
import { parseGoBool, parseGoFloat, parseGoTime } from './values.js';

/**
 * Which segments of a rule / segment rollout matched, or null when the set as a whole did not
 * (OR: none matched; AND: not all matched). When every segment matched the result IS `set.allKeys`
 * (same array), so callers can pick a precomputed result by identity; a partial OR match returns a
 * fresh array in declared order.
 */
export function matchSegmentSet(set: CompiledSegmentSet, entityId: string, context: EvaluationContext): readonly string[] | null {
  if (set.unknownType) throw invalidArgument('unknown constraint type');
  const segments = set.segments;
  const n = segments.length;
  if (set.and) {
    for (let i = 0; i < n; i++) if (!matchSegment(segments[i], entityId, context)) return null;
    return set.allKeys; // includes the empty set: AND over nothing matches everyone
  }
  let firstMiss = -1;
  let partial: string[] | null = null;
  for (let i = 0; i < n; i++) {
    if (matchSegment(segments[i], entityId, context)) {
      if (firstMiss >= 0) {
        if (partial === null) partial = set.allKeys.slice(0, firstMiss);
        partial.push(segments[i].key);
      }
    } else if (firstMiss < 0) {
      firstMiss = i;
    }
  }
  if (firstMiss < 0) return n === 0 ? null : set.allKeys; // OR over nothing never matches
  if (partial !== null) return partial;
  return firstMiss === 0 ? null : set.allKeys.slice(0, firstMiss);
}

/** ALL: every constraint matches; ANY: at least one does. Zero constraints match for both. */
export function matchSegment(segment: CompiledSegment, entityId: string, context: EvaluationContext): boolean {
  const cs = segment.constraints;
  const n = cs.length;
  if (n === 0) return true;
  if (segment.all) {
    for (let i = 0; i < n; i++) if (!matchConstraint(cs[i], entityId, context)) return false;
    return true;
  }
  for (let i = 0; i < n; i++) if (matchConstraint(cs[i], entityId, context)) return true;
  return false;
}

export function matchConstraint(c: CompiledConstraint, entityId: string, context: EvaluationContext): boolean {
  let v: string;
  if (c.entity) {
    v = entityId;
  } else {
    // typeof guards inherited members (`constructor`, `toString`): an absent key reads as "".
    const x = context[c.property];
    v = typeof x === 'string' ? x : '';
  }
  const op = c.op;
  if (op === OP_BLANK) return isGoBlank(v);
  if (op === OP_NOT_BLANK) return !isGoBlank(v);
  // Every other operator is false on an empty value (so neq / isnotoneof / notcontains too).
  if (v === '') return false;

  switch (op) {
    case OP_STR_EQ:
      return v === c.str;
    case OP_STR_NEQ:
      return v !== c.str;
    case OP_STR_PREFIX:
      return hasTrimmedPrefix(v, c.str);
    case OP_STR_SUFFIX:
      return hasTrimmedSuffix(v, c.str);
    case OP_STR_CONTAINS:
      return v.includes(c.str);
    case OP_STR_NOTCONTAINS:
      return !v.includes(c.str);
    case OP_STR_ONEOF:
      return c.strings!.has(v);
    case OP_STR_NOTONEOF:
      return !c.strings!.has(v);

    case OP_NUM_EQ:
    case OP_NUM_NEQ:
    case OP_NUM_LT:
    case OP_NUM_LTE:
    case OP_NUM_GT:
    case OP_NUM_GTE:
    case OP_NUM_ONEOF:
    case OP_NUM_NOTONEOF:
      return matchNumber(op, c, v);

    case OP_BOOL_TRUE:
      return parseGoBool(v) === true;
    case OP_BOOL_FALSE:
      return parseGoBool(v) === false;

    case OP_TIME_EQ:
    case OP_TIME_NEQ:
    case OP_TIME_LT:
    case OP_TIME_LTE:
    case OP_TIME_GT:
    case OP_TIME_GTE:
      return matchTime(op, c, v);

    default:
      return false; // OP_NEVER
  }
}

function matchNumber(op: number, c: CompiledConstraint, v: string): boolean {
  const n = parseGoFloat(v);
  if (n === undefined) return false;
  // Context value on the left, as Flipt writes `n < value`. NaN compares false except for !=.
  switch (op) {
    case OP_NUM_EQ:
      return n === c.num;
    case OP_NUM_NEQ:
      return n !== c.num;
    case OP_NUM_LT:
      return n < c.num;
    case OP_NUM_LTE:
      return n <= c.num;
    case OP_NUM_GT:
      return n > c.num;
    case OP_NUM_GTE:
      return n >= c.num;
    case OP_NUM_ONEOF:
      return c.numbers!.has(n); // the set never holds NaN, so NaN is never a member (Go's ==)
    default:
      return !c.numbers!.has(n);
  }
}

function matchTime(op: number, c: CompiledConstraint, v: string): boolean {
  const t = parseGoTime(v);
  if (t === undefined) return false;
  const cmp = t.seconds !== c.sec ? t.seconds - c.sec : t.nanos - c.nsec;
  switch (op) {
    case OP_TIME_EQ:
      return cmp === 0;
    case OP_TIME_NEQ:
      return cmp !== 0;
    case OP_TIME_LT:
      return cmp < 0;
    case OP_TIME_LTE:
      return cmp <= 0;
    case OP_TIME_GT:
      return cmp > 0;
    default:
      return cmp >= 0;
  }
}

// ----- Go strings.TrimSpace without allocating ------------------------------------------------------

/** unicode.IsSpace: \t \n \v \f \r, space, U+0085, U+00A0 and the White_Space code points above Latin-1. */
export function isGoSpace(ch: number): boolean {
  if (ch <= 0x20) return ch === 0x20 || (ch >= 0x09 && ch <= 0x0d);
  if (ch < 0x85) return false;
  if (ch <= 0xa0) return ch === 0x85 || ch === 0xa0;
  if (ch < 0x1680) return false;
  return (
    ch === 0x1680 ||
    (ch >= 0x2000 && ch <= 0x200a) ||
    ch === 0x2028 ||
    ch === 0x2029 ||
    ch === 0x202f ||
    ch === 0x205f ||
    ch === 0x3000
  );
}

/** strings.TrimSpace(v) == "" */
export function isGoBlank(v: string): boolean {
  for (let i = 0; i < v.length; i++) if (!isGoSpace(v.charCodeAt(i))) return false;
  return true;
}

/** strings.HasPrefix(strings.TrimSpace(v), prefix) */
export function hasTrimmedPrefix(v: string, prefix: string): boolean {
  let start = 0;
  let end = v.length;
  while (start < end && isGoSpace(v.charCodeAt(start))) start++;
  while (end > start && isGoSpace(v.charCodeAt(end - 1))) end--;
  return end - start >= prefix.length && v.startsWith(prefix, start);
}

/** strings.HasSuffix(strings.TrimSpace(v), suffix) */
export function hasTrimmedSuffix(v: string, suffix: string): boolean {
  let start = 0;
  let end = v.length;
  while (start < end && isGoSpace(v.charCodeAt(start))) start++;
  while (end > start && isGoSpace(v.charCodeAt(end - 1))) end--;
  return end - start >= suffix.length && v.endsWith(suffix, end);
}
