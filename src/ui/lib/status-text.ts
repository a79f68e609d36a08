/**
 * The status page's words (pure, no DOM): times, one state per reference that tells "an older
 * revision is still served" apart from "nothing is served", the order that puts problems first,
 * the summary line, and what a "Check now" (`POST /meta/refresh`) found compared with the status
 * read before it.
 */
import { age, countOf, formatCount, shortRevision } from './format.js';

/** `2026-11-26 14:38:13 UTC (5 min ago)`; the text as given when it is not a time; '' when absent. */
export function whenText(iso: string | undefined, now: number): string {
  if (iso === undefined || iso === '') return '';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const a = age(iso, now);
  return a === '' ? utcText(t) : `${utcText(t)} (${a})`;
}

/** `2026-11-26 14:38:13 UTC`. */
export function utcText(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
}

/** The parts of a reference's status these words read. */
export interface StatusFields {
  reference: string;
  default?: boolean;
  revision?: { id: string };
  lastRejected?: { revision: { id: string } };
  lastError?: { message: string };
  stale?: string;
}

/**
 * One state per reference, worst first: nothing served (never valid, or never read); an older
 * revision served (the newest was rejected); the source could not be read (the served revision
 * kept); stale; not loaded yet; ok.
 */
export const STATES = ['nothing served', 'older revision served', 'check failed', 'stale', 'not loaded', 'ok'] as const;
export type ReferenceState = (typeof STATES)[number];

export function referenceState(s: Omit<StatusFields, 'reference'>): ReferenceState {
  if (s.revision === undefined) return s.lastRejected !== undefined || s.lastError !== undefined ? 'nothing served' : 'not loaded';
  if (s.lastRejected !== undefined) return 'older revision served';
  if (s.lastError !== undefined) return 'check failed';
  if (s.stale !== undefined) return 'stale';
  return 'ok';
}

/** Whether the state is one a person must look at. */
export function isProblem(state: ReferenceState): boolean {
  return state !== 'ok' && state !== 'not loaded';
}

/** The references, problems first (worst first), then in the API's order (default first, then by name). */
export function problemsFirst<T extends Omit<StatusFields, 'reference'>>(refs: readonly T[]): T[] {
  const rank = (s: T) => STATES.indexOf(referenceState(s));
  return refs
    .map((r, i) => ({ r, i, k: rank(r) }))
    .sort((a, b) => a.k - b.k || a.i - b.i)
    .map((x) => x.r);
}

/** `3 references, no problems.` / `5 references: 1 serves nothing, 2 serve an older revision, 1 stale.` */
export function statusSummary(refs: readonly Omit<StatusFields, 'reference'>[]): string {
  const n = countOf(refs.length, 'reference');
  const count = (state: ReferenceState) => refs.filter((r) => referenceState(r) === state).length;
  const parts: string[] = [];
  const nothing = count('nothing served');
  if (nothing > 0) parts.push(`${formatCount(nothing)} ${nothing === 1 ? 'serves' : 'serve'} nothing`);
  const older = count('older revision served');
  if (older > 0) parts.push(`${formatCount(older)} ${older === 1 ? 'serves' : 'serve'} an older revision (the newest was rejected)`);
  const failed = count('check failed');
  if (failed > 0) parts.push(`${formatCount(failed)} could not be checked`);
  const stale = count('stale');
  if (stale > 0) parts.push(`${formatCount(stale)} stale`);
  return parts.length === 0 ? `${n}, no problems.` : `${n}: ${parts.join(', ')}.`;
}

/**
 * What a look at the source changed, reference by reference, between the status read before
 * `POST /meta/refresh` and its answer: a new revision served, a new revision rejected, a new
 * error, a reference gone. Empty when nothing changed.
 */
export function checkChanges(before: readonly StatusFields[], after: readonly StatusFields[]): string[] {
  const old = new Map(before.map((r) => [r.reference, r]));
  const out: string[] = [];
  for (const r of after) {
    const b = old.get(r.reference);
    old.delete(r.reference);
    const served = r.revision?.id;
    if (served !== undefined && served !== b?.revision?.id) {
      out.push(`${r.reference}: now serves ${shortRevision(served)}${b?.revision ? ` (was ${shortRevision(b.revision.id)})` : ''}.`);
    }
    const rejected = r.lastRejected?.revision.id;
    if (rejected !== undefined && rejected !== b?.lastRejected?.revision.id) {
      out.push(
        `${r.reference}: ${shortRevision(rejected)} was rejected; ${served !== undefined ? `${shortRevision(served)} is still served` : 'nothing is served'}.`,
      );
    }
    if (r.lastError !== undefined && r.lastError.message !== b?.lastError?.message) out.push(`${r.reference}: could not be checked (${r.lastError.message}).`);
  }
  for (const gone of old.keys()) out.push(`${gone}: no longer kept.`);
  return out;
}

/** The line after a check: `Checked at 2026-11-26 14:38:13 UTC: no change.` or the changes. */
export function checkResultText(atMs: number, changes: readonly string[]): string {
  const at = `Checked at ${utcText(atMs)}`;
  return changes.length === 0 ? `${at}: no change, every reference serves what it served before.` : `${at}: ${changes.join(' ')}`;
}

/** Why a "Check now" was refused, in words, from the API's status and message. */
export function checkRefusedText(status: number, message: string): string {
  if (status === 401) return 'The server refused to look: your sign-in has expired or the token was revoked. Sign in again to check now.';
  if (status === 403) return `The server refused to look: your credential may not ask it to (${message}). Ask for a token that is not limited to one namespace.`;
  if (status === 0) return 'The server cannot be reached, so it was not asked to look.';
  if (status === 501) return `This storage is not polled, so there is nothing to look at (${message}).`;
  return `The check failed (${status}: ${message}).`;
}
