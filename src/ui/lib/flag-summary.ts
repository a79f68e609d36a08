/**
 * The top of the flag page: what the flag serves and to whom, in one or two sentences made from
 * its rules (variant flags) or rollouts (boolean flags), in the evaluator's order (flipt-semantics
 * §2.2–§2.4): a disabled variant flag serves its default to everyone; a boolean flag's rollouts
 * apply whether it is enabled or not. The verdict for booleans is lib/flag-glance.ts's. Pure, no DOM.
 */
import { percentText } from './distribution-bars.js';
import { booleanGlance, matchesEveryone, setWords, type OutlineRollout, type OutlineSegmentSet } from './flag-glance.js';
import { countOf } from './format.js';

export interface SummaryRule extends OutlineSegmentSet {
  rank: number;
  /** Variant keys with their rollout percentages, in declared order. */
  distributions: ReadonlyArray<{ variantKey: string; rollout: number }>;
}

export interface SummaryFlag {
  type: string;
  enabled: boolean;
  defaultVariant?: { key: string } | undefined;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** `adyen`, `stripe 50% and adyen 50%`, `no variant`. */
export function servedText(distributions: SummaryRule['distributions']): string {
  const parts = distributions.filter((d) => d.rollout > 0);
  if (parts.length === 0) return 'no variant';
  const total = parts.reduce((n, d) => n + d.rollout, 0);
  if (parts.length === 1 && total >= 100) return parts[0]!.variantKey;
  const words = parts.map((d) => `${d.variantKey} ${percentText(d.rollout)}`);
  if (total < 100) words.push(`no variant ${percentText(100 - total)}`);
  return words.length === 2 ? words.join(' and ') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

function ruleText(r: SummaryRule, everyone: ReadonlySet<string>): string {
  const who = matchesEveryone(r, everyone) ? 'every entity' : `entities in ${setWords(r)}`;
  return `${who} ${who === 'every entity' ? 'gets' : 'get'} ${servedText(r.distributions)}`;
}

export function variantSummary(flag: SummaryFlag, rules: readonly SummaryRule[], everyone: ReadonlySet<string>): string[] {
  const fallback = flag.defaultVariant ? `the default variant ${flag.defaultVariant.key}` : 'no variant';
  if (!flag.enabled) {
    const out = [`Disabled: every entity gets ${fallback}.`];
    if (rules.length > 0) out.push(`Its ${countOf(rules.length, 'rule applies', 'rules apply')} only once it is enabled.`);
    return out;
  }
  const ordered = [...rules].sort((a, b) => a.rank - b.rank).filter((r) => !(r.operator === 'OR' && r.segments.length === 0));
  if (ordered.length === 0) return [`Every entity gets ${fallback}.`];
  const cut = ordered.findIndex((r) => matchesEveryone(r, everyone));
  const reached = cut >= 0 ? ordered.slice(0, cut + 1) : ordered;
  const first =
    reached.length <= 2
      ? `${cap(reached.map((r) => ruleText(r, everyone)).join('; then '))}.`
      : `${countOf(reached.length, 'rule decides', 'rules decide')}, the first: ${ruleText(reached[0]!, everyone)}.`;
  return cut >= 0 ? [first] : [first, `Everyone else gets ${fallback}.`];
}

export function booleanSummary(enabled: boolean, rollouts: readonly OutlineRollout[], everyone: ReadonlySet<string>): string[] {
  const g = booleanGlance(enabled, rollouts, everyone);
  const disabledNote = !enabled && rollouts.length > 0 ? ' Disabled only sets what entities no rollout matches get.' : '';
  if (g.serves !== 'varies') return [`Every entity gets ${g.serves}.${disabledNote}`];
  const steps: string[] = [];
  for (const r of [...rollouts].sort((a, b) => a.rank - b.rank)) {
    if (r.percentage !== undefined) {
      if (r.percentage <= 0) continue;
      steps.push(`${percentText(Math.min(r.percentage, 100))} of entities get ${r.value}`);
      if (r.percentage >= 100) break;
    } else {
      const set: OutlineSegmentSet = { segments: r.segments ?? [], operator: r.operator ?? 'OR' };
      if (set.operator === 'OR' && set.segments.length === 0) continue;
      steps.push(`entities in ${setWords(set)} get ${r.value}`);
    }
  }
  const shown = steps.length > 2 ? [...steps.slice(0, 2), `${countOf(steps.length - 2, 'more rollout', 'more rollouts')}`] : steps;
  return [`${cap(shown.join('; then '))}.`, `Everyone else gets ${enabled}.${disabledNote}`];
}
