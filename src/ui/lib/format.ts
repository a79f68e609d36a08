/** Small text formatters shared by the pages (pure, no DOM). */

/** `abc1234` from a commit id or digest (`sha256:` dropped); short ids as they are. */
export function shortRevision(id: string): string {
  const bare = id.startsWith('sha256:') ? id.slice(7) : id;
  return /^[0-9a-f]{12,}$/i.test(bare) ? bare.slice(0, 7) : bare.length > 24 ? `${bare.slice(0, 24)}…` : bare;
}

/** "just now", "5 min ago", "3 h ago", "2 days ago" between an RFC 3339 time and `now`. */
export function age(iso: string | undefined, now: number): string {
  if (iso === undefined) return '';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 10) return 'just now';
  if (s < 60) return `${s} s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${formatCount(Math.floor(h / 24))} days ago`;
}

/** Attachments are JSON text: pretty-printed when they parse, as they are otherwise. */
export function prettyJson(text: string): string {
  if (text === '') return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** `VARIANT_FLAG_TYPE` → `variant`. */
export function flagTypeLabel(type: string): string {
  return type === 'BOOLEAN_FLAG_TYPE' ? 'boolean' : 'variant';
}

/*
 * Numbers and percentages, one style for every page: the UI is in English, so numbers are grouped
 * as en-US groups them (`3,000`) and a percentage is written as the CLI and `vexil diff` write it,
 * the sign right after the number (`50%`, `33.33%`), so the diff page and its "Copy as Markdown"
 * agree with the rest of the UI.
 */
const COUNT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** `3,000`, `12`, `0.5`: a count or any figure, grouped, at most two decimals. */
export function formatCount(n: number): string {
  return COUNT.format(n);
}

/** `50%`, `33.33%`, `0.5%` from a percentage (0–100), at most two decimals, no grouping. */
export function formatPercent(percent: number): string {
  return `${Math.round(percent * 100) / 100}%`;
}

/** `12.4%` from a share (0–1) of a whole, at most `digits` decimals (default 1). */
export function formatShare(share: number, digits = 1): string {
  const f = 10 ** digits;
  return `${Math.round(share * 100 * f) / f}%`;
}

/** `1 reference`, `3,000 flags`, `2 entries`: a count and its noun (the plural given when not noun + s). */
export function countOf(n: number, singular: string, plural = `${singular}s`): string {
  return `${formatCount(n)} ${n === 1 ? singular : plural}`;
}
