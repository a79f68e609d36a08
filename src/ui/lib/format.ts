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
  return `${Math.floor(h / 24)} days ago`;
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

/** `3,000`: whole numbers with thousands separators, the same on every page and machine locale. */
export function numberText(n: number): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

/** `1 flag` / `3,000 flags`. */
export function countOf(n: number, one: string, many: string): string {
  return `${numberText(n)} ${n === 1 ? one : many}`;
}
