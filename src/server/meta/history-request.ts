/**
 * The query of `GET /meta/history`, checked: `reference` (default: the default reference), `since`
 * and `until` (RFC 3339), `limit` (1..MAX_LIMIT, default DEFAULT_LIMIT), `pageToken` (opaque, made
 * by `pageToken` below), or `at` (RFC 3339) alone with `reference`. Anything else wrong is a 400
 * naming the parameter (the `details` carry its name too). Inputs are bounded before they are read.
 *
 * A page token is the position of the last entry of a page (its time and table sequence), base64url
 * JSON: it holds nothing a caller could not see in the entries themselves.
 */
import { invalidArgument } from '../../errors.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
/** Longer tokens and times are refused before they are decoded. */
const MAX_PARAM_LENGTH = 200;

/** RFC 3339 date-time: `Z` or a numeric offset, up to nanosecond fractions. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

export type HistoryRequest =
  | { readonly kind: 'list'; readonly reference: string; readonly since?: number; readonly until?: number; readonly limit: number; readonly after?: { at: number; seq: number } }
  | { readonly kind: 'at'; readonly reference: string; readonly at: number };

function bad(parameter: string, problem: string): never {
  throw invalidArgument(`${parameter} ${problem}`, [{ parameter }]);
}

function time(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value.length > MAX_PARAM_LENGTH || !RFC3339.test(value)) bad(name, 'must be an RFC 3339 time such as 2026-11-27T14:03:00Z');
  const ms = Date.parse(value.toUpperCase().replace(/(\.\d{3})\d+/, '$1'));
  if (Number.isNaN(ms)) bad(name, 'must be an RFC 3339 time such as 2026-11-27T14:03:00Z');
  return ms;
}

export function pageToken(position: { at: number; seq: number }): string {
  return Buffer.from(JSON.stringify({ a: position.at, s: position.seq })).toString('base64url');
}

function readPageToken(value: string): { at: number; seq: number } {
  const problem = 'is not a page token this server gave (use nextPageToken of the previous page as it is)';
  if (value.length > MAX_PARAM_LENGTH || !/^[A-Za-z0-9_-]+$/.test(value)) bad('pageToken', problem);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    bad('pageToken', problem);
  }
  const p = parsed as { a?: unknown; s?: unknown } | null;
  if (p === null || typeof p !== 'object' || !Number.isSafeInteger(p.a) || !Number.isSafeInteger(p.s) || (p.s as number) < 0) {
    bad('pageToken', problem);
  }
  return { at: p.a as number, seq: p.s as number };
}

export function parseHistoryRequest(query: ReadonlyMap<string, string>, defaultReference: string): HistoryRequest {
  const raw = query.get('reference');
  const reference = raw === undefined || raw === '' ? defaultReference : raw;
  if (reference.length > 1024) bad('reference', 'is longer than 1024 characters');
  const at = time('at', query.get('at'));
  if (at !== undefined) {
    for (const other of ['since', 'until', 'limit', 'pageToken']) {
      if (query.has(other)) bad(other, 'cannot be combined with at (at answers one entry)');
    }
    return { kind: 'at', reference, at };
  }
  const since = time('since', query.get('since'));
  const until = time('until', query.get('until'));
  if (since !== undefined && until !== undefined && until < since) bad('until', 'must not be before since');
  const limitText = query.get('limit');
  let limit = DEFAULT_LIMIT;
  if (limitText !== undefined) {
    if (!/^\d{1,7}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_LIMIT) bad('limit', `must be an integer from 1 to ${MAX_LIMIT}`);
    limit = Number(limitText);
  }
  const token = query.get('pageToken');
  const after = token !== undefined && token !== '' ? readPageToken(token) : undefined;
  return {
    kind: 'list',
    reference,
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
    limit,
    ...(after !== undefined ? { after } : {}),
  };
}
