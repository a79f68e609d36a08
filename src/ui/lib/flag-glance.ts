/**
 * What a flag does at a glance, for the flags list and the top of the flag page, decided by its
 * rules and rollouts the way the evaluator decides (flipt-semantics §2.2–§2.4), from the namespace
 * outline (`GET /api/v1/namespaces/{ns}/outline`):
 * - a boolean flag's rollouts apply whether the flag is enabled or not; `enabled` is only what
 *   entities no rollout matches get. Walking the rollouts in rank order, each one that can match
 *   adds its value; one that matches every entity (a threshold of 100%, a segment set every
 *   entity is in) ends the walk; otherwise the fall-through value is added. One value: "True" or
 *   "False"; two: "varies", with who gets which in a few words;
 * - a disabled variant flag serves its default variant (or none) to every entity; an enabled one
 *   serves its rules' variants to the entities they match and the default to the others.
 * A segment whose constraints no entity can meet still counts as "can match": "varies" may then
 * over-state, never under-state, what the flag does. Pure, no DOM.
 */
import { percentText } from './distribution-bars.js';
import { countOf } from './format.js';

export interface OutlineSegmentSet {
  segments: readonly string[];
  operator: 'AND' | 'OR';
}

export interface OutlineRollout {
  rank: number;
  value: boolean;
  percentage?: number;
  segments?: readonly string[];
  operator?: 'AND' | 'OR';
}

export interface OutlineFlag {
  key: string;
  rules: ReadonlyArray<OutlineSegmentSet & { rank: number }>;
  rollouts: readonly OutlineRollout[];
}

export interface GlanceFlag {
  type: string;
  enabled: boolean;
  defaultVariant?: { key: string } | undefined;
}

export type Glance =
  | {
      kind: 'boolean';
      serves: 'true' | 'false' | 'varies';
      /** `True`, `False` or `varies`. */
      label: string;
      /** Who gets what, in a few words: `True for segment beta, then 25% of entities; else False`. */
      detail: string;
    }
  | {
      kind: 'variant';
      /** The default variant's key, or `no variant`. */
      label: string;
      /** `2 rules, else stripe`, `disabled: stripe for every entity`. */
      detail: string;
      rules: number;
    };

/** `segment a`, `segments a AND b`; the empty sets in words. */
export function setWords(set: OutlineSegmentSet): string {
  if (set.segments.length === 0) return set.operator === 'AND' ? 'every entity' : 'no entity';
  if (set.segments.length === 1) return `segment ${set.segments[0]}`;
  return `segments ${set.segments.join(` ${set.operator} `)}`;
}

/** Every entity is in the set: AND of segments that all match everyone (or of none), OR with one such segment. */
export function matchesEveryone(set: OutlineSegmentSet, everyone: ReadonlySet<string>): boolean {
  if (set.operator === 'AND') return set.segments.every((s) => everyone.has(s));
  return set.segments.some((s) => everyone.has(s));
}

const word = (v: boolean) => (v ? 'True' : 'False');

export function booleanGlance(enabled: boolean, rollouts: readonly OutlineRollout[], everyone: ReadonlySet<string>): Glance & { kind: 'boolean' } {
  const values = new Set<boolean>();
  const steps: string[] = [];
  let everyoneReached = false;
  for (const r of [...rollouts].sort((a, b) => a.rank - b.rank)) {
    if (r.percentage !== undefined) {
      if (r.percentage <= 0) continue;
      values.add(r.value);
      if (r.percentage >= 100) {
        everyoneReached = true;
        steps.push(`${word(r.value)} for every entity`);
        break;
      }
      steps.push(`${word(r.value)} for ${percentText(r.percentage)} of entities`);
    } else {
      const set: OutlineSegmentSet = { segments: r.segments ?? [], operator: r.operator ?? 'OR' };
      if (set.operator === 'OR' && set.segments.length === 0) continue; // OR of none matches nobody
      values.add(r.value);
      if (matchesEveryone(set, everyone)) {
        everyoneReached = true;
        steps.push(`${word(r.value)} for every entity (${setWords(set)})`);
        break;
      }
      steps.push(`${word(r.value)} for ${setWords(set)}`);
    }
  }
  if (!everyoneReached) values.add(enabled);
  if (values.size === 1) {
    const only = values.has(true);
    return { kind: 'boolean', serves: only ? 'true' : 'false', label: word(only), detail: `${word(only)} for every entity` };
  }
  const shown = steps.length > 2 ? [...steps.slice(0, 2), `${countOf(steps.length - 2, 'more rollout', 'more rollouts')}`] : steps;
  return { kind: 'boolean', serves: 'varies', label: 'varies', detail: `${shown.join(', then ')}; else ${word(enabled)}` };
}

export function variantGlance(flag: GlanceFlag, rules: number): Glance & { kind: 'variant' } {
  const fallback = flag.defaultVariant?.key;
  const label = fallback ?? 'no variant';
  if (!flag.enabled) return { kind: 'variant', label, detail: `disabled: ${label} for every entity`, rules };
  if (rules === 0) return { kind: 'variant', label, detail: fallback === undefined ? 'no rules: no variant for anyone' : `no rules: ${fallback} for every entity`, rules };
  return { kind: 'variant', label, detail: `${countOf(rules, 'rule', 'rules')}, else ${label}`, rules };
}

/** The glance of a flag from its outline; `undefined` outline (not loaded yet) gives undefined. */
export function flagGlance(flag: GlanceFlag, outline: OutlineFlag | undefined, everyone: ReadonlySet<string>): Glance | undefined {
  if (outline === undefined) return undefined;
  return flag.type === 'BOOLEAN_FLAG_TYPE' ? booleanGlance(flag.enabled, outline.rollouts, everyone) : variantGlance(flag, outline.rules.length);
}
