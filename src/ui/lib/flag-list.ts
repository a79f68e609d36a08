/**
 * The flags page's search, filters, sort and pages, kept out of the component so they are tested
 * without a browser. Each flag's searchable text is lower-cased once (`indexFlags`); a search
 * is then one pass of `includes` over at most a few characters per flag, fast on 10k flags.
 * Sorting compares precomputed strings (no locale collation), stable, keys breaking ties.
 */

export interface ListedFlag {
  key: string;
  name: string;
  description: string;
  enabled: boolean;
  type: string;
}

export interface IndexedFlag<F extends ListedFlag> {
  flag: F;
  /** key, name and description, lower-cased, separated by a character no search contains. */
  text: string;
}

export interface FlagFilter {
  search: string;
  type: 'all' | 'variant' | 'boolean';
  enabled: 'all' | 'enabled' | 'disabled';
}

export const PAGE_SIZE = 50;
/** The page sizes offered; the address may carry only these. */
export const PAGE_SIZES: readonly number[] = [25, 50, 100, 200];

export type SortColumn = 'key' | 'name' | 'serves' | 'owner' | 'type' | 'state';
export const SORT_COLUMNS: readonly SortColumn[] = ['key', 'name', 'serves', 'owner', 'type', 'state'];

export interface FlagSort {
  column: SortColumn;
  descending: boolean;
}

export function indexFlags<F extends ListedFlag>(flags: readonly F[]): IndexedFlag<F>[] {
  return flags.map((flag) => ({ flag, text: `${flag.key}\u0000${flag.name}\u0000${flag.description}`.toLowerCase() }));
}

export function filterFlags<F extends ListedFlag>(indexed: readonly IndexedFlag<F>[], f: FlagFilter): F[] {
  const needle = f.search.trim().toLowerCase();
  const out: F[] = [];
  for (const { flag, text } of indexed) {
    if (f.type === 'variant' && flag.type !== 'VARIANT_FLAG_TYPE') continue;
    if (f.type === 'boolean' && flag.type !== 'BOOLEAN_FLAG_TYPE') continue;
    if (f.enabled === 'enabled' && !flag.enabled) continue;
    if (f.enabled === 'disabled' && flag.enabled) continue;
    if (needle !== '' && !text.includes(needle)) continue;
    out.push(flag);
  }
  return out;
}

export interface PageOf<T> {
  items: T[];
  /** 1-based, clamped into range. */
  page: number;
  pages: number;
  total: number;
  /** 1-based index of the first item shown (0 when empty). */
  first: number;
  last: number;
}

export function pageOf<T>(items: readonly T[], page: number, size = PAGE_SIZE): PageOf<T> {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const p = Math.min(Math.max(1, Number.isFinite(page) ? Math.floor(page) : 1), pages);
  const start = (p - 1) * size;
  const slice = items.slice(start, start + size);
  return { items: slice, page: p, pages, total: items.length, first: slice.length === 0 ? 0 : start + 1, last: start + slice.length };
}

/**
 * `flags` ordered by `sort`; `valueOf` gives a flag's text in a column (lower-cased here once per
 * flag). Equal values keep key order. The API lists flags by key, so key ascending is the input.
 */
export function sortFlags<F extends ListedFlag>(flags: readonly F[], sort: FlagSort, valueOf: (flag: F, column: SortColumn) => string): F[] {
  const keyed = flags.map((flag) => ({ flag, v: valueOf(flag, sort.column).toLowerCase() }));
  const dir = sort.descending ? -1 : 1;
  keyed.sort((a, b) => {
    if (a.v !== b.v) return a.v < b.v ? -dir : dir;
    return a.flag.key < b.flag.key ? -1 : a.flag.key > b.flag.key ? 1 : 0;
  });
  return keyed.map((k) => k.flag);
}

export function parseSort(query: URLSearchParams): FlagSort {
  const c = query.get('sort');
  const column = SORT_COLUMNS.includes(c as SortColumn) ? (c as SortColumn) : 'key';
  return { column, descending: query.get('order') === 'desc' };
}

export function parsePageSize(query: URLSearchParams): number {
  const n = Number(query.get('size'));
  return PAGE_SIZES.includes(n) ? n : PAGE_SIZE;
}

export function parseFilter(query: URLSearchParams): FlagFilter {
  const type = query.get('type');
  const enabled = query.get('enabled');
  return {
    search: query.get('q') ?? '',
    type: type === 'variant' || type === 'boolean' ? type : 'all',
    enabled: enabled === 'enabled' || enabled === 'disabled' ? enabled : 'all',
  };
}
