/**
 * The parameters the paged lists of `/meta` share (`/meta/history`, `/meta/audit`), checked: `since`
 * and `until` (RFC 3339), `limit` (1..MAX_LIMIT, default DEFAULT_LIMIT) and `pageToken` (opaque,
 * made by `pageToken` below). Anything wrong is a 400 naming the parameter (the `details` carry its
 * name too). Inputs are bounded before they are read.
 *
 * A page token is the position of the last entry of a page (its time and table sequence), base64url
 * JSON: it holds nothing a caller could not see in the entries themselves.
 */
import { invalidArgument } from '../../errors.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
/** Longer tokens, times and identifiers are refused before they are decoded. */
export const MAX_PARAM_LENGTH = 200;

/** RFC 3339 date-time: `Z` or a numeric offset, up to nanosecond fractions. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** A position in a list, newest first: the entries after it are older. */
export interface ListPosition {
  readonly at: number;
  readonly seq: number;
}

/** The window and page of a list request. */
export interface ListWindow {
  readonly since?: number;
  readonly until?: number;
  readonly limit: number;
  readonly after?: ListPosition;
}

/** A 400 (code 3) whose message starts with the parameter's name. */
export function badParameter(parameter: string, problem: string): never {
  throw invalidArgument(`${parameter} ${problem}`, [{ parameter }]);
}

/** Parameter `name` as epoch ms (undefined when absent). */
export function timeParameter(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value.length > MAX_PARAM_LENGTH || !RFC3339.test(value)) badParameter(name, 'must be an RFC 3339 time such as 2026-11-27T14:03:00Z');
  const ms = Date.parse(value.toUpperCase().replace(/(\.\d{3})\d+/, '$1'));
  if (Number.isNaN(ms)) badParameter(name, 'must be an RFC 3339 time such as 2026-11-27T14:03:00Z');
  return ms;
}

export function pageToken(position: ListPosition): string {
  return Buffer.from(JSON.stringify({ a: position.at, s: position.seq })).toString('base64url');
}

function readPageToken(value: string): ListPosition {
  const problem = 'is not a page token this server gave (use nextPageToken of the previous page as it is)';
  if (value.length > MAX_PARAM_LENGTH || !/^[A-Za-z0-9_-]+$/.test(value)) badParameter('pageToken', problem);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    badParameter('pageToken', problem);
  }
  const p = parsed as { a?: unknown; s?: unknown } | null;
  if (p === null || typeof p !== 'object' || !Number.isSafeInteger(p.a) || !Number.isSafeInteger(p.s) || (p.s as number) < 0) {
    badParameter('pageToken', problem);
  }
  return { at: p.a as number, seq: p.s as number };
}

/** `since`, `until`, `limit` and `pageToken` of `query`, checked. */
export function parseListWindow(query: ReadonlyMap<string, string>): ListWindow {
  const since = timeParameter('since', query.get('since'));
  const until = timeParameter('until', query.get('until'));
  if (since !== undefined && until !== undefined && until < since) badParameter('until', 'must not be before since');
  const limitText = query.get('limit');
  let limit = DEFAULT_LIMIT;
  if (limitText !== undefined) {
    if (!/^\d{1,7}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_LIMIT) badParameter('limit', `must be an integer from 1 to ${MAX_LIMIT}`);
    limit = Number(limitText);
  }
  const token = query.get('pageToken');
  const after = token !== undefined && token !== '' ? readPageToken(token) : undefined;
  return {
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
    limit,
    ...(after !== undefined ? { after } : {}),
  };
}

/** One page of `rows` (which hold one more than `limit` when there are more) and the token of the next. */
export function page<T extends ListPosition>(rows: readonly T[], limit: number): { page: T[]; nextPageToken: string } {
  const shown = rows.slice(0, limit);
  const last = shown[shown.length - 1];
  return { page: shown, nextPageToken: rows.length > limit && last !== undefined ? pageToken({ at: last.at, seq: last.seq }) : '' };
}
