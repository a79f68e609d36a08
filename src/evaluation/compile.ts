/**
 * Turns a declared flag plus the segments of its namespace into the precomputed data the
 * evaluators read (flipt-semantics.md §2). Pure (its caches only share equal immutable parts);
 * called once per flag at snapshot build (state/build.ts).
 * Validation has already guaranteed that every referenced segment and variant exists; a broken
 * reference here is an internal error and throws.
 *
 * Everything that does not depend on the request is decided here: distribution bounds use
 * Flipt's float32 truncation, threshold percentages are float32, and every result that does not
 * depend on a partial OR match is built once and frozen. Segments, segment sets and constraints
 * are compiled by compile-segments.ts; the shapes built are in model/compiled.ts.
 */
import type { CompiledBooleanFlag, CompiledFlag, CompiledRollout, CompiledRule, CompiledVariantFlag, MatcherCell } from '../model/compiled.js';
import type { BooleanResult, EvaluationReason, VariantResult } from '../model/evaluation-result.js';
import type { FlagDefinition, Rollout, Rule, Segment, Variant } from '../model/snapshot.js';
import { NO_BOUNDS, NO_SEGMENTS, compileSegmentSet, namespaceShared, type BoundsNode, type NamespaceShared } from './compile-segments.js';
import { crc32String } from './hash.js';
import { ROLLOUT_SEGMENT, ROLLOUT_SKIP, ROLLOUT_THRESHOLD } from './opcodes.js';
import { NO_KEYS, booleanResult, variantResult } from './results.js';

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
