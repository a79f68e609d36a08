/**
 * The explain trace of `POST /evaluate/v1/explain` in words, for the evaluation console: the
 * result as labelled fields, which rule or rollout decided in one sentence, and each step (rule or
 * rollout considered) with its segments, every constraint (expected, actual, matched or failed) and
 * the bucket against the distribution ranges. The words are `vexil evaluate`'s own
 * (src/evaluation/explain-words.ts), so the CLI and the UI say the same thing. Pure, no DOM.
 */
import { constraintLabel, formatDecision, range, segmentSetLabel } from '../../evaluation/explain-words.js';
import type { BooleanExplanation, ExplainResponse, ExplainedConstraint, ExplainedSegmentSet, VariantExplanation } from '../types.js';
import { formatPercent } from './format.js';

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
  const words = formatDecision(r.explanation);
  return `${words.charAt(0).toUpperCase()}${words.slice(1)}.`;
}

/** One constraint of a segment, in words, with its outcome. */
export interface ConstraintLine {
  matched: boolean;
  /** `plan is "beta"; got "free"`. */
  text: string;
  /** The context key this constraint read and the context did not hold (offered as a row to add). */
  missingKey?: string;
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
  /** What it tests: `segment beta-users`, `threshold 30% → true`. */
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
        subject: `threshold ${formatPercent(t.percentage)} → ${r.value}`,
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
    constraints: s.constraints.map((c) => {
      const line: ConstraintLine = { matched: c.matched, text: constraintText(c) };
      if (c.actual === null && c.type !== 'ENTITY_ID_COMPARISON_TYPE' && c.property !== '') line.missingKey = c.property;
      return line;
    }),
  }));
}

/** `plan is "beta"; got "free"` / `entity id is one of [a, b]; got "u-1"`. */
export function constraintText(c: ExplainedConstraint): string {
  return constraintLabel(c);
}
