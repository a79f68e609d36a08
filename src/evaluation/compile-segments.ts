/**
 * Compiles segments, segment sets and constraints into their compiled shapes
 * (model/compiled.ts): operators become opcodes (opcodes.ts), constraint values are parsed (a
 * value Go could not parse compiles to "never matches", exactly what Flipt's evaluator ends up
 * doing on every call), `isoneof` lists become Sets. Called by compile.ts for every rule and
 * segment rollout of a flag; pure (its caches only share equal immutable parts).
 *
 * It also owns what the flags of one namespace share (NamespaceShared): the compiled sets and
 * constraints, and the trie of bound lists compile.ts fills, so one lookup per flag finds both.
 */
import type { CompiledConstraint, CompiledSegment } from '../model/compiled.js';
import type { ComparisonType } from '../model/enums.js';
import { FrozenMap } from '../model/freeze.js';
import type { FlagDefinition, Segment } from '../model/snapshot.js';
import {
  OPS_BY_TYPE,
  OP_NEVER,
  OP_NUM_EQ,
  OP_NUM_GT,
  OP_NUM_GTE,
  OP_NUM_LT,
  OP_NUM_LTE,
  OP_NUM_NEQ,
  OP_NUM_NOTONEOF,
  OP_NUM_ONEOF,
  OP_STR_NOTONEOF,
  OP_STR_ONEOF,
  OP_TIME_EQ,
  OP_TIME_GT,
  OP_TIME_GTE,
  OP_TIME_LT,
  OP_TIME_LTE,
  OP_TIME_NEQ,
} from './opcodes.js';
import { NO_KEYS } from './results.js';
import { parseGoFloat, parseGoTime, parseNumberArray, parseStringArray } from './values.js';

/** The parts of a segment set that do not depend on its operator. */
export interface SetParts {
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
export interface NamespaceShared {
  readonly sets: Map<string, SegmentParts>;
  readonly constraints: Map<string, CompiledConstraint | null>;
  readonly bounds: BoundsNode;
  /** Sets of two or more segments, by their first segment. */
  readonly multi: Map<CompiledSegment, SetParts[]>;
  /** The map is a snapshot's FrozenMap: a key, once looked up, needs no second look. */
  readonly immutable: boolean;
}

/** A trie of bound lists by their values: rules with the same split share one frozen array. */
export interface BoundsNode {
  list: readonly number[] | null;
  next: Map<number, BoundsNode> | null;
}

const sharedByNamespace = new WeakMap<ReadonlyMap<string, Segment>, NamespaceShared>();

export function namespaceShared(segments: ReadonlyMap<string, Segment>): NamespaceShared {
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

export const NO_SEGMENTS: readonly CompiledSegment[] = Object.freeze([]);
const NO_PARTS: SetParts = Object.freeze({ segments: NO_SEGMENTS, allKeys: NO_KEYS, unknownType: false });
export const NO_BOUNDS: readonly number[] = Object.freeze([]);

/** `key` (the string form) when not empty, else `keys`. */
export function compileSegmentSet(
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
