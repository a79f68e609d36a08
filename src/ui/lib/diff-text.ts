/**
 * The diff page's words: its address (base, head, namespace, impact), the per-namespace summary,
 * each change item and the impact preview of `GET /api/v1/diff`. A change is worded by
 * src/diff/describe.ts, the same words `vexil diff` prints (a pure module of the API's own types,
 * bundled into the UI), so the page and the CLI never disagree; "Copy as Markdown" is
 * src/diff/format-markdown.ts on the API's answer, the text `vexil diff --format markdown` writes.
 * Also here: the entries a large diff is filtered by (changed, added, removed, impact > 0) with
 * their counts, the guard findings of each flag, and an added or removed flag's summary (type,
 * enabled, one line per rule or rollout). Pure, no DOM.
 */
import { describeChange, describeImpact, percent } from '../../diff/describe.js';
import { formatMarkdown } from '../../diff/format-markdown.js';
import type { Change, DiffReport, EntryStatus, FlagImpact, GuardProblem, NamespaceDiff } from '../../diff/types.js';
import type { Flag, Rollout, Rule } from '../types.js';
import { percentText } from './distribution-bars.js';
import { everyoneElseText, rolloutText, segmentSetText } from './rule-text.js';

export type { Change, DiffReport, FlagImpact, GuardProblem, NamespaceDiff };

/** Entities in the impact preview when the address names none. */
export const DEFAULT_IMPACT = 10_000;
/** The API's upper bound (src/diff/impact.ts MAX_IMPACT_ENTITIES). */
export const MAX_IMPACT = 100_000;

export interface DiffSetup {
  base: string;
  head: string;
  namespace: string;
  /** Entities in the impact preview, as typed (0 = none). */
  impact: string;
}

export function parseDiffQuery(query: URLSearchParams): DiffSetup {
  return {
    base: query.get('base') ?? '',
    head: query.get('head') ?? '',
    namespace: query.get('namespace') ?? '',
    impact: query.get('impact') ?? String(DEFAULT_IMPACT),
  };
}

/** The setup's query parameters for the page's address (the caller adds `ref`). */
export function diffQuery(s: DiffSetup): Record<string, string | undefined> {
  return { base: s.base.trim() || undefined, head: s.head.trim() || undefined, namespace: s.namespace.trim() || undefined, impact: s.impact.trim() };
}

/** Why the setup cannot be compared yet, or undefined when it can. */
export function diffSetupError(s: DiffSetup): string | undefined {
  if (s.base.trim() === '') return 'Choose a base reference.';
  if (s.head.trim() === '') return 'Choose a head reference.';
  const impact = s.impact.trim();
  if (impact !== '' && (!/^\d{1,7}$/.test(impact) || Number(impact) > MAX_IMPACT)) {
    return `Impact entities must be a whole number from 0 to ${MAX_IMPACT.toLocaleString('en-US')}.`;
  }
  return undefined;
}

/**
 * The API query for a valid setup (`impact` left out when 0 or empty); `policy=auto`: the guards of
 * the policy file of the base (else the head) when either has one.
 */
export function diffApiQuery(s: DiffSetup): Record<string, string | undefined> {
  const impact = s.impact.trim();
  return {
    base: s.base.trim(),
    head: s.head.trim(),
    namespace: s.namespace.trim() || undefined,
    impact: impact === '' || Number(impact) === 0 ? undefined : String(Number(impact)),
    policy: 'auto',
  };
}

export interface NamespaceSummary {
  namespace: string;
  status: NamespaceDiff['status'];
  flags: { added: number; removed: number; changed: number };
  segments: { added: number; removed: number; changed: number };
}

/** Per namespace: flags and segments added, removed, changed. */
export function namespaceSummaries(report: DiffReport): NamespaceSummary[] {
  return report.namespaces.map((ns) => ({
    namespace: ns.key,
    status: ns.status,
    flags: countStatuses(ns.flags),
    segments: countStatuses(ns.segments),
  }));
}

function countStatuses(entries: readonly { status: string }[]): { added: number; removed: number; changed: number } {
  const n = { added: 0, removed: 0, changed: 0 };
  for (const e of entries) if (e.status === 'added' || e.status === 'removed' || e.status === 'changed') n[e.status]++;
  return n;
}

/** The whole comparison in one sentence (shown first and announced). */
export function overallText(report: DiffReport): string {
  if (!report.changed) return 'No differences between base and head.';
  const s = report.summary;
  const parts = [
    counted(s.flagsAdded, 'flag', 'added'),
    counted(s.flagsRemoved, 'flag', 'removed'),
    counted(s.flagsChanged, 'flag', 'changed'),
    counted(s.segmentsAdded, 'segment', 'added'),
    counted(s.segmentsRemoved, 'segment', 'removed'),
    counted(s.segmentsChanged, 'segment', 'changed'),
    counted(s.namespacesAdded, 'namespace', 'added'),
    counted(s.namespacesRemoved, 'namespace', 'removed'),
  ].filter((p) => p !== '');
  return parts.length > 0 ? `${capitalise(parts.join(', '))}.` : 'Namespace names or descriptions changed.';
}

function counted(n: number, noun: string, what: string): string {
  return n === 0 ? '' : `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'} ${what}`;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** A change item in words (`rule 2: adyen 50% → 60%`, `enabled (was disabled)`, `rule 1 moved to position 2`). */
export function changeText(c: Change): string {
  return describeChange(c);
}

/** What an added or removed flag/segment shows instead of change items. */
export function entryStatusText(status: 'added' | 'removed' | 'changed', what: 'flag' | 'segment'): string {
  return status === 'added' ? `New ${what} (only in head).` : status === 'removed' ? `Removed ${what} (only in base).` : '';
}

/** What the impact preview was evaluated on, in one sentence. */
export function sampleText(sample: NonNullable<DiffReport['impact']>['sample']): string {
  const n = sample.entities.toLocaleString('en-US');
  if (sample.source === 'contexts-file') return `Impact preview over ${n} entities from a contexts file.`;
  if (sample.contexts === 0) return `Impact preview over ${n} synthetic entities with an empty context (the head has no flag test contexts).`;
  if (sample.contexts === 1) return `Impact preview over ${n} synthetic entities, each given the one context of the head's flag test files.`;
  return `Impact preview over ${n} synthetic entities, each given in turn one of the ${sample.contexts.toLocaleString('en-US')} contexts of the head's flag test files.`;
}

/** The impact of one flag in one line: `12.4% of 10,000 entities move stripe → adyen`. */
export function impactHeadline(i: FlagImpact): string {
  const n = i.evaluated.toLocaleString('en-US');
  if (i.changed === 0) return `No change for ${n} sampled entities.`;
  const only = i.transitions.length === 1 ? i.transitions[0] : undefined;
  if (only !== undefined) return `${percent(i.ratio)} of ${n} entities move ${only.from} → ${only.to}`;
  return `${percent(i.ratio)} of ${n} entities change outcome (${plural(i.transitions.length, 'transition')})`;
}

/** A transition's share of the sample (`12.4%`) and count (`1,240`). */
export function transitionShare(count: number, evaluated: number): { percent: string; count: string } {
  return { percent: percent(evaluated === 0 ? 0 : count / evaluated), count: count.toLocaleString('en-US') };
}

/** The impact entries of one namespace's flag, by flag key (namespace/flag). */
export function impactByFlag(report: DiffReport): Map<string, FlagImpact> {
  const out = new Map<string, FlagImpact>();
  for (const i of report.impact?.flags ?? []) out.set(`${i.namespace}/${i.flag}`, i);
  return out;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** What the page shows of a comparison: every entry, or only those changed, added, removed, or with an impact. */
export type DiffFilter = 'all' | 'changed' | 'added' | 'removed' | 'impact';

export const DIFF_FILTERS: readonly { id: DiffFilter; label: string }[] = [
  { id: 'all', label: 'All' },
  { id: 'changed', label: 'Changed' },
  { id: 'added', label: 'Added' },
  { id: 'removed', label: 'Removed' },
  { id: 'impact', label: 'Impact > 0' },
];

/**
 * One flag or segment of the comparison. `via-segment`: a flag whose own definition is unchanged
 * but which reads a changed segment (the impact preview evaluated it; listed even when the sample
 * shows no change, as `vexil diff` lists it).
 */
export interface DiffEntry {
  readonly what: 'flag' | 'segment';
  readonly namespace: string;
  readonly key: string;
  readonly status: EntryStatus | 'via-segment';
  readonly type?: 'VARIANT_FLAG_TYPE' | 'BOOLEAN_FLAG_TYPE';
  readonly changes: readonly Change[];
  readonly impact?: FlagImpact;
  /** The guard findings about this flag (policy of the base, else the head). */
  readonly guards: readonly GuardProblem[];
}

export interface NamespaceEntries {
  readonly ns: NamespaceDiff;
  readonly entries: readonly DiffEntry[];
  /** Findings about the namespace as a whole (no flag named). */
  readonly guards: readonly GuardProblem[];
}

/** Per namespace of the report (and of the impact, for a namespace changed only through its segments): its entries, flags first. */
export function diffEntries(report: DiffReport): NamespaceEntries[] {
  const impacts = impactByFlag(report);
  const findings = report.guards?.findings ?? [];
  const guardsOf = (ns: string, flag: string | undefined) => findings.filter((g) => g.namespace === ns && g.flag === flag);
  const out: NamespaceEntries[] = [];
  for (const ns of report.namespaces) {
    const listed = new Set(ns.flags.map((f) => f.key));
    const entries: DiffEntry[] = ns.flags.map((f) => ({
      what: 'flag',
      namespace: ns.key,
      key: f.key,
      status: f.status,
      type: f.type,
      changes: f.changes,
      guards: guardsOf(ns.key, f.key),
      ...optionalImpact(impacts.get(`${ns.key}/${f.key}`)),
    }));
    for (const i of report.impact?.flags ?? []) {
      if (i.namespace !== ns.key || listed.has(i.flag)) continue;
      entries.push({ what: 'flag', namespace: ns.key, key: i.flag, status: 'via-segment', changes: [], impact: i, guards: guardsOf(ns.key, i.flag) });
    }
    for (const g of ns.segments) entries.push({ what: 'segment', namespace: ns.key, key: g.key, status: g.status, changes: g.changes, guards: [] });
    out.push({ ns, entries, guards: guardsOf(ns.key, undefined) });
  }
  return out;
}

function optionalImpact(i: FlagImpact | undefined): { impact?: FlagImpact } {
  return i === undefined ? {} : { impact: i };
}

export function matchesFilter(e: DiffEntry, filter: DiffFilter): boolean {
  if (filter === 'all') return true;
  if (filter === 'impact') return e.impact !== undefined && e.impact.changed > 0;
  return e.status === filter;
}

/** How many entries each filter shows. */
export function filterCounts(all: readonly NamespaceEntries[]): Record<DiffFilter, number> {
  const n: Record<DiffFilter, number> = { all: 0, changed: 0, added: 0, removed: 0, impact: 0 };
  for (const ns of all) for (const e of ns.entries) for (const f of DIFF_FILTERS) if (matchesFilter(e, f.id)) n[f.id]++;
  return n;
}

/** Entries at or under which namespaces and entries start open; a larger comparison starts collapsed. */
export const OPEN_UP_TO = 25;

/** The entry's line in its collapsed form: `3 changes · 12.4% of 10,000 entities move stripe → adyen`. */
export function entryLine(e: DiffEntry): string {
  const parts: string[] = [];
  if (e.status === 'via-segment') parts.push('reads a changed segment');
  else if (e.changes.length > 0) parts.push(plural(e.changes.length, 'change'));
  if (e.impact !== undefined) {
    const none = `no change for ${e.impact.evaluated.toLocaleString('en-US')} sampled entities`;
    parts.push(e.impact.changed > 0 ? `impact ${percent(e.impact.ratio)}` : e.status === 'via-segment' ? none : `impact: ${none}`);
  }
  const errors = e.guards.filter((g) => g.severity === 'error').length;
  if (errors > 0) parts.push(`${plural(errors, 'guard')} failed`);
  else if (e.guards.length > 0) parts.push(plural(e.guards.length, 'guard finding'));
  return parts.join(' · ');
}

/** A flag read through a changed segment, in one sentence (`vexil diff`'s words for its impact). */
export function viaSegmentText(i: FlagImpact): string {
  return `Unchanged itself, it reads a changed segment: ${describeImpact(i).replace(/^no change for ([\d,]+) entities$/, 'no change for $1 sampled entities')}.`;
}

/** The guards' verdict in one line: `Guards of .vexil/policy.yml (base): 2 failed` / `passed`. */
export function guardsHeadline(g: NonNullable<DiffReport['guards']>): string {
  const failed = g.findings.filter((f) => f.severity === 'error').length;
  const from = g.from === 'option' ? '' : ` (from the ${g.from})`;
  return `Guards of ${g.policy}${from}: ${g.failed ? `failed, ${plural(failed, 'error')}` : 'passed'}${g.findings.length > failed ? `, ${plural(g.findings.length - failed, 'other finding')}` : ''}.`;
}

/** `error guard.max-rollout-change: <message>`. */
export function guardText(g: GuardProblem): string {
  return `${g.severity} ${g.rule}: ${g.message}`;
}

/**
 * The text of "Copy as Markdown": `vexil diff --format markdown`'s for the same base, head,
 * namespace and impact (src/diff/format-markdown.ts on the API's answer). The guards are left out:
 * the CLI adds them only with `--policy`, located in files the server does not have; so is an
 * impact preview the setup did not ask for (taken for the impact guard), as `--impact 0` has none.
 */
export function diffMarkdown(report: DiffReport, impactAsked: boolean): string {
  // The impact the guards took on their own (policy max_impact_share) is not the one asked for.
  const { guards: _guards, impact, ...rest } = report;
  return formatMarkdown(impactAsked && impact !== undefined ? { ...rest, impact } : rest);
}

/**
 * An added or removed flag in a few lines: what it is (type, enabled, default variant), then each
 * rule (variant flag) or rollout and what everyone else gets (boolean flag), one line each.
 */
export function flagSummaryLines(flag: Flag, rules: readonly Rule[], rollouts: readonly Rollout[]): string[] {
  const boolean = flag.type === 'BOOLEAN_FLAG_TYPE';
  const head = `${boolean ? 'Boolean' : 'Variant'} flag, ${flag.enabled ? 'enabled' : 'disabled'}`;
  const lines: string[] = [];
  if (boolean) {
    lines.push(`${head}, ${plural(rollouts.length, 'rollout')}.`);
    [...rollouts].sort((a, b) => a.rank - b.rank).forEach((r, i) => lines.push(`Rollout ${i + 1}: ${rolloutText(r)}`));
    lines.push(capitalise(everyoneElseText(flag.enabled)));
    return lines;
  }
  const variants = flag.variants.map((v) => v.key);
  const def = flag.defaultVariant !== undefined ? `, default variant ${flag.defaultVariant.key}` : ', no default variant';
  lines.push(`${head}${def}; variants ${variants.length > 0 ? variants.join(', ') : '(none)'}; ${plural(rules.length, 'rule')}.`);
  const keyOf = new Map(flag.variants.map((v) => [v.id, v.key]));
  [...rules]
    .sort((a, b) => a.rank - b.rank)
    .forEach((r, i) => {
      const dist = r.distributions.map((d) => `${keyOf.get(d.variantId) ?? d.variantId} ${percentText(d.rollout)}`).join(', ');
      lines.push(`Rule ${i + 1}: ${segmentSetText(r)} → ${dist !== '' ? dist : 'a match without a variant (no distributions)'}`);
    });
  return lines;
}
