/**
 * The flags of a namespace: search (key, name, description), type and enabled filters, 50 per
 * page. The whole list is read once (`limit=0`) and filtered in the browser; the filters live in
 * the address (replaced, not pushed, while typing) so a filtered list can be shared. A flag with
 * errors or warnings from the semantic checks has a badge saying how many (the namespace's checks
 * read once; the list shows without them while they load or when they cannot be read).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { withQuery } from '../api.js';
import { NamespaceTabs } from '../components/namespace-tabs.js';
import { PageTitle } from '../components/page-title.js';
import { Pager } from '../components/pager.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { useApp } from '../context.js';
import { type CheckCount, countByFlag, countText } from '../lib/check-text.js';
import { type FlagFilter, filterFlags, indexFlags, pageOf, parseFilter } from '../lib/flag-list.js';
import { flagTypeLabel } from '../lib/format.js';
import { paths } from '../lib/routes.js';
import { Link, useLocation } from '../router.js';
import type { ChecksPage, Flag, Page } from '../types.js';
import { useApi } from '../use-api.js';

function filterAddress(namespace: string, ref: string | undefined, f: FlagFilter, page: number): string {
  return paths.flags(namespace, ref, {
    q: f.search === '' ? undefined : f.search,
    type: f.type === 'all' ? undefined : f.type,
    enabled: f.enabled === 'all' ? undefined : f.enabled,
    page: page > 1 ? String(page) : undefined,
  });
}

export function FlagsPage({ namespace }: { namespace: string }) {
  const { reference } = useApp();
  const loc = useLocation();
  const res = useApi<Page & { flags: Flag[] }>(withQuery(`/api/v1/namespaces/${encodeURIComponent(namespace)}/flags`, { reference, limit: 0 }));
  const checksRes = useApi<ChecksPage>(withQuery(`/api/v1/namespaces/${encodeURIComponent(namespace)}/checks`, { reference }));
  const counts = useMemo(() => (checksRes.state === 'ok' ? countByFlag(checksRes.data.checks) : new Map<string, CheckCount>()), [checksRes]);
  const [filter, setFilter] = useState<FlagFilter>(() => parseFilter(loc.query));
  const [page, setPage] = useState(() => Number(loc.query.get('page') ?? '1') || 1);

  useEffect(() => {
    // Keep the address in step without a navigation (no re-render of the shell per keystroke).
    history.replaceState(null, '', filterAddress(namespace, reference, filter, page));
  }, [filter, page, namespace, reference]);

  const indexed = useMemo(() => (res.state === 'ok' ? indexFlags(res.data.flags) : []), [res]);
  const matching = useMemo(() => filterFlags(indexed, filter), [indexed, filter]);
  const shown = pageOf(matching, page);
  const update = (f: Partial<FlagFilter>) => {
    setFilter((old) => ({ ...old, ...f }));
    setPage(1);
  };

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
            value={filter.search}
            placeholder="key, name or description"
            onInput={(e) => update({ search: (e.currentTarget as HTMLInputElement).value })}
            autocomplete="off"
            spellcheck={false}
          />
        </div>
        <div class="field">
          <label for="flag-type">Type</label>
          <select id="flag-type" value={filter.type} onChange={(e) => update({ type: (e.currentTarget as HTMLSelectElement).value as FlagFilter['type'] })}>
            <option value="all">All types</option>
            <option value="variant">Variant</option>
            <option value="boolean">Boolean</option>
          </select>
        </div>
        <div class="field">
          <label for="flag-enabled">State</label>
          <select id="flag-enabled" value={filter.enabled} onChange={(e) => update({ enabled: (e.currentTarget as HTMLSelectElement).value as FlagFilter['enabled'] })}>
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
          <p class="muted" role="status" aria-live="polite" id="flag-count">
            {shown.total === 0
              ? `No flags match (of ${res.data.flags.length}).`
              : `Showing ${shown.first}–${shown.last} of ${shown.total} flags${shown.total !== res.data.flags.length ? ` (${res.data.flags.length} in all)` : ''}.`}
          </p>
          {shown.total > 0 && (
            <div class="table-wrap">
              <table class="list" aria-describedby="flag-count">
                <thead>
                  <tr>
                    <th scope="col">Key</th>
                    <th scope="col">Name</th>
                    <th scope="col">Type</th>
                    <th scope="col">State</th>
                  </tr>
                </thead>
                <tbody>
                  {shown.items.map((f) => (
                    <tr key={f.key}>
                      <td>
                        <Link href={paths.flag(namespace, f.key, reference)}>
                          <code>{f.key}</code>
                        </Link>
                      </td>
                      <td>{f.name}</td>
                      <td>{flagTypeLabel(f.type)}</td>
                      <td>
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
          <Pager page={shown.page} pages={shown.pages} onPage={setPage} />
        </>
      )}
    </>
  );
}
