/** The status page's words for times and a reference's state (pure, no DOM). */
import { age } from './format.js';

/** `2026-11-26 14:38:13 UTC (5 min ago)`; the text as given when it is not a time; '' when absent. */
export function whenText(iso: string | undefined, now: number): string {
  if (iso === undefined || iso === '') return '';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const utc = new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
  const a = age(iso, now);
  return a === '' ? utc : `${utc} (${a})`;
}

/** One word for a reference's state, as the list shows it. */
export function referenceState(s: { revision?: unknown; lastRejected?: unknown; lastError?: unknown; stale?: string }): 'rejected' | 'stale' | 'error' | 'ok' | 'not loaded' {
  if (s.lastRejected !== undefined) return 'rejected';
  if (s.stale !== undefined) return 'stale';
  if (s.lastError !== undefined) return 'error';
  return s.revision !== undefined ? 'ok' : 'not loaded';
}

/** `3 references, 1 with a rejected change.` */
export function statusSummary(refs: readonly { lastRejected?: unknown }[]): string {
  const rejected = refs.filter((r) => r.lastRejected !== undefined).length;
  const n = `${refs.length} reference${refs.length === 1 ? '' : 's'}`;
  if (rejected === 0) return `${n}, none with a rejected change.`;
  return `${n}, ${rejected} with a rejected change.`;
}
