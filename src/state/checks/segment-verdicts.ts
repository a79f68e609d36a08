/**
 * What a segment, and a set of segments combined with OR/AND, can match: every entity, no
 * entity, some, or unknown (never guessed). A segment's constraints are compiled with the
 * evaluator's own `compileConstraint` and decided per subject by subject-solver.ts: an ALL
 * segment matches nobody when the constraints on one subject cannot all hold (subjects are
 * independent: each context key, and the entity id); an ANY segment when none of its constraints
 * can hold alone. Zero constraints match everyone (both match types), and so does an ANY segment
 * holding both `empty` and `notempty` (or present/notpresent) on one subject.
 *
 * Sets (rules, segment rollouts) are normalised for comparison: duplicate keys collapse (as
 * evaluation does), segments that always hold drop out of AND, those that never hold out of OR,
 * and segments with the same match type and constraints count as one. Pure; cached per segment.
 */
import type { CompiledConstraint } from '../../model/compiled.js';
import type { Segment } from '../../model/snapshot.js';
import { compileConstraint } from '../../evaluation/compile-segments.js';
import { OP_BLANK, OP_NOT_BLANK } from '../../evaluation/opcodes.js';
import { solveSubject } from './subject-solver.js';

export type SegmentVerdict =
  | { readonly kind: 'always'; readonly because: string }
  /** `constraints`: indices (0-based, declared order) of constraints that cannot hold together; `subject` the property, null for the entity id. */
  | { readonly kind: 'never'; readonly constraints: readonly number[]; readonly subject: string | null }
  | { readonly kind: 'sometimes' }
  | { readonly kind: 'unknown' };

const verdicts = new WeakMap<Segment, SegmentVerdict>();

export function segmentVerdict(segment: Segment): SegmentVerdict {
  let v = verdicts.get(segment);
  if (v === undefined) {
    v = decide(segment);
    verdicts.set(segment, v);
  }
  return v;
}

const UNKNOWN: SegmentVerdict = { kind: 'unknown' };

function decide(segment: Segment): SegmentVerdict {
  const n = segment.constraints.length;
  if (n === 0) return { kind: 'always', because: `segment \`${segment.key}\` has no constraints` };
  const compiled: CompiledConstraint[] = [];
  for (const c of segment.constraints) {
    const x = compileConstraint(c.type, c.operator, c.property, c.value);
    if (x === null) return UNKNOWN;
    compiled.push(x);
  }
  // Constraint indices by subject.
  const subjects = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const key = compiled[i].entity ? '\u0000entity' : `p:${compiled[i].property}`;
    let list = subjects.get(key);
    if (list === undefined) subjects.set(key, (list = []));
    list.push(i);
  }
  const subjectOf = (i: number) => (compiled[i].entity ? null : compiled[i].property);

  if (segment.matchType === 'ALL_MATCH_TYPE') {
    let unknown = false;
    for (const idx of subjects.values()) {
      const r = solveSubject(idx.map((i) => compiled[i]));
      if (r.verdict === 'never') return { kind: 'never', constraints: r.because.map((k) => idx[k]), subject: subjectOf(idx[0]) };
      if (r.verdict === 'unknown') unknown = true;
    }
    return unknown ? UNKNOWN : { kind: 'sometimes' };
  }

  for (const idx of subjects.values()) {
    const blank = idx.some((i) => compiled[i].op === OP_BLANK);
    const notBlank = idx.some((i) => compiled[i].op === OP_NOT_BLANK);
    if (blank && notBlank) {
      const p = subjectOf(idx[0]);
      return { kind: 'always', because: `segment \`${segment.key}\` matches any of \`${p ?? 'the entity id'}\` empty or not empty` };
    }
  }
  let unknown = false;
  for (let i = 0; i < n; i++) {
    const r = solveSubject([compiled[i]]);
    if (r.verdict === 'sometimes') return { kind: 'sometimes' };
    if (r.verdict === 'unknown') unknown = true;
  }
  if (unknown) return UNKNOWN;
  const all = compiled.map((_, i) => i);
  const props = new Set(all.map(subjectOf));
  return { kind: 'never', constraints: all, subject: props.size === 1 ? subjectOf(0) : null };
}

/** A rule's or segment rollout's segments, normalised (see the header). */
export interface NormalSet {
  readonly truth: 'always' | 'never' | 'depends';
  /** Why it is `always` / `never`, in words. */
  readonly because: string;
  readonly and: boolean;
  /** Identities of the segments that still count (equal content, equal identity). */
  readonly ids: readonly string[];
}

const identities = new WeakMap<Segment, string>();

function identityOf(segment: Segment): string {
  let id = identities.get(segment);
  if (id === undefined) {
    const cs = segment.constraints.map((c) => JSON.stringify([c.type, c.property, c.operator, c.value])).sort();
    id = `${segment.matchType}|${cs.length}|${cs.join('|')}`;
    identities.set(segment, id);
  }
  return id;
}

/** One-segment sets (most rules and rollouts): the operator does not matter, so one per segment. */
const singles = new WeakMap<Segment, NormalSet>();

/** `keys` as declared (duplicates allowed); every key names a segment of `segments`. */
export function normalSet(keys: readonly string[], and: boolean, segments: ReadonlyMap<string, Segment>): NormalSet {
  if (keys.length === 1) {
    const segment = segments.get(keys[0]);
    if (segment !== undefined) {
      let set = singles.get(segment);
      if (set === undefined) {
        set = normalSetOf(keys, false, segments);
        singles.set(segment, set);
      }
      return set;
    }
  }
  return normalSetOf(keys, and, segments);
}

function normalSetOf(keys: readonly string[], and: boolean, segments: ReadonlyMap<string, Segment>): NormalSet {
  const distinct = keys.length === 1 ? keys : [...new Set(keys)];
  if (distinct.length === 0) {
    return and
      ? { truth: 'always', because: 'it lists no segments (AND of nothing matches every entity)', and, ids: [] }
      : { truth: 'never', because: 'it lists no segments (OR of nothing matches no entity)', and, ids: [] };
  }
  const ids: string[] = [];
  let unknownSegment = false;
  for (const key of distinct) {
    const segment = segments.get(key);
    if (segment === undefined) {
      unknownSegment = true;
      continue;
    }
    const v = segmentVerdict(segment);
    if (and || distinct.length === 1) {
      if (v.kind === 'never') return { truth: 'never', because: `segment \`${key}\` matches no entity`, and, ids: [] };
      if (v.kind === 'always') continue;
    } else {
      if (v.kind === 'always') return { truth: 'always', because: v.because, and, ids: [] };
      if (v.kind === 'never') continue;
    }
    const id = identityOf(segment);
    if (!ids.includes(id)) ids.push(id);
  }
  if (unknownSegment) return { truth: 'depends', because: '', and, ids: [] };
  if (ids.length > 0) return { truth: 'depends', because: '', and, ids };
  if (and || distinct.length === 1) {
    const only = distinct.length === 1 ? segmentVerdict(segments.get(distinct[0])!) : undefined;
    return { truth: 'always', because: only?.kind === 'always' ? only.because : 'each of its segments matches every entity', and, ids: [] };
  }
  return { truth: 'never', because: 'none of its segments matches any entity', and, ids: [] };
}

/** Whether every entity `later` matches is also matched by `earlier` (both `depends`). */
export function implies(later: NormalSet, earlier: NormalSet): boolean {
  if (later.ids.length === 0 || earlier.ids.length === 0) return false;
  const earlierOr = !earlier.and || earlier.ids.length === 1;
  const laterAnd = later.and || later.ids.length === 1;
  if (earlierOr && laterAnd && later.ids.some((x) => earlier.ids.includes(x))) return true;
  if (earlierOr && later.ids.every((x) => earlier.ids.includes(x))) return true;
  if (!earlierOr && laterAnd && earlier.ids.every((x) => later.ids.includes(x))) return true;
  return false;
}
