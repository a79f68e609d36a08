/**
 * How a decision was reached: re-walks the same compiled flag the evaluators read and records, for
 * every rule or rollout considered, the segments and each constraint (property, operator, expected
 * value, actual value, matched or not), the bucket and its bounds, and which one decided.
 *
 * Kept apart from evaluateVariant/evaluateBoolean on purpose: those stay allocation-free, this
 * builds a tree per call and is for people (`vexil evaluate`, `vexil test`), not for the hot path.
 * It reaches its decision with its own control flow from the same primitives (matchConstraint,
 * the bucket hashes, the compiled bounds), so a property test can hold it equal to the evaluators.
 */
import { invalidArgument } from '../errors.js';
import type { CompiledSegmentSet } from '../model/compiled.js';
import type { ComparisonType, MatchType, SegmentOperator } from '../model/enums.js';
import type { EvaluationRequest } from '../model/evaluation-request.js';
import type { BooleanResult, VariantResult } from '../model/evaluation-result.js';
import type { Flag, Segment, Snapshot } from '../model/snapshot.js';
import { matchConstraint } from './constraints.js';
import { thresholdValue, variantBucket } from './hash.js';
import { findFlag, namespaceOf } from './lookup.js';
import { ROLLOUT_SEGMENT, ROLLOUT_THRESHOLD } from './opcodes.js';
import { NO_KEYS, booleanResult, variantResult } from './results.js';

export interface ConstraintExplanation {
  readonly type: ComparisonType;
  /** The context key read (for ENTITY_ID_COMPARISON_TYPE: the declared property; the entity id is compared). */
  readonly property: string;
  readonly operator: string;
  /** The declared value ("" for operators without one). */
  readonly expected: string;
  /** The value compared: the context value, or the entity id; null when the context has no such key (reads as ""). */
  readonly actual: string | null;
  readonly matched: boolean;
}

export interface SegmentExplanation {
  readonly key: string;
  readonly matchType: MatchType;
  readonly matched: boolean;
  /** Every constraint, in declared order (all are shown, even after the outcome was settled). */
  readonly constraints: readonly ConstraintExplanation[];
}

export interface SegmentSetExplanation {
  readonly operator: SegmentOperator;
  /** Distinct segments in declared order. */
  readonly segments: readonly SegmentExplanation[];
  /** OR: at least one segment matched; AND: every segment matched. */
  readonly matched: boolean;
  /** The keys that end up in the result's segmentKeys when this set decides. */
  readonly matchedKeys: readonly string[];
}

/** A distribution with rollout > 0 and the half-open bucket range [from, to) of 0..999 it owns. */
export interface DistributionExplanation {
  readonly variantKey: string;
  readonly from: number;
  readonly to: number;
}

export interface BucketExplanation {
  /** crc32(flagKey ‖ entityId) % 1000. */
  readonly value: number;
  readonly distributions: readonly DistributionExplanation[];
  /** The variant whose range holds the bucket; null when it falls outside every range. */
  readonly variantKey: string | null;
}

export interface RuleExplanation {
  readonly rank: number;
  readonly segments: SegmentSetExplanation;
  /** Present when the segments matched and the rule has distributions. */
  readonly bucket?: BucketExplanation;
  /** This rule's segments matched: it decided (the first such rule decides, even without a variant). */
  readonly decided: boolean;
}

export interface ThresholdExplanation {
  readonly percentage: number;
  /** crc32(entityId ‖ flagKey) % 100; the rollout matches when it is < percentage. */
  readonly bucket: number;
  readonly matched: boolean;
}

export interface RolloutExplanation {
  readonly rank: number;
  readonly type: 'threshold' | 'segment' | 'none';
  /** The value returned when this rollout decides. */
  readonly value: boolean;
  readonly threshold?: ThresholdExplanation;
  readonly segments?: SegmentSetExplanation;
  readonly decided: boolean;
}

export type VariantDecision =
  | { readonly by: 'flag-disabled' }
  /** A rule's segments matched; `outcome` says what its distributions did. */
  | { readonly by: 'rule'; readonly rank: number; readonly outcome: 'distribution' | 'no-distributions' | 'outside-distributions' }
  | { readonly by: 'no-rule-matched' };

export type BooleanDecision = { readonly by: 'rollout'; readonly rank: number; readonly type: 'threshold' | 'segment' } | { readonly by: 'no-rollout-matched' };

interface ExplanationBase {
  readonly namespaceKey: string;
  readonly flagKey: string;
  readonly entityId: string;
  readonly enabled: boolean;
}

export interface VariantExplanation extends ExplanationBase {
  readonly flagType: 'VARIANT_FLAG_TYPE';
  /** The rules considered, in rank order, up to and including the one that decided. */
  readonly rules: readonly RuleExplanation[];
  /** Rules the flag declares (those after the deciding one were not evaluated). */
  readonly ruleCount: number;
  readonly defaultVariant: string;
  readonly decision: VariantDecision;
  readonly result: VariantResult;
}

export interface BooleanExplanation extends ExplanationBase {
  readonly flagType: 'BOOLEAN_FLAG_TYPE';
  readonly rollouts: readonly RolloutExplanation[];
  readonly rolloutCount: number;
  readonly decision: BooleanDecision;
  readonly result: BooleanResult;
}

export type Explanation = VariantExplanation | BooleanExplanation;

/** Explains the flag by its own type (as batch evaluation dispatches). NotFound as the evaluators. */
export function explain(snapshot: Snapshot, req: EvaluationRequest): Explanation {
  const flag = findFlag(snapshot, req.namespaceKey, req.flagKey);
  return flag.compiled.variant !== null ? variantExplanation(snapshot, flag, req) : booleanExplanation(snapshot, flag, req);
}

function base(flag: Flag, req: EvaluationRequest): ExplanationBase {
  return { namespaceKey: namespaceOf(req.namespaceKey), flagKey: flag.key, entityId: req.entityId, enabled: flag.enabled };
}

function variantExplanation(snapshot: Snapshot, flag: Flag, req: EvaluationRequest): VariantExplanation {
  const compiled = flag.compiled;
  const v = compiled.variant!;
  const segments = declaredSegments(snapshot, req);
  const common = { ...base(flag, req), flagType: 'VARIANT_FLAG_TYPE' as const, ruleCount: v.rules.length, defaultVariant: v.defaultKey };
  if (!compiled.enabled) {
    return {
      ...common,
      rules: [],
      decision: { by: 'flag-disabled' },
      result: variantResult(flag.key, false, NO_KEYS, 'FLAG_DISABLED_EVALUATION_REASON', v.defaultKey, v.defaultAttachment),
    };
  }
  const rules: RuleExplanation[] = [];
  for (let r = 0; r < v.rules.length; r++) {
    const rule = v.rules[r];
    const rank = flag.rules[r]?.rank ?? r + 1;
    const set = explainSet(rule, segments, req);
    if (!set.matched) {
      rules.push({ rank, segments: set, decided: false });
      continue;
    }
    const keys = set.matchedKeys;
    if (rule.bounds.length === 0) {
      rules.push({ rank, segments: set, decided: true });
      return {
        ...common,
        rules,
        decision: { by: 'rule', rank, outcome: 'no-distributions' },
        result: variantResult(flag.key, true, keys, 'MATCH_EVALUATION_REASON', v.defaultKey, v.defaultAttachment),
      };
    }
    const value = variantBucket(compiled.keyCrc, req.entityId);
    const distributions: DistributionExplanation[] = rule.bounds.map((to, i) => ({
      variantKey: rule.hits[i]!.variantKey,
      from: i === 0 ? 0 : rule.bounds[i - 1],
      to,
    }));
    const hit = distributions.findIndex((d) => value >= d.from && value < d.to);
    rules.push({ rank, segments: set, bucket: { value, distributions, variantKey: hit < 0 ? null : rule.hits[hit]!.variantKey }, decided: true });
    const result =
      hit < 0
        ? variantResult(flag.key, false, keys, v.baseReason, v.defaultKey, v.defaultAttachment)
        : variantResult(flag.key, true, keys, 'MATCH_EVALUATION_REASON', rule.hits[hit]!.variantKey, rule.hits[hit]!.variantAttachment);
    return { ...common, rules, decision: { by: 'rule', rank, outcome: hit < 0 ? 'outside-distributions' : 'distribution' }, result };
  }
  return {
    ...common,
    rules,
    decision: { by: 'no-rule-matched' },
    result: variantResult(flag.key, false, NO_KEYS, v.baseReason, v.defaultKey, v.defaultAttachment),
  };
}

function booleanExplanation(snapshot: Snapshot, flag: Flag, req: EvaluationRequest): BooleanExplanation {
  const compiled = flag.compiled;
  const b = compiled.boolean!;
  const segments = declaredSegments(snapshot, req);
  const common = { ...base(flag, req), flagType: 'BOOLEAN_FLAG_TYPE' as const, rolloutCount: b.rollouts.length };
  const rollouts: RolloutExplanation[] = [];
  for (let r = 0; r < b.rollouts.length; r++) {
    const rollout = b.rollouts[r];
    const declared = flag.rollouts[r];
    const rank = declared?.rank ?? r + 1;
    if (rollout.kind === ROLLOUT_THRESHOLD) {
      const bucket = thresholdValue(req.entityId, flag.key);
      const matched = bucket < rollout.percentage;
      const percentage = declared?.threshold?.percentage ?? rollout.percentage;
      rollouts.push({ rank, type: 'threshold', value: rollout.value, threshold: { percentage, bucket, matched }, decided: matched });
      if (matched) {
        return {
          ...common,
          rollouts,
          decision: { by: 'rollout', rank, type: 'threshold' },
          result: booleanResult(flag.key, rollout.value, 'MATCH_EVALUATION_REASON', NO_KEYS),
        };
      }
    } else if (rollout.kind === ROLLOUT_SEGMENT) {
      const set = explainSet(rollout, segments, req);
      rollouts.push({ rank, type: 'segment', value: rollout.value, segments: set, decided: set.matched });
      if (set.matched) {
        return {
          ...common,
          rollouts,
          decision: { by: 'rollout', rank, type: 'segment' },
          result: booleanResult(flag.key, rollout.value, 'MATCH_EVALUATION_REASON', set.matchedKeys),
        };
      }
    } else {
      rollouts.push({ rank, type: 'none', value: rollout.value, decided: false });
    }
  }
  return {
    ...common,
    rollouts,
    decision: { by: 'no-rollout-matched' },
    result: booleanResult(flag.key, compiled.enabled, 'DEFAULT_EVALUATION_REASON', NO_KEYS),
  };
}

function declaredSegments(snapshot: Snapshot, req: EvaluationRequest): ReadonlyMap<string, Segment> {
  return snapshot.namespaces.get(namespaceOf(req.namespaceKey))?.segments ?? new Map();
}

/**
 * Every segment and constraint of the set, evaluated (the evaluator may stop early; nothing here
 * has side effects, so evaluating all of them changes no outcome and shows more).
 */
function explainSet(
  set: CompiledSegmentSet,
  declared: ReadonlyMap<string, Segment>,
  req: EvaluationRequest,
): SegmentSetExplanation {
  if (set.unknownType) throw invalidArgument('unknown constraint type');
  const segments: SegmentExplanation[] = set.segments.map((segment) => {
    const source = declared.get(segment.key);
    const constraints: ConstraintExplanation[] = segment.constraints.map((c, i) => {
      const d = source?.constraints[i];
      const raw = c.entity ? req.entityId : req.context[c.property];
      return {
        type: d?.type ?? (c.entity ? 'ENTITY_ID_COMPARISON_TYPE' : 'STRING_COMPARISON_TYPE'),
        property: d?.property ?? c.property,
        operator: d?.operator ?? '',
        expected: d?.value ?? c.str,
        actual: typeof raw === 'string' ? raw : null,
        matched: matchConstraint(c, req.entityId, req.context),
      };
    });
    const hits = constraints.filter((c) => c.matched).length;
    const matched = constraints.length === 0 || (segment.all ? hits === constraints.length : hits > 0);
    return { key: segment.key, matchType: segment.all ? 'ALL_MATCH_TYPE' : 'ANY_MATCH_TYPE', matched, constraints };
  });
  const matchedKeys = segments.filter((s) => s.matched).map((s) => s.key);
  const matched = set.and ? matchedKeys.length === segments.length : matchedKeys.length > 0;
  return {
    operator: set.and ? 'AND_SEGMENT_OPERATOR' : 'OR_SEGMENT_OPERATOR',
    segments,
    matched,
    matchedKeys: matched ? matchedKeys : NO_KEYS,
  };
}
