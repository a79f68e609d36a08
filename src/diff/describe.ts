/**
 * A diff change, an impact line, in words, for the CLI's text and markdown formats and the UI's
 * diff page. Constraints read as everywhere else (evaluation/constraint-words.ts). Pure.
 */
import { constraintText as constraintWords, oneOfChange, type ConstraintLike } from '../evaluation/constraint-words.js';
import type { Change, FlagImpact, JsonValue, Position } from './types.js';

/** `50 → 60`, `"a" → "b"`, values as compact JSON. */
export function show(v: JsonValue | undefined): string {
  if (v === undefined) return '∅';
  return typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v);
}

const SHORT: Readonly<Record<string, string>> = {
  OR_SEGMENT_OPERATOR: 'OR',
  AND_SEGMENT_OPERATOR: 'AND',
  ALL_MATCH_TYPE: 'all',
  ANY_MATCH_TYPE: 'any',
};

function where(p: Position | undefined): string {
  if (p === undefined) return '';
  if (p.from === undefined) return `${p.to}`;
  if (p.to === undefined || p.to === p.from) return `${p.from}`;
  return `${p.from} (now ${p.to})`;
}

function segmentsText(v: JsonValue | undefined): string {
  return Array.isArray(v) ? v.join(', ') : show(v);
}

/** A rule's or rollout's segment set changed: the keys added and removed, then the set it now has. */
function segmentsChange(c: Change): string {
  if (!Array.isArray(c.from) || !Array.isArray(c.to)) return `segments ${arrow(c, segmentsText)}`;
  const from = c.from.map(String);
  const to = c.to.map(String);
  const added = to.filter((k) => !from.includes(k));
  const removed = from.filter((k) => !to.includes(k));
  if (added.length === 0 && removed.length === 0) return `segments reordered: ${arrow(c, segmentsText)}`;
  const parts = [added.length > 0 ? `added ${added.join(', ')}` : '', removed.length > 0 ? `removed ${removed.join(', ')}` : ''].filter((p) => p !== '');
  return `segments ${parts.join('; ')} (now ${to.length > 0 ? to.join(', ') : 'none'})`;
}

function ruleText(v: JsonValue | undefined): string {
  const r = v as { segments: string[]; operator: string; distributions: { variant: string; rollout: number }[] };
  const segs = r.segments.length > 1 ? r.segments.join(` ${SHORT[r.operator] ?? r.operator} `) : r.segments.join('');
  const dist = r.distributions.map((d) => `${d.variant} ${d.rollout}%`).join(', ');
  return `segment ${segs}${dist !== '' ? ` → ${dist}` : ''}`;
}

function rolloutText(v: JsonValue | undefined): string {
  const r = v as { threshold?: { percentage: number; value: boolean }; segment?: { segments: string[]; operator: string; value: boolean } };
  if (r.threshold !== undefined) return `threshold ${r.threshold.percentage}% → ${r.threshold.value}`;
  if (r.segment !== undefined) {
    const segs = r.segment.segments.length > 1 ? r.segment.segments.join(` ${SHORT[r.segment.operator] ?? r.segment.operator} `) : r.segment.segments.join('');
    return `segment ${segs} → ${r.segment.value}`;
  }
  return 'unknown rollout';
}

/** A constraint as the diff holds it, in the words every view uses (evaluation/constraint-words.ts). */
function constraintText(v: JsonValue | undefined): string {
  return constraintWords(v as unknown as ConstraintLike);
}

/** A changed constraint: a one-of list as the values added and removed, anything else as before → after. */
function constraintChange(from: JsonValue | undefined, to: JsonValue | undefined): string {
  return oneOfChange(from as unknown as ConstraintLike, to as unknown as ConstraintLike) ?? `${constraintText(from)} → ${constraintText(to)}`;
}

const arrow = (c: Change, f: (v: JsonValue | undefined) => string = show) => `${f(c.from)} → ${f(c.to)}`;

export function describeChange(c: Change): string {
  switch (c.kind) {
    case 'namespace.name':
      return `name ${arrow(c)}`;
    case 'namespace.description':
      return `description ${arrow(c)}`;
    case 'flag.name':
      return `name ${arrow(c)}`;
    case 'flag.description':
      return `description ${arrow(c)}`;
    case 'flag.enabled':
      return c.to === true ? 'enabled (was disabled)' : 'disabled (was enabled)';
    case 'flag.type':
      return `type ${arrow(c)}`;
    case 'flag.metadata':
      return `metadata ${c.key}: ${c.action === 'added' ? `added ${show(c.to)}` : c.action === 'removed' ? `removed (was ${show(c.from)})` : arrow(c)}`;
    case 'flag.defaultVariant':
      return `default variant ${arrow(c, (v) => (v === null || v === undefined ? '(none)' : String(v)))}`;
    case 'variant':
      return c.action === 'added' ? `variant ${c.variant} added` : `variant ${c.variant} removed`;
    case 'variant.name':
      return `variant ${c.variant}: name ${arrow(c)}`;
    case 'variant.description':
      return `variant ${c.variant}: description ${arrow(c)}`;
    case 'variant.attachment':
      return `variant ${c.variant}: attachment ${arrow(c)}`;
    case 'rule':
      if (c.action === 'added') return `rule ${where(c.rule)} added: ${ruleText(c.to)}`;
      if (c.action === 'removed') return `rule ${c.rule?.from} removed: ${ruleText(c.from)}`;
      return `rule ${c.rule?.from} moved to position ${c.rule?.to}`;
    case 'rule.segments':
      return `rule ${where(c.rule)}: ${segmentsChange(c)}`;
    case 'rule.operator':
      return `rule ${where(c.rule)}: operator ${arrow(c, (v) => SHORT[v as string] ?? String(v))}`;
    case 'distribution':
      if (c.action === 'added') return `rule ${where(c.rule)}: ${c.variant} added at ${show(c.to)}%`;
      if (c.action === 'removed') return `rule ${where(c.rule)}: ${c.variant} removed (was ${show(c.from)}%)`;
      return `rule ${where(c.rule)}: ${c.variant} ${show(c.from)}% → ${show(c.to)}%`;
    case 'rollout':
      if (c.action === 'added') return `rollout ${where(c.rollout)} added: ${rolloutText(c.to)}`;
      if (c.action === 'removed') return `rollout ${c.rollout?.from} removed: ${rolloutText(c.from)}`;
      return `rollout ${c.rollout?.from} moved to position ${c.rollout?.to}`;
    case 'rollout.type':
      return `rollout ${where(c.rollout)}: ${rolloutText(c.from)} → ${rolloutText(c.to)}`;
    case 'rollout.segments':
      return `rollout ${where(c.rollout)}: ${segmentsChange(c)}`;
    case 'rollout.operator':
      return `rollout ${where(c.rollout)}: operator ${arrow(c, (v) => SHORT[v as string] ?? String(v))}`;
    case 'rollout.value':
      return `rollout ${where(c.rollout)}: value ${arrow(c)}`;
    case 'rollout.threshold':
      return `rollout ${where(c.rollout)}: threshold ${show(c.from)}% → ${show(c.to)}%`;
    case 'rollout.description':
      return `rollout ${where(c.rollout)}: description ${arrow(c)}`;
    case 'segment.name':
      return `name ${arrow(c)}`;
    case 'segment.description':
      return `description ${arrow(c)}`;
    case 'segment.matchType':
      return `match ${arrow(c, (v) => SHORT[v as string] ?? String(v))}`;
    case 'constraint':
      if (c.action === 'added') return `constraint added: ${constraintText(c.to)}`;
      if (c.action === 'removed') return `constraint removed: ${constraintText(c.from)}`;
      return `constraint ${where(c.constraint)}: ${constraintChange(c.from, c.to)}`;
  }
}

/** `12.4% of 10,000 entities move stripe → adyen (1,240)`; the first transition, then the others. */
export function describeImpact(i: FlagImpact): string {
  const n = i.evaluated.toLocaleString('en-US');
  if (i.changed === 0) return `no change for ${n} entities`;
  return i.transitions.map((t) => `${percent(t.count / i.evaluated)} of ${n} entities move ${t.from} → ${t.to}`).join('; ');
}

export function percent(ratio: number): string {
  const p = ratio * 100;
  if (p > 0 && p < 0.1) return '<0.1%';
  return `${p.toFixed(1)}%`;
}
