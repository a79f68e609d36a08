/**
 * The flags of a namespace, answering "what does each flag do": key, name with description, what
 * it serves at a glance (lib/flag-glance.ts, from the namespace outline: booleans True / False /
 * varies, variant flags their default and number of rules), owner (metadata), type and state, with
 * the semantic checks' counts. Search (key, name, description), type and enabled filters, sortable
 * columns, 25 to 200 per page, jump to a page. The whole list is read once (`limit=0`) and
 * filtered in the browser; the checks are read beside it, the outline of the flags shown after it
 * (of every flag only to sort by what they serve), and they fill their columns when they come
 * (the list is usable before). Filters, sort, size and page live in the address
 * (replaced, not pushed, while typing) so a view can be shared. Below 640 px each row is a card
 * (styles.css), its state kept.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { withQuery } from '../api.js';
import { NamespaceTabs } from '../components/namespace-tabs.js';
import { PageTitle } from '../components/page-title.js';
import { Pager } from '../components/pager.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { useApp } from '../context.js';
import { type CheckCount, countByFlag, countText } from '../lib/check-text.js';
import { flagGlance, type Glance } from '../lib/flag-glance.js';
import {
  type FlagFilter,
  type FlagSort,
  type SortColumn,
  PAGE_SIZE,
  filterFlags,
  indexFlags,
  pageOf,
  parseFilter,
  parsePageSize,
  parseSort,
  sortFlags,
} from '../lib/flag-list.js';
import { countOf, flagTypeLabel, formatCount } from '../lib/format.js';
import { paths } from '../lib/routes.js';
import { Link, useLocation } from '../router.js';
import type { ChecksPage, Flag, NamespaceOutline, Page } from '../types.js';
import { useApi } from '../use-api.js';

interface View {
  filter: FlagFilter;
  sort: FlagSort;
  size: number;
  page: number;
}

function viewAddress(namespace: string, ref: string | undefined, v: View): string {
  return paths.flags(namespace, ref, {
    q: v.filter.search === '' ? undefined : v.filter.search,
    type: v.filter.type === 'all' ? undefined : v.filter.type,
    enabled: v.filter.enabled === 'all' ? undefined : v.filter.enabled,
    sort: v.sort.column === 'key' ? undefined : v.sort.column,
    order: v.sort.descending ? 'desc' : undefined,
    size: v.size === PAGE_SIZE ? undefined : String(v.size),
    page: v.page > 1 ? String(v.page) : undefined,
  });
}

function ownerOf(f: Flag): string {
  const o = f.metadata?.['owner'];
  return o === undefined ? '' : String(o);
}

const COLUMNS: ReadonlyArray<{ column: SortColumn; label: string }> = [
  { column: 'key', label: 'Key' },
  { column: 'name', label: 'Name' },
  { column: 'serves', label: 'Serves' },
  { column: 'owner', label: 'Owner' },
  { column: 'type', label: 'Type' },
  { column: 'state', label: 'State' },
];

function ServesCell({ glance }: { glance: Glance | undefined }) {
  if (glance === undefined) return <span class="muted">…</span>;
  if (glance.kind === 'boolean') {
    return (
      <>
        <span class={`serves serves-${glance.serves}`}>{glance.label}</span>
        {glance.serves === 'varies' && <span class="serves-detail">{glance.detail}</span>}
      </>
    );
  }
  return (
    <>
      <code class="serves">{glance.label}</code>
      <span class="serves-detail">{glance.detail}</span>
    </>
  );
}

export function FlagsPage({ namespace }: { namespace: string }) {
  const { reference } = useApp();
  const loc = useLocation();
  const nsPath = `/api/v1/namespaces/${encodeURIComponent(namespace)}`;
  const res = useApi<Page & { flags: Flag[] }>(withQuery(`${nsPath}/flags`, { reference, limit: 0 }));
  const checksRes = useApi<ChecksPage>(withQuery(`${nsPath}/checks`, { reference }));
  const counts = useMemo(() => (checksRes.state === 'ok' ? countByFlag(checksRes.data.checks) : new Map<string, CheckCount>()), [checksRes]);
  const [view, setView] = useState<View>(() => ({
    filter: parseFilter(loc.query),
    sort: parseSort(loc.query),
    size: parsePageSize(loc.query),
    page: Number(loc.query.get('page') ?? '1') || 1,
  }));

  useEffect(() => {
    // Keep the address in step without a navigation (no re-render of the shell per keystroke).
    history.replaceState(null, '', viewAddress(namespace, reference, view));
  }, [view, namespace, reference]);

  const indexed = useMemo(() => (res.state === 'ok' ? indexFlags(res.data.flags) : []), [res]);
  const matching = useMemo(() => filterFlags(indexed, view.filter), [indexed, view.filter]);
  const bySorting = view.sort.column === 'serves';
  // Every column but "Serves" sorts without the outline.
  const sortedOther = useMemo(() => {
    if (bySorting || (view.sort.column === 'key' && !view.sort.descending)) return matching;
    return sortFlags(matching, view.sort, (f, c) => {
      switch (c) {
        case 'name':
          return f.name;
        case 'owner':
          return ownerOf(f);
        case 'type':
          return flagTypeLabel(f.type);
        case 'state':
          return f.enabled ? 'enabled' : 'disabled';
        default:
          return f.key;
      }
    });
  }, [matching, view.sort, bySorting]);

  // What each flag serves comes from the outline: of the flags shown (a few KB a page), or of every
  // flag when the list is sorted by it (the whole namespace's, read once for that sort).
  const pageKeys = bySorting ? '' : pageOf(sortedOther, view.page, view.size).items.map((f) => f.key).join(' ');
  const outlinePath =
    res.state !== 'ok' || (!bySorting && pageKeys === '') ? undefined : withQuery(`${nsPath}/outline`, { reference, flags: bySorting ? undefined : pageKeys });
  const outlineRes = useApi<NamespaceOutline>(outlinePath);
  // Glances already read stay while the next page's come (no flicker), until the list itself changes.
  const known = useRef<{ of: unknown; map: Map<string, Glance> }>({ of: undefined, map: new Map() });
  const glances = useMemo(() => {
    if (known.current.of !== res) known.current = { of: res, map: new Map() };
    if (res.state !== 'ok' || outlineRes.state !== 'ok') return known.current.map;
    const everyone = new Set(outlineRes.data.everyoneSegments);
    const byKey = new Map(res.data.flags.map((f) => [f.key, f]));
    const map = new Map(known.current.map);
    for (const o of outlineRes.data.flags) {
      const f = byKey.get(o.key);
      const g = f === undefined ? undefined : flagGlance(f, o, everyone);
      if (g !== undefined) map.set(o.key, g);
    }
    known.current.map = map;
    return map;
  }, [res, outlineRes]);
  const sorted = useMemo(
    () => (bySorting ? sortFlags(matching, view.sort, (f) => glances.get(f.key)?.label ?? '') : sortedOther),
    [bySorting, matching, view.sort, glances, sortedOther],
  );
  const shown = pageOf(sorted, view.page, view.size);
  const update = (f: Partial<FlagFilter>) => setView((v) => ({ ...v, filter: { ...v.filter, ...f }, page: 1 }));
  const sortBy = (column: SortColumn) =>
    setView((v) => ({ ...v, sort: { column, descending: v.sort.column === column ? !v.sort.descending : false }, page: 1 }));

  return (
    <>
      <NamespaceTabs namespace={namespace} current="flags" />
      <PageTitle title={`Flags in ${namespace}`} />
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="flag-search">Search</label>
          <input
            id="flag-search"
            type="search"
            value={view.filter.search}
            placeholder="key, name or description"
            onInput={(e) => update({ search: (e.currentTarget as HTMLInputElement).value })}
            autocomplete="off"
            spellcheck={false}
          />
        </div>
        <div class="field">
          <label for="flag-type">Type</label>
          <select id="flag-type" value={view.filter.type} onChange={(e) => update({ type: (e.currentTarget as HTMLSelectElement).value as FlagFilter['type'] })}>
            <option value="all">All types</option>
            <option value="variant">Variant</option>
            <option value="boolean">Boolean</option>
          </select>
        </div>
        <div class="field">
          <label for="flag-enabled">State</label>
          <select
            id="flag-enabled"
            value={view.filter.enabled}
            onChange={(e) => update({ enabled: (e.currentTarget as HTMLSelectElement).value as FlagFilter['enabled'] })}
          >
            <option value="all">Enabled or not</option>
            <option value="enabled">Enabled</option>
            <option value="disabled">Disabled</option>
          </select>
        </div>
      </form>
      {res.state === 'loading' && <Loading what="flags" />}
      {res.state === 'error' && <ErrorBox error={res.error} />}
      {res.state === 'ok' && (
        <>
          <p class="muted" role="status" aria-live="polite" id="flag-count" tabIndex={-1}>
            {shown.total === 0
              ? `No flags match (of ${formatCount(res.data.flags.length)}).`
              : `Showing ${formatCount(shown.first)}–${formatCount(shown.last)} of ${countOf(shown.total, 'flag', 'flags')}${
                  shown.total !== res.data.flags.length ? ` (${formatCount(res.data.flags.length)} in all)` : ''
                }.`}
          </p>
          {outlineRes.state === 'error' && <p class="muted">What each flag serves could not be read: {outlineRes.error.message}</p>}
          {shown.total > 0 && (
            <div class="table-wrap">
              <table class="list flags" aria-describedby="flag-count">
                <thead>
                  <tr>
                    {COLUMNS.map(({ column, label }) => {
                      const active = view.sort.column === column;
                      return (
                        <th key={column} scope="col" aria-sort={active ? (view.sort.descending ? 'descending' : 'ascending') : undefined}>
                          <button type="button" class="sort" onClick={() => sortBy(column)}>
                            {label}
                            <span class="visually-hidden">{active ? (view.sort.descending ? ', sorted descending' : ', sorted ascending') : ', sort'}</span>
                            <span aria-hidden="true" class="sort-mark">
                              {active ? (view.sort.descending ? ' ▼' : ' ▲') : ' ↕'}
                            </span>
                          </button>
                        </th>
                      );
                    })}
                  </tr>
                </thead>
                <tbody>
                  {shown.items.map((f) => (
                    <tr key={f.key}>
                      <td data-label="Key">
                        <Link href={paths.flag(namespace, f.key, reference)}>
                          <code>{f.key}</code>
                        </Link>
                      </td>
                      <td data-label="Name">
                        {f.name}
                        {f.description !== '' && <span class="flag-description">{f.description}</span>}
                      </td>
                      <td data-label="Serves">
                        <ServesCell glance={glances.get(f.key)} />
                      </td>
                      <td data-label="Owner">{ownerOf(f) || <span class="muted">—</span>}</td>
                      <td data-label="Type">{flagTypeLabel(f.type)}</td>
                      <td data-label="State">
                        <span class={f.enabled ? 'badge on' : 'badge off'}>{f.enabled ? 'enabled' : 'disabled'}</span>
                        {counts.has(f.key) && (
                          <>
                            {' '}
                            <span class={counts.get(f.key)!.errors > 0 ? 'badge bad' : 'badge off'}>{countText(counts.get(f.key))}</span>
                          </>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager
            page={shown.page}
            pages={shown.pages}
            onPage={(page) => setView((v) => ({ ...v, page }))}
            topId="flag-count"
            size={view.size}
            onSize={(size) => setView((v) => ({ ...v, size, page: 1 }))}
          />
        </>
      )}
    </>
  );
}
