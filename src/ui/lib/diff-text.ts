/**
 * The diff page's words: its address (base, head, namespace, impact), the per-namespace summary,
 * each change item and the impact preview of `GET /api/v1/diff`. A change is worded by
 * src/diff/describe.ts, the same words `vexil diff` prints (a pure module of the API's own types,
 * bundled into the UI), so the page and the CLI never disagree. Pure, no DOM.
 */
import { describeChange, percent } from '../../diff/describe.js';
import type { Change, DiffReport, FlagImpact, NamespaceDiff } from '../../diff/types.js';

export type { Change, DiffReport, FlagImpact, NamespaceDiff };

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

/** The API query for a valid setup (`impact` left out when 0 or empty). */
export function diffApiQuery(s: DiffSetup): Record<string, string | undefined> {
  const impact = s.impact.trim();
  return {
    base: s.base.trim(),
    head: s.head.trim(),
    namespace: s.namespace.trim() || undefined,
    impact: impact === '' || Number(impact) === 0 ? undefined : String(Number(impact)),
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
  if (i.changed === 0) return `No change for ${n} entities.`;
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
