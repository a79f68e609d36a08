/**
 * The segments of a namespace: who each one holds (match type and constraints in words) and how
 * many flags use it (counted from the namespace outline, lib/segment-usage.ts), with a search over
 * key, name, description and constraint words, 50 per page. The search lives in the address.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { withQuery } from '../api.js';
import { NamespaceTabs } from '../components/namespace-tabs.js';
import { PageTitle } from '../components/page-title.js';
import { Pager } from '../components/pager.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { useApp } from '../context.js';
import { constraintText, matchTypeLabel } from '../../evaluation/constraint-words.js';
import { pageOf } from '../lib/flag-list.js';
import { countOf, formatCount } from '../lib/format.js';
import { paths } from '../lib/routes.js';
import { filterSegments, usageCounts } from '../lib/segment-usage.js';
import { Link, useLocation } from '../router.js';
import type { NamespaceOutline, Page, Segment } from '../types.js';
import { useApi } from '../use-api.js';

export function SegmentsPage({ namespace }: { namespace: string }) {
  const { reference } = useApp();
  const loc = useLocation();
  const nsPath = `/api/v1/namespaces/${encodeURIComponent(namespace)}`;
  const res = useApi<Page & { segments: Segment[] }>(withQuery(`${nsPath}/segments`, { reference }));
  const outlineRes = useApi<NamespaceOutline>(withQuery(`${nsPath}/outline`, { reference }));
  const [search, setSearch] = useState(() => loc.query.get('q') ?? '');
  const [page, setPage] = useState(() => Number(loc.query.get('page') ?? '1') || 1);

  useEffect(() => {
    history.replaceState(null, '', paths.segments(namespace, reference, { q: search === '' ? undefined : search, page: page > 1 ? String(page) : undefined }));
  }, [search, page, namespace, reference]);

  const counts = useMemo(() => (outlineRes.state === 'ok' ? usageCounts(outlineRes.data) : undefined), [outlineRes]);
  const all = res.state === 'ok' ? res.data.segments : [];
  const matching = useMemo(() => filterSegments(all, search, constraintText), [all, search]);
  const shown = pageOf(matching, page);

  return (
    <>
      <NamespaceTabs namespace={namespace} current="segments" />
      <PageTitle title={`Segments in ${namespace}`} />
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="segment-search">Search</label>
          <input
            id="segment-search"
            type="search"
            value={search}
            placeholder="key, name or constraint"
            onInput={(e) => {
              setSearch((e.currentTarget as HTMLInputElement).value);
              setPage(1);
            }}
            autocomplete="off"
            spellcheck={false}
          />
        </div>
      </form>
      {res.state === 'loading' && <Loading what="segments" />}
      {res.state === 'error' && <ErrorBox error={res.error} />}
      {res.state === 'ok' && (
        <>
          <p class="muted" role="status" id="segment-count" tabIndex={-1}>
            {all.length === 0
              ? 'No segments in this namespace.'
              : shown.total === 0
                ? `No segments match (of ${formatCount(all.length)}).`
                : shown.pages > 1
                  ? `Showing ${formatCount(shown.first)}–${formatCount(shown.last)} of ${countOf(shown.total, 'segment', 'segments')}.`
                  : `${countOf(shown.total, 'segment', 'segments')}${shown.total !== all.length ? ` (${formatCount(all.length)} in all)` : ''}.`}
          </p>
          {shown.total > 0 && (
            <div class="table-wrap">
              <table class="list segments" aria-describedby="segment-count">
                <thead>
                  <tr>
                    <th scope="col">Segment</th>
                    <th scope="col">Match</th>
                    <th scope="col">Constraints</th>
                    <th scope="col">Used in</th>
                  </tr>
                </thead>
                <tbody>
                  {shown.items.map((s) => {
                    const n = counts?.get(s.key) ?? 0;
                    return (
                      <tr key={s.key}>
                        {/* Key and name share a column so the constraints keep room on a phone. */}
                        <th scope="row">
                          <Link href={paths.segment(namespace, s.key, reference)}>
                            <code>{s.key}</code>
                          </Link>
                          {s.name !== '' && s.name !== s.key && <span class="segment-name">{s.name}</span>}
                        </th>
                        <td data-label="Match">{matchTypeLabel(s.matchType)}</td>
                        <td data-label="Constraints">
                          {s.constraints.length === 0 ? (
                            <span class="muted">none (every entity)</span>
                          ) : (
                            <ul class="constraints">
                              {s.constraints.map((c) => (
                                <li key={c.id}>{constraintText(c)}</li>
                              ))}
                            </ul>
                          )}
                        </td>
                        <td data-label="Used in">{counts === undefined ? <span class="muted">…</span> : n === 0 ? <span class="muted">no flag</span> : countOf(n, 'flag', 'flags')}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
          <Pager page={shown.page} pages={shown.pages} onPage={setPage} topId="segment-count" idPrefix="segments-pager" />
        </>
      )}
    </>
  );
}
