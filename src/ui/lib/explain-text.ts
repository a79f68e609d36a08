/**
 * The explain trace of `POST /evaluate/v1/explain` in words, for the evaluation console: the
 * result as labelled fields, which rule or rollout decided in one sentence, and each step (rule or
 * rollout considered) with its segments, every constraint (expected, actual, matched or failed) and
 * the bucket against the distribution ranges. The wording follows `vexil evaluate`
 * (src/cli/format-explanation.ts) so the CLI and the UI say the same thing. Pure, no DOM.
 */
import type { BooleanExplanation, ExplainResponse, ExplainedConstraint, ExplainedSegmentSet, VariantExplanation } from '../types.js';

export interface ResultField {
  label: string;
  value: string;
}

/**
 * The result as the evaluation endpoint answers it, one field per line: the variant key (or
 * boolean value), match, reason, segment keys, attachment. Empty values are written as such.
 */
export function resultFields(r: ExplainResponse): ResultField[] {
  const segments = r.result.segmentKeys.length > 0 ? r.result.segmentKeys.join(', ') : '(none)';
  if (r.flagType === 'BOOLEAN_FLAG_TYPE') {
    return [
      { label: 'Value', value: String(r.result.enabled) },
      { label: 'Reason', value: r.result.reason },
      { label: 'Segments', value: segments },
    ];
  }
  return [
    { label: 'Variant', value: r.result.variantKey === '' ? '(none)' : r.result.variantKey },
    { label: 'Match', value: r.result.match ? 'true' : 'false' },
    { label: 'Reason', value: r.result.reason },
    { label: 'Segments', value: segments },
    { label: 'Attachment', value: r.result.variantAttachment === '' ? '(none)' : r.result.variantAttachment },
  ];
}

/** Which rule or rollout decided, and why, in one sentence. */
export function decisionText(r: ExplainResponse): string {
  return r.flagType === 'VARIANT_FLAG_TYPE' ? variantDecision(r.explanation) : booleanDecision(r.explanation);
}

function variantDecision(e: VariantExplanation): string {
  const fallback = e.defaultVariant === '' ? 'no variant (the flag has no default variant)' : `the default variant ${e.defaultVariant}`;
  const d = e.decision;
  switch (d.by) {
    case 'flag-disabled':
      return `The flag is disabled: ${fallback}.`;
    case 'no-rule-matched':
      return e.ruleCount === 0 ? `The flag has no rules: ${fallback}.` : `No rule matched (${plural(e.ruleCount, 'rule')}): ${fallback}.`;
    case 'rule': {
      const rule = e.rules.find((x) => x.rank === d.rank);
      const head = `Rule ${d.rank} decided: ${rule ? matchedSegments(rule.segments) : 'its segments'} matched`;
      if (d.outcome === 'no-distributions' || rule?.bucket === undefined) return `${head}; it has no distributions, so ${fallback}.`;
      const b = rule.bucket;
      if (d.outcome === 'distribution') {
        const hit = b.distributions.find((x) => x.variantKey === b.variantKey && b.value >= x.from && b.value < x.to);
        return hit ? `${head}, bucket ${b.value} is in ${hit.variantKey} ${range(hit.from, hit.to)}.` : `${head}, bucket ${b.value} chose ${b.variantKey ?? 'no variant'}.`;
      }
      const top = b.distributions.at(-1)?.to ?? 0;
      return `${head}, but bucket ${b.value} is outside every distribution (they cover ${range(0, top)}): no match, ${fallback}.`;
    }
  }
}

function booleanDecision(e: BooleanExplanation): string {
  const d = e.decision;
  if (d.by === 'no-rollout-matched') {
    const why = e.rolloutCount === 0 ? 'The flag has no rollouts' : `No rollout matched (${plural(e.rolloutCount, 'rollout')})`;
    return `${why}: the flag's enabled value, ${e.enabled}.`;
  }
  const r = e.rollouts.find((x) => x.rank === d.rank);
  if (d.type === 'threshold' && r?.threshold) {
    const t = r.threshold;
    return `Rollout ${d.rank} decided: threshold ${t.percentage} %, bucket ${t.bucket} < ${t.percentage} → ${r.value}.`;
  }
  return `Rollout ${d.rank} decided: ${r?.segments ? matchedSegments(r.segments) : 'its segments'} matched → ${r?.value ?? ''}.`;
}

/** One constraint of a segment, in words, with its outcome. */
export interface ConstraintLine {
  matched: boolean;
  /** `plan eq "beta" (string); got "free"`. */
  text: string;
}

export interface SegmentLine {
  key: string;
  matched: boolean;
  /** `all constraints`, `any constraint`, or `no constraints: matches everyone`. */
  match: string;
  constraints: ConstraintLine[];
}

export interface BucketRange {
  variantKey: string;
  /** `[0, 500)`. */
  range: string;
  /** The bucket falls in this range. */
  hit: boolean;
}

/** One rule or rollout considered (or a line for those not evaluated). */
export interface TraceStep {
  /** `Rule 1`, `Rollout 2`, `Rules 3–5`. */
  title: string;
  /** What it tests: `segment beta-users`, `threshold 30 % → true`. */
  subject: string;
  outcome: 'decided' | 'not matched' | 'skipped' | 'not evaluated';
  segments: SegmentLine[];
  /** Variant rules whose segments matched: the bucket and the ranges of 0–999 the variants own. */
  bucket?: { value: number; ranges: BucketRange[]; outside: boolean };
  /** Threshold rollouts: `bucket 12 < 30`. */
  threshold?: string;
}

/** The rules (variant flags) or rollouts (boolean flags) considered, in rank order, then those left. */
export function traceSteps(r: ExplainResponse): TraceStep[] {
  return r.flagType === 'VARIANT_FLAG_TYPE' ? variantSteps(r.explanation) : booleanSteps(r.explanation);
}

function variantSteps(e: VariantExplanation): TraceStep[] {
  if (e.decision.by === 'flag-disabled') return [];
  const steps: TraceStep[] = e.rules.map((rule) => {
    const step: TraceStep = {
      title: `Rule ${rule.rank}`,
      subject: segmentSetLabel(rule.segments),
      outcome: rule.decided ? 'decided' : 'not matched',
      segments: segmentLines(rule.segments),
    };
    const b = rule.bucket;
    if (b !== undefined) {
      step.bucket = {
        value: b.value,
        ranges: b.distributions.map((d) => ({
          variantKey: d.variantKey,
          range: range(d.from, d.to),
          hit: d.variantKey === b.variantKey && b.value >= d.from && b.value < d.to,
        })),
        outside: b.variantKey === null,
      };
    }
    return step;
  });
  const rest = notEvaluated('Rule', 'Rules', e.rules.length, e.ruleCount);
  if (rest) steps.push(rest);
  return steps;
}

function booleanSteps(e: BooleanExplanation): TraceStep[] {
  const steps: TraceStep[] = e.rollouts.map((r) => {
    const title = `Rollout ${r.rank}`;
    if (r.type === 'threshold' && r.threshold) {
      const t = r.threshold;
      return {
        title,
        subject: `threshold ${t.percentage} % → ${r.value}`,
        outcome: t.matched ? 'decided' : 'not matched',
        segments: [],
        threshold: t.matched ? `bucket ${t.bucket} < ${t.percentage}` : `bucket ${t.bucket} ≥ ${t.percentage}`,
      };
    }
    if (r.type === 'segment' && r.segments) {
      return { title, subject: `${segmentSetLabel(r.segments)} → ${r.value}`, outcome: r.decided ? 'decided' : 'not matched', segments: segmentLines(r.segments) };
    }
    return { title, subject: 'neither segment nor threshold', outcome: 'skipped', segments: [] };
  });
  const rest = notEvaluated('Rollout', 'Rollouts', e.rollouts.length, e.rolloutCount);
  if (rest) steps.push(rest);
  return steps;
}

function notEvaluated(one: string, many: string, considered: number, total: number): TraceStep | undefined {
  const rest = total - considered;
  if (rest <= 0) return undefined;
  const title = rest === 1 ? `${one} ${total}` : `${many} ${considered + 1}–${total}`;
  return { title, subject: 'after the deciding one', outcome: 'not evaluated', segments: [] };
}

function segmentLines(set: ExplainedSegmentSet): SegmentLine[] {
  return set.segments.map((s) => ({
    key: s.key,
    matched: s.matched,
    match: s.constraints.length === 0 ? 'no constraints: matches everyone' : s.matchType === 'ALL_MATCH_TYPE' ? 'all constraints' : 'any constraint',
    constraints: s.constraints.map((c) => ({ matched: c.matched, text: constraintText(c) })),
  }));
}

/** Operators that take no value. */
const UNARY = new Set(['empty', 'notempty', 'present', 'notpresent', 'true', 'false']);

/** `plan eq "beta" (string); got "free"` / `entity id isoneof ["a","b"]; got "u-1"`. */
export function constraintText(c: ExplainedConstraint): string {
  const entity = c.type === 'ENTITY_ID_COMPARISON_TYPE';
  const subject = entity ? 'entity id' : c.property;
  const type = entity ? '' : ` (${c.type.replace('_COMPARISON_TYPE', '').toLowerCase()})`;
  const quoted = (c.type === 'STRING_COMPARISON_TYPE' || entity) && c.operator !== 'isoneof' && c.operator !== 'isnotoneof';
  const value = UNARY.has(c.operator) ? '' : ` ${quoted ? JSON.stringify(c.expected) : c.expected}`;
  const got = c.actual === null ? 'not in the context' : `got ${JSON.stringify(c.actual)}`;
  return `${subject} ${c.operator}${value}${type}; ${got}`;
}

function segmentSetLabel(set: ExplainedSegmentSet): string {
  const op = set.operator === 'AND_SEGMENT_OPERATOR' ? 'AND' : 'OR';
  if (set.segments.length === 0) return `no segments (${op})`;
  if (set.segments.length === 1) return `segment ${set.segments[0]!.key}`;
  return `segments ${set.segments.map((s) => s.key).join(` ${op} `)}`;
}

function matchedSegments(set: ExplainedSegmentSet): string {
  const keys = set.matchedKeys;
  if (keys.length === 0) return 'an empty AND of segments';
  return keys.length === 1 ? `segment ${keys[0]}` : `segments ${keys.join(', ')}`;
}

function range(from: number, to: number): string {
  return `[${from}, ${to})`;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
