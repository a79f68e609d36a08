/**
 * The query of `GET /meta/history`, checked: `reference` (default: the default reference), the list
 * window `since`, `until`, `limit`, `pageToken` (list-query.ts, shared with `/meta/audit`), or `at`
 * (RFC 3339) alone with `reference`. Anything else wrong is a 400 naming the parameter (the
 * `details` carry its name too). Inputs are bounded before they are read.
 */
import { badParameter, parseListWindow, timeParameter, type ListPosition } from './list-query.js';

export type HistoryRequest =
  | { readonly kind: 'list'; readonly reference: string; readonly since?: number; readonly until?: number; readonly limit: number; readonly after?: ListPosition }
  | { readonly kind: 'at'; readonly reference: string; readonly at: number };

export function parseHistoryRequest(query: ReadonlyMap<string, string>, defaultReference: string): HistoryRequest {
  const raw = query.get('reference');
  const reference = raw === undefined || raw === '' ? defaultReference : raw;
  if (reference.length > 1024) badParameter('reference', 'is longer than 1024 characters');
  const at = timeParameter('at', query.get('at'));
  if (at !== undefined) {
    for (const other of ['since', 'until', 'limit', 'pageToken']) {
      if (query.has(other)) badParameter(other, 'cannot be combined with at (at answers one entry)');
    }
    return { kind: 'at', reference, at };
  }
  return { kind: 'list', reference, ...parseListWindow(query) };
}
