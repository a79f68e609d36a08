/**
 * Which flags use a segment, from vexil's light reads (src/server/outline/): the segments list
 * counts each segment's flags from the namespace outline (`GET /api/v1/namespaces/{ns}/outline`),
 * the segment page lists them from `GET .../segments/{key}/usage` (flags and the ranks of their
 * rules and rollouts naming it, a few bytes per flag instead of the evaluation snapshot). Also the
 * segments list's search. Pure, no DOM.
 */
import { countOf } from './format.js';

/** The part of the outline read here. */
export interface UsageOutline {
  flags: ReadonlyArray<{
    key: string;
    rules: ReadonlyArray<{ segments: readonly string[] }>;
    rollouts: ReadonlyArray<{ segments?: readonly string[] }>;
  }>;
}

/** Number of flags naming each segment (in a rule or a rollout; a flag counts once). */
export function usageCounts(outline: UsageOutline): Map<string, number> {
  const counts = new Map<string, number>();
  for (const f of outline.flags) {
    const named = new Set<string>();
    for (const r of f.rules) for (const s of r.segments) named.add(s);
    for (const r of f.rollouts) for (const s of r.segments ?? []) named.add(s);
    for (const s of named) counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  return counts;
}

export interface UsageFlag {
  key: string;
  name: string;
  rules: readonly number[];
  rollouts: readonly number[];
}

/** `rule 1, rule 3` or `rollout 2`: where in the flag, by rank. */
export function whereText(use: UsageFlag): string {
  return [...use.rules.map((r) => `rule ${r}`), ...use.rollouts.map((r) => `rollout ${r}`)].join(', ');
}

/** `1 flag uses this segment.` / `3,000 flags use this segment.` */
export function usageHeadline(n: number): string {
  if (n === 0) return 'No flag uses this segment.';
  return `${countOf(n, 'flag uses', 'flags use')} this segment.`;
}

export interface SearchableSegment {
  key: string;
  name: string;
  description: string;
  constraints: readonly unknown[];
}

/** Segments whose key, name, description or constraints in words contain `search` (case-insensitive). */
export function filterSegments<S extends SearchableSegment>(segments: readonly S[], search: string, words: (c: S['constraints'][number]) => string): S[] {
  const needle = search.trim().toLowerCase();
  if (needle === '') return [...segments];
  return segments.filter((s) => {
    if (`${s.key}\u0000${s.name}\u0000${s.description}`.toLowerCase().includes(needle)) return true;
    return s.constraints.some((c) => words(c).toLowerCase().includes(needle));
  });
}
