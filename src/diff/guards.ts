/**
 * The policy file's guards on the change between a base and a head state, evaluated on their
 * semantic diff (diff.ts) and impact preview (impact.ts): the one evaluation `vexil validate
 * --base`, `vexil diff --policy` and `GET /api/v1/diff?policy=true` share. Pure: a diff, an impact
 * report and the limits in, findings out; locating a finding in a file is the caller's (the CLI
 * has the files, the server only snapshots).
 *
 * What each guard measures, exactly:
 * - `max_rollout_change` (percentage points): per flag present on both sides, the largest move of
 *   one distribution of a rule (`rollout`) or one threshold rollout's `percentage`. A rule added to
 *   the flag counts each of its distributions from 0, a removed rule each to 0; a distribution
 *   added to or removed from a kept rule likewise; a threshold rollout added counts from 0, removed
 *   to 0, and one turned into a segment rollout (or back) from (to) 0. Segment rollouts, rule
 *   segments, `enabled` and the default variant carry no percentage and are not measured here
 *   (`max_impact_share` measures what they do). Flags added or removed, and the flags of a namespace
 *   added or removed, are not measured: no entity had an outcome on one side. A move equal to the
 *   limit passes. Figures are compared to a thousandth of a point, so 33.3 + 0.1 does not fail a
 *   limit of 33.4 on float rounding.
 * - `protected`: deleting a protected flag (by the flag, or by deleting its namespace) and turning
 *   one from enabled to disabled fail; `flags` absent protects every flag of the namespace. Deleting
 *   a protected namespace that holds no flag fails too (one finding without a flag).
 * - `max_impact_share` (0..1): per flag the impact preview evaluated (changed flags, and unchanged
 *   ones reading a changed segment, on both sides), the share of sample entities whose outcome
 *   changes; a share equal to the limit passes. When the guard cannot see everything it says so in
 *   one `guard.impact.unmeasured` finding (information, never a failure): no impact sample, flags
 *   beyond the preview's limits, or a synthetic sample without test contexts.
 */
import type { Severity } from '../model/problem.js';
import type { Guards } from '../state/policy/policy-file.js';
import { RULES, type RuleId } from '../state/rules.js';
import type { Change, ImpactReport, SnapshotDiff } from './types.js';

export type GuardRule = Extract<RuleId, `guard.${string}`>;

export interface GuardFinding {
  readonly rule: GuardRule;
  readonly severity: Severity;
  /** Absent for a finding about the whole change (guard.impact.unmeasured). */
  readonly namespace?: string;
  /** Absent for a finding about a whole namespace, or the whole change. */
  readonly flag?: string;
  /** Which state declares what the finding is about: the head, or the base for a deleted flag or namespace. */
  readonly side: 'head' | 'base';
  /** The field of the flag the finding points at (its key when absent). */
  readonly field?: 'rules' | 'rollouts' | 'enabled';
  readonly message: string;
  readonly hint: string;
}

export function evaluateGuards(d: SnapshotDiff, guards: Guards, impact: ImpactReport | undefined): GuardFinding[] {
  const out: GuardFinding[] = [];
  if (guards.protected.length > 0) protectedFindings(d, guards, out);
  if (guards.maxRolloutChange !== undefined) rolloutFindings(d, guards.maxRolloutChange, out);
  if (guards.maxImpactShare !== undefined) impactFindings(d, guards.maxImpactShare, impact, out);
  return out;
}

/** Whether any finding fails the change (an error). */
export function guardsFailed(findings: readonly { readonly severity: Severity }[]): boolean {
  return findings.some((f) => f.severity === 'error');
}

function finding(rule: GuardRule, fields: Omit<GuardFinding, 'rule' | 'severity' | 'hint'> & { hint?: string }): GuardFinding {
  return { rule, severity: RULES[rule].severity, hint: RULES[rule].hint, ...fields };
}

// ----- protected -----------------------------------------------------------------------------------

function protectedFindings(d: SnapshotDiff, guards: Guards, out: GuardFinding[]): void {
  for (const ns of d.namespaces) {
    const entries = guards.protected.filter((p) => p.namespace === ns.key);
    if (entries.length === 0) continue;
    const everyFlag = entries.some((p) => p.flags === undefined);
    const named = new Set(entries.flatMap((p) => p.flags ?? []));
    const isProtected = (flag: string) => everyFlag || named.has(flag);
    const where = `\`${ns.key}\``;
    if (ns.status === 'removed' && ns.flags.length === 0 && everyFlag) {
      out.push(finding('guard.protected', { namespace: ns.key, side: 'base', message: `namespace ${where} is deleted; the policy protects it (guards.protected)` }));
    }
    for (const f of ns.flags) {
      if (!isProtected(f.key)) continue;
      const flag = `flag \`${ns.key}/${f.key}\``;
      const rule = everyFlag ? `every flag of namespace ${where}` : 'it';
      if (f.status === 'removed') {
        const how = ns.status === 'removed' ? `is deleted with its namespace ${where}` : 'is deleted';
        out.push(finding('guard.protected', { namespace: ns.key, flag: f.key, side: 'base', message: `${flag} ${how}; the policy protects ${rule} from deletion (guards.protected)` }));
      } else if (f.changes.some((c) => c.kind === 'flag.enabled' && c.from === true && c.to === false)) {
        out.push(finding('guard.protected', { namespace: ns.key, flag: f.key, side: 'head', field: 'enabled', message: `${flag} is disabled; the policy protects ${rule} from being disabled (guards.protected)` }));
      }
    }
  }
}

// ----- max_rollout_change ---------------------------------------------------------------------------

interface Move {
  readonly points: number;
  readonly what: string;
  readonly field: 'rules' | 'rollouts';
}

/** Percentages rounded to a thousandth: the figures a person wrote, without float noise. */
const round = (n: number) => Math.round(n * 1000) / 1000;
const pct = (n: number) => `${round(n)}%`;
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

function rolloutFindings(d: SnapshotDiff, limit: number, out: GuardFinding[]): void {
  for (const ns of d.namespaces) {
    if (ns.status !== 'changed') continue;
    for (const f of ns.flags) {
      if (f.status !== 'changed') continue;
      let largest: Move | undefined;
      for (const c of f.changes) {
        for (const m of movesOf(c)) if (largest === undefined || round(m.points) > round(largest.points)) largest = m;
      }
      if (largest === undefined || round(largest.points) <= round(limit)) continue;
      out.push(finding('guard.max-rollout-change', {
        namespace: ns.key, flag: f.key, side: 'head', field: largest.field,
        message: `flag \`${ns.key}/${f.key}\`: ${largest.what}, a move of ${round(largest.points)} percentage points; the policy allows at most ${round(limit)} per change (guards.max_rollout_change)`,
      }));
    }
  }
}

/** The percentage moves one change item makes (see the header for what counts). */
function movesOf(c: Change): Move[] {
  const rank = (p: { from?: number; to?: number } | undefined) => p?.to ?? p?.from ?? 0;
  switch (c.kind) {
    case 'distribution': {
      const from = num(c.from);
      const to = num(c.to);
      return [{ points: Math.abs(to - from), field: 'rules', what: `rule ${rank(c.rule)} moves variant \`${c.variant}\` ${pct(from)} → ${pct(to)}${c.action === 'added' ? ' (added)' : c.action === 'removed' ? ' (removed)' : ''}` }];
    }
    case 'rule': {
      if (c.action !== 'added' && c.action !== 'removed') return [];
      const rule = (c.action === 'added' ? c.to : c.from) as { distributions?: { variant: string; rollout: number }[] } | null;
      return (rule?.distributions ?? []).map((dist) => ({
        points: dist.rollout,
        field: 'rules' as const,
        what: c.action === 'added'
          ? `rule ${rank(c.rule)} is added, giving variant \`${dist.variant}\` ${pct(dist.rollout)} (from 0%)`
          : `rule ${rank(c.rule)} is removed, taking variant \`${dist.variant}\` from ${pct(dist.rollout)} to 0%`,
      }));
    }
    case 'rollout.threshold':
      return [{ points: Math.abs(num(c.to) - num(c.from)), field: 'rollouts', what: `rollout ${rank(c.rollout)} moves its threshold ${pct(num(c.from))} → ${pct(num(c.to))}` }];
    case 'rollout':
    case 'rollout.type': {
      const threshold = (v: unknown) => (v as { threshold?: { percentage: number } } | null | undefined)?.threshold?.percentage;
      const from = c.action === 'added' ? undefined : threshold(c.from);
      const to = c.action === 'removed' ? undefined : threshold(c.to);
      if (from === undefined && to === undefined) return [];
      const what =
        c.kind === 'rollout'
          ? c.action === 'added' ? `threshold rollout ${rank(c.rollout)} is added at ${pct(to ?? 0)} (from 0%)` : `threshold rollout ${rank(c.rollout)} is removed (${pct(from ?? 0)} to 0%)`
          : to === undefined ? `rollout ${rank(c.rollout)} turns from a ${pct(from ?? 0)} threshold into a segment rollout (to 0%)` : `rollout ${rank(c.rollout)} turns into a ${pct(to)} threshold (from 0%)`;
      if (c.kind === 'rollout' && c.action !== 'added' && c.action !== 'removed') return [];
      return [{ points: Math.abs((to ?? 0) - (from ?? 0)), field: 'rollouts', what }];
    }
    default:
      return [];
  }
}

// ----- max_impact_share -----------------------------------------------------------------------------

function impactFindings(d: SnapshotDiff, limit: number, impact: ImpactReport | undefined, out: GuardFinding[]): void {
  const flagsChanged = d.namespaces.some((ns) => ns.status === 'changed' && (ns.flags.some((f) => f.status === 'changed') || ns.segments.length > 0));
  if (impact === undefined) {
    if (flagsChanged) out.push(finding('guard.impact.unmeasured', { side: 'head', message: 'guards.max_impact_share is not checked: no impact sample was taken (an impact of 0 entities)', hint: 'take the impact preview (the default 10,000 entities, or --impact N with N > 0)' }));
    return;
  }
  for (const f of impact.flags) {
    if (f.evaluated === 0 || f.ratio <= limit) continue;
    const share = `${round(f.ratio * 100)}%`;
    out.push(finding('guard.max-impact-share', {
      namespace: f.namespace, flag: f.flag, side: 'head',
      message: `flag \`${f.namespace}/${f.flag}\`: the outcome changes for ${f.changed.toLocaleString('en-US')} of ${f.evaluated.toLocaleString('en-US')} sample entities (${share}); the policy allows at most ${round(limit * 100)}% (guards.max_impact_share)`,
    }));
  }
  const gaps: string[] = [];
  if (impact.omittedFlags > 0) gaps.push(`${impact.omittedFlags} flag(s) beyond the impact preview's limits are not measured`);
  if (impact.sample.entities === 0 && impact.flags.length > 0) gaps.push('the sample has no entity');
  else if (impact.sample.source === 'synthetic' && impact.sample.contexts === 0 && impact.flags.length > 0) {
    gaps.push(`the ${impact.sample.entities.toLocaleString('en-US')} synthetic entities have an empty context because the head state has no flag test contexts, so rules and rollouts behind constraints are not reached`);
  }
  if (gaps.length > 0) out.push(finding('guard.impact.unmeasured', { side: 'head', message: `guards.max_impact_share is measured in part only: ${gaps.join('; ')}` }));
}
