/**
 * The explain trace as text for people (`vexil evaluate`, failing cases of `vexil test`): the
 * result in one line, the decision in one line, and the trace (rules/rollouts considered, their
 * segments and each constraint with the value it was compared with). Pure wording, shared by the CLI
 * and the web UI's console (src/ui/lib/explain-text.ts), so both say the same thing.
 */
import type {
  BooleanExplanation,
  ConstraintExplanation,
  Explanation,
  RolloutExplanation,
  RuleExplanation,
  SegmentSetExplanation,
  VariantExplanation,
} from './explain.js';
import { constraintText } from './constraint-words.js';

const YES = '✓';
const NO = '✗';

/** `variant dark, match, MATCH_EVALUATION_REASON, segments internal-users` / `enabled true, ...`. */
export function formatResult(e: Explanation): string {
  const keys = e.result.segmentKeys.length > 0 ? `, segments ${e.result.segmentKeys.join(', ')}` : ', no segments';
  if (e.flagType === 'BOOLEAN_FLAG_TYPE') return `enabled ${e.result.enabled}, ${e.result.reason}${keys}`;
  const variant = e.result.variantKey === '' ? 'no variant' : `variant ${e.result.variantKey}`;
  return `${variant}, ${e.result.match ? 'match' : 'no match'}, ${e.result.reason}${keys}`;
}

/** Which rule/rollout decided and why, in one line. */
export function formatDecision(e: Explanation): string {
  return e.flagType === 'VARIANT_FLAG_TYPE' ? variantDecision(e) : booleanDecision(e);
}

function variantDecision(e: VariantExplanation): string {
  const fallback = e.defaultVariant === '' ? 'no variant (the flag has no default variant)' : `the default variant ${e.defaultVariant}`;
  const d = e.decision;
  switch (d.by) {
    case 'flag-disabled':
      return `the flag is disabled: ${fallback}`;
    case 'no-rule-matched':
      return e.ruleCount === 0 ? `the flag has no rules: ${fallback}` : `no rule matched (${plural(e.ruleCount, 'rule')}): ${fallback}`;
    case 'rule': {
      const rule = e.rules.find((r) => r.rank === d.rank)!;
      const head = `rule ${d.rank} decided: ${matchedSegments(rule.segments)} matched`;
      if (d.outcome === 'no-distributions') return `${head}; it has no distributions, so ${fallback}`;
      const b = rule.bucket!;
      if (d.outcome === 'distribution') {
        const hit = b.distributions.find((x) => x.variantKey === b.variantKey && b.value >= x.from && b.value < x.to)!;
        return `${head}, bucket ${b.value} is in ${hit.variantKey} ${range(hit.from, hit.to)}`;
      }
      const top = b.distributions.at(-1)?.to ?? 0;
      return `${head}, but bucket ${b.value} is outside every distribution (they cover ${range(0, top)}): no match, ${fallback}`;
    }
  }
}

function booleanDecision(e: BooleanExplanation): string {
  const d = e.decision;
  if (d.by === 'no-rollout-matched') {
    const why = e.rolloutCount === 0 ? 'the flag has no rollouts' : `no rollout matched (${plural(e.rolloutCount, 'rollout')})`;
    return `${why}: the flag's enabled value, ${e.enabled}`;
  }
  const r = e.rollouts.find((x) => x.rank === d.rank)!;
  if (d.type === 'threshold') {
    const t = r.threshold!;
    return `rollout ${d.rank} decided: threshold ${t.percentage} %, bucket ${t.bucket} < ${t.percentage} → ${r.value}`;
  }
  return `rollout ${d.rank} decided: ${matchedSegments(r.segments!)} matched → ${r.value}`;
}

/** The trace, one string per line (without indentation of its own beyond nesting). */
export function formatTrace(e: Explanation): string[] {
  const out: string[] = [];
  if (e.flagType === 'VARIANT_FLAG_TYPE') {
    if (e.decision.by === 'flag-disabled') {
      out.push('flag disabled: no rule evaluated');
      return out;
    }
    if (e.ruleCount === 0) out.push('no rules');
    for (const rule of e.rules) traceRule(rule, out);
    const rest = e.ruleCount - e.rules.length;
    if (rest > 0) out.push(rest === 1 ? `rule ${e.ruleCount}: not evaluated` : `rules ${e.rules.length + 1}-${e.ruleCount}: not evaluated`);
  } else {
    if (e.rolloutCount === 0) out.push('no rollouts');
    for (const rollout of e.rollouts) traceRollout(rollout, out);
    const rest = e.rolloutCount - e.rollouts.length;
    if (rest > 0) {
      out.push(rest === 1 ? `rollout ${e.rolloutCount}: not evaluated` : `rollouts ${e.rollouts.length + 1}-${e.rolloutCount}: not evaluated`);
    }
    if (e.decision.by === 'no-rollout-matched') out.push(`fall-through: the flag's enabled value, ${e.enabled}`);
  }
  return out;
}

function traceRule(rule: RuleExplanation, out: string[]): void {
  const verdict = rule.decided ? 'matched, decides' : 'not matched';
  out.push(`rule ${rule.rank}: ${segmentSetLabel(rule.segments)}: ${verdict}`);
  traceSegments(rule.segments, out);
  const b = rule.bucket;
  if (b !== undefined) {
    const parts = b.distributions.map((d) => `${d.variantKey} ${range(d.from, d.to)}${d.variantKey === b.variantKey && b.value >= d.from && b.value < d.to ? ` ${YES}` : ''}`);
    const tail = b.variantKey === null ? ` ${NO} outside every distribution` : '';
    out.push(`  bucket ${b.value} of 0-999: ${parts.join(', ')}${tail}`);
  }
}

function traceRollout(r: RolloutExplanation, out: string[]): void {
  if (r.type === 'threshold') {
    const t = r.threshold!;
    const cmp = t.matched ? `${t.bucket} < ${t.percentage}: matched, decides` : `${t.bucket} ≥ ${t.percentage}: not matched`;
    out.push(`rollout ${r.rank}: threshold ${t.percentage} % → ${r.value}: bucket ${cmp}`);
    return;
  }
  if (r.type === 'none') {
    out.push(`rollout ${r.rank}: neither segment nor threshold: skipped`);
    return;
  }
  const set = r.segments!;
  out.push(`rollout ${r.rank}: ${segmentSetLabel(set)} → ${r.value}: ${r.decided ? 'matched, decides' : 'not matched'}`);
  traceSegments(set, out);
}

function traceSegments(set: SegmentSetExplanation, out: string[]): void {
  for (const s of set.segments) {
    const kind = s.matchType === 'ALL_MATCH_TYPE' ? 'ALL' : 'ANY';
    const empty = s.constraints.length === 0 ? ', no constraints: matches everyone' : '';
    out.push(`  ${s.matched ? YES : NO} segment ${s.key} (${kind}${empty})`);
    for (const c of s.constraints) out.push(`      ${c.matched ? YES : NO} ${constraintLabel(c)}`);
  }
}

/** A constraint of the trace: the words every view uses, then what the context held. */
export function constraintLabel(c: ConstraintExplanation): string {
  const got = c.actual === null ? 'not in the context' : `got ${JSON.stringify(c.actual)}`;
  return `${constraintText({ type: c.type, property: c.property, operator: c.operator, value: c.expected })}; ${got}`;
}

export function segmentSetLabel(set: SegmentSetExplanation): string {
  if (set.segments.length === 0) return `no segments (${set.operator === 'AND_SEGMENT_OPERATOR' ? 'AND' : 'OR'})`;
  if (set.segments.length === 1) return `segment ${set.segments[0]!.key}`;
  return `segments ${set.segments.map((s) => s.key).join(set.operator === 'AND_SEGMENT_OPERATOR' ? ' AND ' : ' OR ')}`;
}

export function matchedSegments(set: SegmentSetExplanation): string {
  const keys = set.matchedKeys;
  if (keys.length === 0) return 'an empty AND of segments';
  return keys.length === 1 ? `segment ${keys[0]}` : `segments ${keys.join(', ')}`;
}

export function range(from: number, to: number): string {
  return `[${from}, ${to})`;
}

export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
