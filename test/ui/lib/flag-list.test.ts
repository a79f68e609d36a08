/** The flags page's search, filters and pages (src/ui/lib/flag-list.ts), without a browser. */
import t from 'tap';
import { PAGE_SIZE, filterFlags, indexFlags, pageOf, parseFilter, parsePageSize, parseSort, sortFlags, type ListedFlag } from '../../../src/ui/lib/flag-list.js';

const flags: ListedFlag[] = [
  { key: 'checkout-v2', name: 'New checkout', description: 'Stripe → Adyen', enabled: true, type: 'VARIANT_FLAG_TYPE' },
  { key: 'dark-mode', name: 'Dark mode', description: '', enabled: false, type: 'BOOLEAN_FLAG_TYPE' },
  { key: 'search', name: 'Search engine', description: 'elastic or typesense', enabled: true, type: 'BOOLEAN_FLAG_TYPE' },
];
const all = { search: '', type: 'all', enabled: 'all' } as const;
const keys = (fs: ListedFlag[]) => fs.map((f) => f.key);

t.test('search: key, name or description, case-insensitive, trimmed', async (t) => {
  const idx = indexFlags(flags);
  t.same(keys(filterFlags(idx, all)), ['checkout-v2', 'dark-mode', 'search'], 'no filter: all, in order');
  t.same(keys(filterFlags(idx, { ...all, search: 'CHECK' })), ['checkout-v2'], 'key');
  t.same(keys(filterFlags(idx, { ...all, search: ' dark ' })), ['dark-mode'], 'name, trimmed');
  t.same(keys(filterFlags(idx, { ...all, search: 'adyen' })), ['checkout-v2'], 'description');
  t.same(keys(filterFlags(idx, { ...all, search: 'zzz' })), [], 'nothing');
  t.same(keys(filterFlags(idx, { ...all, search: 'v2new' })), [], 'fields are not run together');
});

t.test('type and enabled filters combine with the search', async (t) => {
  const idx = indexFlags(flags);
  t.same(keys(filterFlags(idx, { ...all, type: 'boolean' })), ['dark-mode', 'search']);
  t.same(keys(filterFlags(idx, { ...all, type: 'variant' })), ['checkout-v2']);
  t.same(keys(filterFlags(idx, { ...all, enabled: 'disabled' })), ['dark-mode']);
  t.same(keys(filterFlags(idx, { ...all, enabled: 'enabled', type: 'boolean' })), ['search']);
  t.same(keys(filterFlags(idx, { search: 'e', type: 'boolean', enabled: 'enabled' })), ['search']);
});

t.test('pages of 50, clamped, with the shown range', async (t) => {
  const items = Array.from({ length: 120 }, (_, i) => i);
  t.equal(PAGE_SIZE, 50);
  t.match(pageOf(items, 1), { page: 1, pages: 3, total: 120, first: 1, last: 50 });
  t.same(pageOf(items, 3).items, items.slice(100), 'last page: the rest');
  t.match(pageOf(items, 3), { first: 101, last: 120 });
  t.match(pageOf(items, 99), { page: 3 }, 'past the end: the last page');
  t.match(pageOf(items, 0), { page: 1 }, 'before the start: the first');
  t.match(pageOf(items, Number.NaN), { page: 1 }, 'not a number: the first');
  t.match(pageOf([], 1), { page: 1, pages: 1, total: 0, first: 0, last: 0, items: [] }, 'empty');
});

t.test('filters from the address; unknown values fall back to all', async (t) => {
  t.same(parseFilter(new URLSearchParams('q=pay&type=boolean&enabled=disabled')), { search: 'pay', type: 'boolean', enabled: 'disabled' });
  t.same(parseFilter(new URLSearchParams('type=weird&enabled=yes')), { search: '', type: 'all', enabled: 'all' });
});

t.test('10,000 flags: a search is one pass (linear), hostile needles included', async (t) => {
  const many: ListedFlag[] = Array.from({ length: 10_000 }, (_, i) => ({
    key: `flag-${i}`,
    name: `Flag ${i}`,
    description: 'a'.repeat(100),
    enabled: i % 2 === 0,
    type: i % 3 === 0 ? 'BOOLEAN_FLAG_TYPE' : 'VARIANT_FLAG_TYPE',
  }));
  const idx = indexFlags(many);
  t.equal(filterFlags(idx, { ...all, search: 'flag-9999' }).length, 1);
  t.equal(filterFlags(idx, { ...all, search: `${'a'.repeat(99)}b` }).length, 0, 'a near-miss needle');
  t.equal(filterFlags(idx, { ...all, enabled: 'enabled' }).length, 5_000);
});

t.test('sort: by a column, either way, key order among equals', async (t) => {
  const valueOf = (f: ListedFlag, c: string) => (c === 'name' ? f.name : c === 'state' ? (f.enabled ? 'enabled' : 'disabled') : f.key);
  t.same(keys(sortFlags(flags, { column: 'name', descending: false }, valueOf)), ['dark-mode', 'checkout-v2', 'search']);
  t.same(keys(sortFlags(flags, { column: 'name', descending: true }, valueOf)), ['search', 'checkout-v2', 'dark-mode']);
  t.same(keys(sortFlags(flags, { column: 'state', descending: false }, valueOf)), ['dark-mode', 'checkout-v2', 'search'], 'ties by key');
  t.same(keys(sortFlags(flags, { column: 'state', descending: true }, valueOf)), ['checkout-v2', 'search', 'dark-mode'], 'ties by key also descending');
});

t.test('sort and page size from the address: only known values', async (t) => {
  t.same(parseSort(new URLSearchParams('sort=owner&order=desc')), { column: 'owner', descending: true });
  t.same(parseSort(new URLSearchParams('sort=bogus')), { column: 'key', descending: false });
  t.equal(parsePageSize(new URLSearchParams('size=200')), 200);
  t.equal(parsePageSize(new URLSearchParams('size=7')), PAGE_SIZE);
  t.equal(parsePageSize(new URLSearchParams('')), PAGE_SIZE);
});
