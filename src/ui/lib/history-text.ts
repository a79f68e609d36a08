/**
 * The history page's words and addresses (`GET /meta/history`, docs/history.md): which page of
 * entries the address names, the API query for it, which served revision came before each served
 * entry (the base of its diff link), served spans and durations, problem counts, and what an
 * empty history or a failed read means for the person reading. Pure, no DOM.
 */
import type { HistoryEntry } from '../types.js';
import { countOf, formatCount } from './format.js';

/** Entries a page when the address names no `limit`. */
export const HISTORY_PAGE_SIZE = 25;
/** The most a page shows (the API allows 1000; a page of the UI stays readable). */
export const MAX_HISTORY_PAGE_SIZE = 100;
/** How many older entries are read to find the served revision before a page's oldest served one. */
export const PREVIOUS_LOOKUP_LIMIT = 50;

export interface HistoryAddress {
  /** `pageToken` of the address: "" for the newest entries. */
  pageToken: string;
  limit: number;
}

/** The page the address names: `?pageToken=` (older entries) and `?limit=` (1 to 100, else the default). */
export function parseHistoryQuery(query: URLSearchParams): HistoryAddress {
  const raw = query.get('limit') ?? '';
  const n = /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  const limit = n >= 1 && n <= MAX_HISTORY_PAGE_SIZE ? n : HISTORY_PAGE_SIZE;
  return { pageToken: query.get('pageToken') ?? '', limit };
}

function query(path: string, params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? path : `${path}?${s}`;
}

/** `/meta/history?reference=…&limit=…&pageToken=…` (no `reference`: the server's default). */
export function historyApiPath(reference: string | undefined, a: HistoryAddress): string {
  return query('/meta/history', { reference, limit: a.limit, pageToken: a.pageToken });
}

/**
 * The entries just older than a page (from its `nextPageToken`), which hold the revision served
 * before the page's oldest entries; undefined on the last page (nothing older is kept).
 */
export function previousLookupPath(reference: string | undefined, nextPageToken: string): string | undefined {
  if (nextPageToken === '') return undefined;
  return query('/meta/history', { reference, limit: PREVIOUS_LOOKUP_LIMIT, pageToken: nextPageToken });
}

/**
 * For each entry of a page (newest first), the revision served before it, when that one is
 * further down the same page: for a served entry the base of its diff, for a rejected one what
 * vexil kept serving. Undefined when it is older than the page (or there is none).
 */
export function servedBeforeOnPage(entries: readonly HistoryEntry[]): Array<string | undefined> {
  const out: Array<string | undefined> = new Array(entries.length).fill(undefined);
  let older: string | undefined;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    out[i] = older;
    if (e.status === 'served') older = e.revision;
  }
  return out;
}

/** The first served revision of a list of entries (newest first), the one served before them all. */
export function newestServed(entries: readonly HistoryEntry[]): string | undefined {
  return entries.find((e) => e.status === 'served')?.revision;
}

/** The first line of a commit message, trimmed ("" when there is none). */
export function firstLine(message: string): string {
  return (message.split(/\r?\n/, 1)[0] ?? '').trim();
}

/** `under 1 s`, `45 s`, `12 min`, `3 h 5 min`, `4 days` between two times (epoch ms); '' when either is unknown or they are out of order. */
export function durationText(fromMs: number, untilMs: number): string {
  if (!Number.isFinite(fromMs) || !Number.isFinite(untilMs) || untilMs < fromMs) return '';
  const s = Math.round((untilMs - fromMs) / 1000);
  if (s < 1) return 'under 1 s';
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  return countOf(Math.floor(h / 24), 'day');
}

/** How long a served entry was (or has been) served: `for 12 min`, `for 3 min so far`; '' for a rejection. */
export function servedForText(e: HistoryEntry, now: number): string {
  if (e.status !== 'served' || e.servedFrom === null) return '';
  const from = Date.parse(e.servedFrom);
  const d = durationText(from, e.servedUntil === null ? now : Date.parse(e.servedUntil));
  if (d === '') return '';
  return e.servedUntil === null ? `for ${d} so far` : `for ${d}`;
}

/** `1 problem`, `3 problems`, `the first 20 of 1,234 problems`. */
export function problemCountText(shown: number, count: number): string {
  const total = Math.max(shown, count);
  const noun = total === 1 ? 'problem' : 'problems';
  if (shown < total) return `the first ${formatCount(shown)} of ${formatCount(total)} ${noun}`;
  return `${formatCount(total)} ${noun}`;
}

/** `3 entries on this page: 2 served, 1 rejected.` */
export function historySummary(entries: readonly HistoryEntry[], hasOlder: boolean): string {
  const served = entries.filter((e) => e.status === 'served').length;
  const rejected = entries.length - served;
  const head = `${countOf(entries.length, 'entry', 'entries')}${hasOlder ? ' on this page' : ''}: ${formatCount(served)} served, ${formatCount(rejected)} rejected.`;
  return hasOlder ? `${head} Older entries follow on the next page.` : head;
}

/** A full commit id (40 hex digits for SHA-1, 64 for SHA-256). */
export function isCommitId(reference: string): boolean {
  return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(reference);
}

/** What an empty page means. */
export function emptyHistoryText(reference: string, olderPage: boolean): string {
  if (olderPage) return `No older entries of ${reference} are kept.`;
  if (isCommitId(reference)) {
    return `${reference} is a commit id: it never changes, so vexil keeps no history for it. The history is kept for the branches and tags vexil serves.`;
  }
  return (
    `No revision of ${reference} is in the history. vexil records a reference from the first revision it serves or rejects: ` +
    'the default reference, the prebuilt ones, and branches or tags that a request named. Entries older than the retention (history.retention) are removed.'
  );
}

/** What a failed read of the history means, in words (the API's message kept for the details). */
export function historyErrorText(status: number, message: string): { title: string; text: string } {
  if (status === 0) return { title: 'No connection', text: 'The server cannot be reached. The page shows the history again once it answers.' };
  if (status === 503) {
    return {
      title: 'History store unavailable',
      text:
        `The server answered "${message}": the database that keeps the history (the SQLite file, or PostgreSQL when replicas share one) is out of reach. ` +
        'Flags are still served; only the record of what was served when cannot be read. Try again in a moment; the server log says why.',
    };
  }
  if (status === 400) {
    return {
      title: 'This address cannot be read',
      text: `The server refused the query: ${message}. A link to older entries belongs to the list it came from; start again from the newest entries.`,
    };
  }
  if (status === 403) {
    return {
      title: 'Not allowed',
      text: `The server answered "${message}". The history spans every namespace: it needs a token that is not limited to namespaces.`,
    };
  }
  if (status === 404) {
    return { title: 'No history here', text: `The server answered "${message}": this vexil does not serve GET /meta/history.` };
  }
  return { title: `Error ${status}`, text: message };
}
