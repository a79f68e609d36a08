/**
 * Turns a declared flag plus the segments of its namespace into the precomputed data the
 * evaluators read (flipt-semantics.md §2). Pure (its caches only share equal immutable parts);
 * called once per flag at snapshot build (state/build.ts).
 * Validation has already guaranteed that every referenced segment and variant exists; a broken
 * reference here is an internal error and throws.
 *
 * Everything that does not depend on the request is decided here: operators become opcodes,
 * constraint values are parsed (a value Go could not parse compiles to "never matches", exactly
 * what Flipt's evaluator ends up doing on every call), `isoneof` lists become Sets, distribution
 * bounds use Flipt's float32 truncation, threshold percentages are float32, and every result that
 * does not depend on a partial OR match is built once and frozen.
 */
import { FrozenMap } from '../state/freeze.js';
import type { ComparisonType, FlagDefinition, FlagType, Rule, Rollout, Segment, Variant } from '../state/model.js';
import type { GeneratedMatcher } from './codegen.js';
import { crc32String } from './hash.js';
import { NO_KEYS, booleanResult, variantResult } from './results.js';
import type { BooleanResult, EvaluationReason, VariantResult } from './types.js';
import { parseGoFloat, parseGoTime, parseNumberArray, parseStringArray } from './values.js';

// ----- opcodes: one per (comparison type, operator) behaviour ------------------------------------

/** Never true whatever the input (unknown operator, `le`, a constraint value Go cannot parse...). */
export const OP_NEVER = 0;
/** Go `len(strings.TrimSpace(v)) == 0`: string `empty`, number/boolean/datetime `notpresent`. */
export const OP_BLANK = 1;
/** Negation of OP_BLANK: string `notempty`, number/boolean/datetime `present`. */
export const OP_NOT_BLANK = 2;
export const OP_STR_EQ = 3;
export const OP_STR_NEQ = 4;
export const OP_STR_PREFIX = 5;
export const OP_STR_SUFFIX = 6;
export const OP_STR_CONTAINS = 7;
export const OP_STR_NOTCONTAINS = 8;
export const OP_STR_ONEOF = 9;
export const OP_STR_NOTONEOF = 10;
export const OP_NUM_EQ = 11;
export const OP_NUM_NEQ = 12;
export const OP_NUM_LT = 13;
export const OP_NUM_LTE = 14;
export const OP_NUM_GT = 15;
export const OP_NUM_GTE = 16;
export const OP_NUM_ONEOF = 17;
export const OP_NUM_NOTONEOF = 18;
export const OP_BOOL_TRUE = 19;
export const OP_BOOL_FALSE = 20;
export const OP_TIME_EQ = 21;
export const OP_TIME_NEQ = 22;
export const OP_TIME_LT = 23;
export const OP_TIME_LTE = 24;
export const OP_TIME_GT = 25;
export const OP_TIME_GTE = 26;

const STRING_OPS: Readonly<Record<string, number>> = {
  empty: OP_BLANK,
  notempty: OP_NOT_BLANK,
  eq: OP_STR_EQ,
  neq: OP_STR_NEQ,
  prefix: OP_STR_PREFIX,
  suffix: OP_STR_SUFFIX,
  contains: OP_STR_CONTAINS,
  notcontains: OP_STR_NOTCONTAINS,
  isoneof: OP_STR_ONEOF,
  isnotoneof: OP_STR_NOTONEOF,
};
// No `le`: Flipt v1's schema lists it but its evaluator has no such case, so it never matches.
const NUMBER_OPS: Readonly<Record<string, number>> = {
  notpresent: OP_BLANK,
  present: OP_NOT_BLANK,
  eq: OP_NUM_EQ,
  neq: OP_NUM_NEQ,
  lt: OP_NUM_LT,
  lte: OP_NUM_LTE,
  gt: OP_NUM_GT,
  gte: OP_NUM_GTE,
  isoneof: OP_NUM_ONEOF,
  isnotoneof: OP_NUM_NOTONEOF,
};
const BOOLEAN_OPS: Readonly<Record<string, number>> = {
  notpresent: OP_BLANK,
  present: OP_NOT_BLANK,
  true: OP_BOOL_TRUE,
  false: OP_BOOL_FALSE,
};
const DATETIME_OPS: Readonly<Record<string, number>> = {
  notpresent: OP_BLANK,
  present: OP_NOT_BLANK,
  eq: OP_TIME_EQ,
  neq: OP_TIME_NEQ,
  lt: OP_TIME_LT,
  lte: OP_TIME_LTE,
  gt: OP_TIME_GT,
  gte: OP_TIME_GTE,
};
const OPS_BY_TYPE: Readonly<Record<ComparisonType, Readonly<Record<string, number>>>> = {
  STRING_COMPARISON_TYPE: STRING_OPS,
  ENTITY_ID_COMPARISON_TYPE: STRING_OPS,
  NUMBER_COMPARISON_TYPE: NUMBER_OPS,
  BOOLEAN_COMPARISON_TYPE: BOOLEAN_OPS,
  DATETIME_COMPARISON_TYPE: DATETIME_OPS,
};

// ----- compiled shapes -----------------------------------------------------------------------------

/** Every field is always present (unused ones hold a neutral value) so all constraints share one shape. */
export interface CompiledConstraint {
  readonly op: number;
  /** Context key read; ignored when `entity`. */
  readonly property: string;
  /** ENTITY_ID_COMPARISON_TYPE: compare the request's entityId instead of a context value. */
  readonly entity: boolean;
  /** String operand (eq/neq/prefix/suffix/contains/notcontains). */
  readonly str: string;
  /** Number operand (eq..gte); may be NaN/±Infinity, which Go also accepts and compares. */
  readonly num: number;
  /** Datetime operand as seconds since the epoch + nanoseconds. */
  readonly sec: number;
  readonly nsec: number;
  readonly strings: ReadonlySet<string> | null;
  /** Set membership uses SameValueZero: 0 and -0 are one member, as with Go's `==`. */
  readonly numbers: ReadonlySet<number> | null;
}

export interface CompiledSegment {
  readonly key: string;
  /** ALL_MATCH_TYPE (else ANY). */
  readonly all: boolean;
  readonly constraints: readonly CompiledConstraint[];
  /** Holds a constraint of a comparison type Flipt does not know: evaluating it fails the request. */
  readonly unknownType: boolean;
}

/** A set of segments combined with OR/AND, as rules and segment rollouts hold them. */
export interface CompiledSegmentSet {
  /** Distinct segments in declared order (Flipt keys them by segment key, so duplicates collapse). */
  readonly segments: readonly CompiledSegment[];
  readonly and: boolean;
  /** The keys of `segments`, frozen: the segmentKeys of a result where all of them matched. */
  readonly allKeys: readonly string[];
  readonly unknownType: boolean;
}

export interface CompiledRule extends CompiledSegmentSet {
  /** Cumulative upper bucket bounds of the distributions with rollout > 0, in declared order. */
  readonly bounds: readonly number[];
  /** Per bound: the result when every segment matched and the bucket fell in that distribution. */
  readonly hits: readonly VariantResult[];
  /**
   * Every segment matched and the bucket fell outside all distributions (match=false, no
   * fall-through); null when no bucket can (the last bound is 1000: buckets are 0..999).
   */
  readonly miss: VariantResult | null;
  /** Every segment matched and the rule has no distribution with rollout > 0 (match=true, default variant); null when it has some. */
  readonly noDistributions: VariantResult | null;
}

export const ROLLOUT_SKIP = 0;
export const ROLLOUT_THRESHOLD = 1;
export const ROLLOUT_SEGMENT = 2;

export interface CompiledRollout extends CompiledSegmentSet {
  readonly kind: number;
  /** float32 of the threshold percentage (compared with strict `<`). */
  readonly percentage: number;
  readonly value: boolean;
  /** The result when this rollout decides (threshold, or a segment rollout whose segments all matched). */
  readonly result: BooleanResult;
}

/**
 * The one mutable part of a compiled flag, invisible in results: the generated matcher
 * (codegen.ts), made off the request path by prepareMatcher, which the store calls on the flags
 * of each snapshot it swaps in (store/matcher-warmup.ts). Until then, or where code cannot be
 * generated, the interpreter answers. Generating costs about as much as a few dozen interpreted
 * calls of a large flag: no request pays for it, and the CLI (`vexil evaluate`, `vexil test`),
 * which evaluates a flag a few times, never generates.
 */
export interface MatcherCell<R> {
  /** The generated matcher, once made. */
  fn: GeneratedMatcher<R> | null;
  /** Whether generation was attempted (once: on failure the interpreter stays in charge). */
  tried: boolean;
  /** Calls the interpreter answered for want of a generated matcher (observed by tests and benchmarks). */
  interpreted: number;
}

export interface CompiledVariantFlag {
  readonly rules: readonly CompiledRule[];
  /** Default variant's key/attachment, or "" when there is none. */
  readonly defaultKey: string;
  readonly defaultAttachment: string;
  /** DEFAULT_EVALUATION_REASON with a default variant, else UNKNOWN_EVALUATION_REASON. */
  readonly baseReason: EvaluationReason;
  readonly disabled: VariantResult;
  /** The answer of an enabled flag when no rule matches; null for a disabled one (never read). */
  readonly noMatch: VariantResult | null;
  /** Enabled flags only: the generated decision over `rules`. */
  readonly matcher: MatcherCell<VariantResult>;
}

export interface CompiledBooleanFlag {
  readonly rollouts: readonly CompiledRollout[];
  /** Fall-through: enabled = flag.enabled, DEFAULT_EVALUATION_REASON. */
  readonly fallThrough: BooleanResult;
  readonly matcher: MatcherCell<BooleanResult>;
}

export interface CompiledFlag {
  readonly key: string;
  readonly type: FlagType;
  readonly enabled: boolean;
  /** crc32 of the flag key's UTF-8 bytes: the seed for variant bucketing (flagKey ‖ entityId). */
  readonly keyCrc: number;
  /** Set for VARIANT_FLAG_TYPE. */
  readonly variant: CompiledVariantFlag | null;
  /** Set for BOOLEAN_FLAG_TYPE. */
  readonly boolean: CompiledBooleanFlag | null;
}

// ----- compile ---------------------------------------------------------------------------------------

/** The parts of a segment set that do not depend on its operator. */
interface SetParts {
  readonly segments: readonly CompiledSegment[];
  readonly allKeys: readonly string[];
  readonly unknownType: boolean;
}

/**
 * Segments are immutable snapshot objects shared by many flags (and, through the build cache, by
 * many builds): compile each once, together with the parts of the one-segment set (most rules and
 * rollouts name one segment: they share these).
 */
const compiledSegments = new WeakMap<Segment, SegmentParts>();

/** The one-segment set of `source`. */
interface SegmentParts extends SetParts {
  readonly source: Segment;
}

/**
 * What the flags of one namespace share, found once per compileFlag call from the namespace's
 * segment map (one WeakMap entry per namespace, not per segment): the one-segment sets by segment
 * key, so a reference costs a string-keyed lookup; the sets of several segments by key list;
 * identical constraints; identical bound lists. All of it is immutable once built, so sharing it
 * between flags changes no result.
 */
interface NamespaceShared {
  readonly sets: Map<string, SegmentParts>;
  readonly constraints: Map<string, CompiledConstraint | null>;
  readonly bounds: BoundsNode;
  /** Sets of two or more segments, by their first segment. */
  readonly multi: Map<CompiledSegment, SetParts[]>;
  /** The map is a snapshot's FrozenMap: a key, once looked up, needs no second look. */
  readonly immutable: boolean;
}

/** A trie of bound lists by their values: rules with the same split share one frozen array. */
interface BoundsNode {
  list: readonly number[] | null;
  next: Map<number, BoundsNode> | null;
}

const sharedByNamespace = new WeakMap<ReadonlyMap<string, Segment>, NamespaceShared>();

function namespaceShared(segments: ReadonlyMap<string, Segment>): NamespaceShared {
  let shared = sharedByNamespace.get(segments);
  if (shared === undefined) {
    shared = {
      sets: new Map(),
      constraints: new Map(),
      bounds: { list: NO_BOUNDS, next: null },
      multi: new Map(),
      immutable: segments instanceof FrozenMap,
    };
    sharedByNamespace.set(segments, shared);
  }
  return shared;
}

// Arrays are allocated at their final length: `[]` grown by push reserves 17 slots, and the
// compiled data of a large state is mostly small arrays. Nothing below allocates a closure, and
// a result that no request can reach (a disabled flag's no-match, the miss of a rule whose
// distributions cover every bucket...) is not built.

export function compileFlag(flag: FlagDefinition, segments: ReadonlyMap<string, Segment>): CompiledFlag {
  const isVariant = flag.type === 'VARIANT_FLAG_TYPE';
  const shared = namespaceShared(segments);
  return Object.freeze({
    key: flag.key,
    type: flag.type,
    enabled: flag.enabled,
    keyCrc: crc32String(flag.key, 0),
    variant: isVariant ? compileVariantFlag(flag, segments, shared) : null,
    boolean: isVariant ? null : compileBooleanFlag(flag, segments, shared),
  });
}

function compileVariantFlag(flag: FlagDefinition, segments: ReadonlyMap<string, Segment>, shared: NamespaceShared): CompiledVariantFlag {
  const dv = flag.defaultVariant;
  const defaultKey = dv ? dv.key : '';
  const defaultAttachment = dv ? dv.attachment : '';
  const baseReason: EvaluationReason = dv ? 'DEFAULT_EVALUATION_REASON' : 'UNKNOWN_EVALUATION_REASON';
  const declared = flag.rules;
  const rules = new Array<CompiledRule>(declared.length);
  for (let i = 0; i < declared.length; i++) rules[i] = compileRule(flag, declared[i], segments, shared, defaultKey, defaultAttachment, baseReason);
  const enabled = flag.enabled;
  return Object.freeze({
    rules: declared.length === 0 ? NO_RULES : Object.freeze(rules),
    defaultKey,
    defaultAttachment,
    baseReason,
    disabled: frozenVariant(flag.key, false, NO_KEYS, 'FLAG_DISABLED_EVALUATION_REASON', defaultKey, defaultAttachment),
    noMatch: enabled ? frozenVariant(flag.key, false, NO_KEYS, baseReason, defaultKey, defaultAttachment) : null,
    matcher: newMatcherCell<VariantResult>(),
  });
}

/** Buckets are 0..999: a last bound of 1000 (a rule whose rollouts sum to 100) leaves no bucket outside. */
const BUCKETS = 1000;

function compileRule(
  flag: FlagDefinition,
  rule: Rule,
  segments: ReadonlyMap<string, Segment>,
  shared: NamespaceShared,
  defaultKey: string,
  defaultAttachment: string,
  baseReason: EvaluationReason,
): CompiledRule {
  const set = compileSegmentSet(flag, rule.segmentKey, rule.segmentKeys, segments, shared, 'rule', rule.rank);

  // Flipt holds rollouts as float32 and skips those that are not > 0 ...
  const ds = rule.distributions;
  let n = 0;
  for (let i = 0; i < ds.length; i++) if (Math.fround(ds[i].rollout) > 0) n++;
  let bounds = NO_BOUNDS;
  let hits = NO_RESULTS;
  let upper = 0;
  if (n > 0) {
    const h = new Array<VariantResult>(n);
    let node = shared.bounds;
    let j = 0;
    for (let i = 0; i < ds.length; i++) {
      const d = ds[i];
      const rollout = Math.fround(d.rollout);
      if (!(rollout > 0)) continue;
      // ... and truncates each width on its own: int(float32(rollout) * float32(10)).
      upper += Math.trunc(Math.fround(rollout * 10));
      const variant = findVariant(flag, d.variantId, d.variantKey);
      h[j] = frozenVariant(flag.key, true, set.allKeys, 'MATCH_EVALUATION_REASON', variant.key, variant.attachment);
      node = boundsChild(node, upper);
      j++;
    }
    bounds = node.list ?? boundsList(node, ds, n);
    hits = Object.freeze(h);
  }
  const compiled: CompiledRule = {
    segments: set.segments,
    and: rule.segmentOperator === 'AND_SEGMENT_OPERATOR',
    allKeys: set.allKeys,
    unknownType: set.unknownType,
    bounds,
    hits,
    miss: n > 0 && upper < BUCKETS ? frozenVariant(flag.key, false, set.allKeys, baseReason, defaultKey, defaultAttachment) : null,
    noDistributions: n === 0 ? frozenVariant(flag.key, true, set.allKeys, 'MATCH_EVALUATION_REASON', defaultKey, defaultAttachment) : null,
  };
  return Object.freeze(compiled);
}

function boundsChild(node: BoundsNode, bound: number): BoundsNode {
  let next = node.next;
  if (next === null) next = node.next = new Map();
  let child = next.get(bound);
  if (child === undefined) {
    child = { list: null, next: null };
    next.set(bound, child);
  }
  return child;
}

/** The bound list of a trie node reached for the first time (recomputed from the distributions, as compileRule does). */
function boundsList(node: BoundsNode, ds: Rule['distributions'], n: number): readonly number[] {
  const list = new Array<number>(n);
  let upper = 0;
  let j = 0;
  for (let i = 0; i < ds.length; i++) {
    const rollout = Math.fround(ds[i].rollout);
    if (!(rollout > 0)) continue;
    upper += Math.trunc(Math.fround(rollout * 10));
    list[j++] = upper;
  }
  node.list = Object.freeze(list);
  return node.list;
}

function compileBooleanFlag(flag: FlagDefinition, segments: ReadonlyMap<string, Segment>, shared: NamespaceShared): CompiledBooleanFlag {
  const declared = flag.rollouts;
  const rollouts = new Array<CompiledRollout>(declared.length);
  for (let i = 0; i < declared.length; i++) rollouts[i] = compileRollout(flag, declared[i], segments, shared);
  return Object.freeze({
    rollouts: declared.length === 0 ? NO_ROLLOUTS : Object.freeze(rollouts),
    fallThrough: Object.freeze(booleanResult(flag.key, flag.enabled, 'DEFAULT_EVALUATION_REASON', NO_KEYS)),
    matcher: newMatcherCell<BooleanResult>(),
  });
}

const NO_SEGMENTS: readonly CompiledSegment[] = Object.freeze([]);
const NO_PARTS: SetParts = Object.freeze({ segments: NO_SEGMENTS, allKeys: NO_KEYS, unknownType: false });
const NO_BOUNDS: readonly number[] = Object.freeze([]);
const NO_RESULTS: readonly VariantResult[] = Object.freeze([]);
const NO_RULES: readonly CompiledRule[] = Object.freeze([]);
const NO_ROLLOUTS: readonly CompiledRollout[] = Object.freeze([]);

function newMatcherCell<R>(): MatcherCell<R> {
  return { fn: null, tried: false, interpreted: 0 };
}

function compileRollout(flag: FlagDefinition, rollout: Rollout, segments: ReadonlyMap<string, Segment>, shared: NamespaceShared): CompiledRollout {
  // Flipt tests the threshold first, then the segment; a rollout with neither is skipped.
  if (rollout.threshold) {
    const { percentage, value } = rollout.threshold;
    return Object.freeze({
      segments: NO_SEGMENTS,
      and: false,
      allKeys: NO_KEYS,
      unknownType: false,
      kind: ROLLOUT_THRESHOLD,
      percentage: Math.fround(percentage),
      value,
      result: Object.freeze(booleanResult(flag.key, value, 'MATCH_EVALUATION_REASON', NO_KEYS)),
    });
  }
  if (rollout.segment) {
    const s = rollout.segment;
    const set = compileSegmentSet(flag, s.segmentKey, s.segmentKeys, segments, shared, 'rollout', rollout.rank);
    return Object.freeze({
      segments: set.segments,
      and: s.segmentOperator === 'AND_SEGMENT_OPERATOR',
      allKeys: set.allKeys,
      unknownType: set.unknownType,
      kind: ROLLOUT_SEGMENT,
      percentage: 0,
      value: s.value,
      result: Object.freeze(booleanResult(flag.key, s.value, 'MATCH_EVALUATION_REASON', set.allKeys)),
    });
  }
  return Object.freeze({
    segments: NO_SEGMENTS,
    and: false,
    allKeys: NO_KEYS,
    unknownType: false,
    kind: ROLLOUT_SKIP,
    percentage: 0,
    value: false,
    result: Object.freeze(booleanResult(flag.key, false, 'MATCH_EVALUATION_REASON', NO_KEYS)),
  });
}

/** `key` (the string form) when not empty, else `keys`. */
function compileSegmentSet(
  flag: FlagDefinition,
  key: string,
  keys: readonly string[],
  segments: ReadonlyMap<string, Segment>,
  shared: NamespaceShared,
  where: string,
  rank: number,
): SetParts {
  if (key !== '' || keys.length === 1) return compileSegment(flag, segments, shared, key !== '' ? key : keys[0], where, rank);
  const n = keys.length;
  if (n === 0) return NO_PARTS;
  // The distinct segments in declared order, in a reused scratch array (Flipt keys them by segment
  // key, so duplicates collapse; a key names one segment, so equal keys give the same object).
  const found = scratch;
  let m = 0;
  let unknownType = false;
  for (let i = 0; i < n; i++) {
    const c = compileSegment(flag, segments, shared, keys[i], where, rank).segments[0];
    // Sets hold a handful of keys: a linear scan beats allocating a Set per rule.
    let seen = false;
    for (let x = 0; x < m; x++) if (found[x] === c) seen = true;
    if (seen) continue;
    found[m++] = c;
    if (c.unknownType) unknownType = true;
  }
  // Flags of a namespace often name the same segments together: equal lists share one set,
  // found by the first segment's object (no key string is built or hashed).
  let candidates = shared.multi.get(found[0]);
  if (candidates === undefined) {
    candidates = [];
    shared.multi.set(found[0], candidates);
  } else {
    for (let j = 0; j < candidates.length; j++) {
      const held = candidates[j].segments;
      if (held.length !== m) continue;
      let same = true;
      for (let x = 1; x < m; x++) if (held[x] !== found[x]) same = false;
      if (same) return candidates[j];
    }
  }
  const compiled = new Array<CompiledSegment>(m);
  const allKeys = new Array<string>(m);
  for (let x = 0; x < m; x++) {
    compiled[x] = found[x];
    allKeys[x] = found[x].key;
  }
  const parts: SetParts = Object.freeze({ segments: Object.freeze(compiled), allKeys: Object.freeze(allKeys), unknownType });
  candidates.push(parts);
  return parts;
}

/**
 * compileSegmentSet's work array (compilation is synchronous and not re-entrant). It may keep a
 * few compiled segments of the last build alive: a few hundred bytes.
 */
const scratch: CompiledSegment[] = [];

/** The one-segment set of the segment named `key`, compiled on first use. */
function compileSegment(
  flag: FlagDefinition,
  segments: ReadonlyMap<string, Segment>,
  shared: NamespaceShared,
  key: string,
  where: string,
  rank: number,
): SetParts {
  // A snapshot's segment map cannot change: what a key named once it names for good.
  if (shared.immutable) {
    const known = shared.sets.get(key);
    if (known !== undefined) return known;
  }
  const segment = segments.get(key);
  if (!segment) throw new Error(`compileFlag: flag ${flag.namespaceKey}/${flag.key} ${where} ${rank} references unknown segment "${key}"`);
  const known = shared.sets.get(key);
  if (known !== undefined && known.source === segment) return known;
  let parts = compiledSegments.get(segment);
  if (!parts) {
    const n = segment.constraints.length;
    const constraints = new Array<CompiledConstraint>(n);
    let m = 0;
    for (let i = 0; i < n; i++) {
      const k = segment.constraints[i];
      const x = sharedConstraint(shared, k.type, k.operator, k.property, k.value);
      if (x !== null) constraints[m++] = x;
    }
    if (m < n) constraints.length = m;
    const c: CompiledSegment = Object.freeze({
      key: segment.key,
      all: segment.matchType === 'ALL_MATCH_TYPE',
      constraints: Object.freeze(constraints),
      unknownType: m < n,
    });
    parts = Object.freeze({ segments: Object.freeze([c]), allKeys: Object.freeze([segment.key]), unknownType: c.unknownType, source: segment });
    compiledSegments.set(segment, parts);
  }
  shared.sets.set(key, parts);
  return parts;
}

/** Equal constraints (same type, operator, property and value) compile to one shared object. */
function sharedConstraint(shared: NamespaceShared, type: string, operator: string, property: string, value: string): CompiledConstraint | null {
  // Length-prefixed fields: two different quadruples never make the same id.
  const id = `${type.length}:${type}${operator.length}:${operator}${property.length}:${property}${value}`;
  let c = shared.constraints.get(id);
  if (c === undefined) {
    c = compileConstraint(type, operator, property, value);
    shared.constraints.set(id, c);
  }
  return c;
}

/** null for a comparison type Flipt does not know (its evaluator answers "unknown constraint type"). */
export function compileConstraint(type: string, operator: string, property: string, value: string): CompiledConstraint | null {
  const ops = Object.hasOwn(OPS_BY_TYPE, type) ? OPS_BY_TYPE[type as ComparisonType] : undefined;
  if (!ops) return null;
  let op = Object.hasOwn(ops, operator) ? ops[operator] : OP_NEVER;
  let num = 0;
  let sec = 0;
  let nsec = 0;
  let strings: ReadonlySet<string> | null = null;
  let numbers: ReadonlySet<number> | null = null;

  switch (op) {
    case OP_STR_ONEOF:
    case OP_STR_NOTONEOF: {
      // Unparsable list: Flipt answers false for both operators.
      const list = parseStringArray(value);
      if (list === undefined) op = OP_NEVER;
      else strings = new Set(list);
      break;
    }
    case OP_NUM_ONEOF:
    case OP_NUM_NOTONEOF: {
      const list = parseNumberArray(value);
      if (list === undefined) op = OP_NEVER;
      else numbers = new Set(list);
      break;
    }
    case OP_NUM_EQ:
    case OP_NUM_NEQ:
    case OP_NUM_LT:
    case OP_NUM_LTE:
    case OP_NUM_GT:
    case OP_NUM_GTE: {
      const n = parseGoFloat(value);
      if (n === undefined) op = OP_NEVER;
      else num = n;
      break;
    }
    case OP_TIME_EQ:
    case OP_TIME_NEQ:
    case OP_TIME_LT:
    case OP_TIME_LTE:
    case OP_TIME_GT:
    case OP_TIME_GTE: {
      const t = parseGoTime(value);
      if (t === undefined) op = OP_NEVER;
      else {
        sec = t.seconds;
        nsec = t.nanos;
      }
      break;
    }
  }
  return Object.freeze({
    op,
    property,
    entity: type === 'ENTITY_ID_COMPARISON_TYPE',
    str: value,
    num,
    sec,
    nsec,
    strings,
    numbers,
  });
}

function findVariant(flag: FlagDefinition, id: string, key: string): Variant {
  // Flipt resolves a distribution to the first variant with that key.
  const vs = flag.variants;
  for (let i = 0; i < vs.length; i++) if (vs[i].id === id) return vs[i];
  for (let i = 0; i < vs.length; i++) if (vs[i].key === key) return vs[i];
  throw new Error(`compileFlag: flag ${flag.namespaceKey}/${flag.key} references unknown variant "${key}"`);
}

function frozenVariant(
  flagKey: string,
  match: boolean,
  segmentKeys: readonly string[],
  reason: EvaluationReason,
  variantKey: string,
  attachment: string,
): VariantResult {
  return Object.freeze(variantResult(flagKey, match, segmentKeys, reason, variantKey, attachment));
}
