/**
 * The reference switcher's words and search (pure, no DOM): one option label per reference (its
 * served revision, the age of that commit beside the age of its load, and its state in the status
 * page's words), the references a typed text matches (case-insensitive, anywhere in the name; the
 * reference viewed is always kept), and where "Go" leads for a typed text.
 */
import { age, formatCount, shortRevision } from './format.js';
import { referenceState } from './status-text.js';

export interface SwitcherReference {
  reference: string;
  revision?: { id: string; meta?: { at?: string } };
  loadedAt?: string;
  lastRejected?: { revision: { id: string } };
  lastError?: { message: string };
  stale?: string;
}

/** `feature · 5cacb0a · committed 3 days ago · loaded 5 min ago · older revision served` (the state when not ok). */
export function referenceLabel(s: SwitcherReference, now: number): string {
  const parts = [s.reference];
  if (s.revision) {
    parts.push(shortRevision(s.revision.id));
    const committed = age(s.revision.meta?.at, now);
    if (committed !== '') parts.push(`committed ${committed}`);
  }
  const loaded = age(s.loadedAt, now);
  if (loaded !== '') parts.push(`loaded ${loaded}`);
  const state = referenceState(s);
  if (state !== 'ok') parts.push(state);
  return parts.join(' · ');
}

/** The references whose name contains `typed` (any case); all when it is blank; `current` always kept. */
export function matchReferences<T extends { reference: string }>(refs: readonly T[], typed: string, current: string): T[] {
  const needle = typed.trim().toLowerCase();
  if (needle === '') return refs.slice();
  return refs.filter((r) => r.reference === current || r.reference.toLowerCase().includes(needle));
}

/**
 * Where "Go" leads for a typed text: the reference of that exact name, the one reference whose name
 * contains it, or the text itself when no listed name contains it (any branch, tag or commit id:
 * the server builds it on request); `choose` with the count when several names contain it.
 */
export function goTarget(refs: readonly { reference: string }[], typed: string): { go: string } | { choose: number } | undefined {
  const text = typed.trim();
  if (text === '') return undefined;
  if (refs.some((r) => r.reference === text)) return { go: text };
  const needle = text.toLowerCase();
  const matches = refs.filter((r) => r.reference.toLowerCase().includes(needle));
  if (matches.length === 1) return { go: matches[0]!.reference };
  if (matches.length === 0) return { go: text };
  return { choose: matches.length };
}

/** `12 of 300 references match "release"`, for the switcher's live count. */
export function matchCountText(refs: readonly { reference: string }[], typed: string): string {
  const needle = typed.trim().toLowerCase();
  const n = refs.filter((r) => r.reference.toLowerCase().includes(needle)).length;
  return `${formatCount(n)} of ${formatCount(refs.length)} references match "${typed.trim()}"`;
}
