/**
 * Flipt's declarative pagination (flipt-semantics §3.5): `limit` 0 or absent means no limit;
 * `pageToken` (or `page_token`) is the decimal offset as a string; `nextPageToken` is the end
 * offset while items remain, else ""; `totalCount` is the size of the whole collection.
 */
import { Code, VexilError } from '../../errors.js';
import { invalidField } from '../../http/fields.js';

export interface PageParams {
  readonly limit: number;
  /** Deprecated `offset`: only checked (flags, segments, rules), never used to page. */
  readonly offset: number;
  readonly pageToken: string;
}

export interface Page<T> {
  readonly items: readonly T[];
  readonly nextPageToken: string;
  readonly totalCount: number;
}

const INT32_MAX = 2147483647;

function parseCount(query: ReadonlyMap<string, string>, name: string): number {
  const raw = query.get(name);
  if (raw === undefined || raw === '') return 0;
  if (!/^[+-]?\d+$/.test(raw)) throw invalidField(name, 'must be an integer');
  const n = Number(raw);
  if (n < 0) throw invalidField(name, 'must not be negative');
  if (n > INT32_MAX) throw invalidField(name, `must be at most ${INT32_MAX}`);
  return n;
}

export function parsePageParams(query: ReadonlyMap<string, string>): PageParams {
  return {
    limit: parseCount(query, 'limit'),
    offset: parseCount(query, 'offset'),
    pageToken: query.get('pageToken') ?? query.get('page_token') ?? '',
  };
}

/** Flipt's request validation for flags, segments and rules lists. */
export function requireLimitWhenPaging(p: PageParams): void {
  if (p.limit === 0 && (p.offset > 0 || p.pageToken !== '')) {
    throw new VexilError(Code.InvalidArgument, 'limit must be set when offset or pageToken is set');
  }
}

export function paginate<T>(items: readonly T[], p: PageParams): Page<T> {
  const total = items.length;
  // An empty collection ignores the token entirely, as Flipt does.
  if (total === 0) return { items: [], nextPageToken: '', totalCount: 0 };
  let offset = 0;
  if (p.pageToken !== '') {
    if (!/^\d+$/.test(p.pageToken) || !Number.isSafeInteger(Number(p.pageToken))) {
      throw new VexilError(Code.InvalidArgument, `pageToken is not valid: ${JSON.stringify(p.pageToken)}`);
    }
    offset = Number(p.pageToken);
    if (offset >= total) throw new VexilError(Code.InvalidArgument, `invalid offset: ${offset}`);
  }
  const end = p.limit > 0 ? Math.min(offset + p.limit, total) : total;
  return { items: items.slice(offset, end), nextPageToken: end < total ? String(end) : '', totalCount: total };
}
