/** The segments of a namespace with their constraints in words, 50 per page. */
import { useState } from 'preact/hooks';
import { withQuery } from '../api.js';
import { NamespaceTabs } from '../components/namespace-tabs.js';
import { PageTitle } from '../components/page-title.js';
import { Pager } from '../components/pager.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { useApp } from '../context.js';
import { constraintText, matchTypeLabel } from '../../evaluation/constraint-words.js';
import { pageOf } from '../lib/flag-list.js';
import { paths } from '../lib/routes.js';
import { Link } from '../router.js';
import type { Page, Segment } from '../types.js';
import { useApi } from '../use-api.js';

export function SegmentsPage({ namespace }: { namespace: string }) {
  const { reference } = useApp();
  const res = useApi<Page & { segments: Segment[] }>(withQuery(`/api/v1/namespaces/${encodeURIComponent(namespace)}/segments`, { reference }));
  const [page, setPage] = useState(1);
  const shown = pageOf(res.state === 'ok' ? res.data.segments : [], page);

  return (
    <>
      <NamespaceTabs namespace={namespace} current="segments" />
      <PageTitle title={`Segments in ${namespace}`} />
      {res.state === 'loading' && <Loading what="segments" />}
      {res.state === 'error' && <ErrorBox error={res.error} />}
      {res.state === 'ok' && (
        <>
          <p class="muted" role="status" id="segment-count">
            {shown.total === 0
              ? 'No segments in this namespace.'
              : shown.pages > 1
                ? `Showing ${shown.first}–${shown.last} of ${shown.total} segments.`
                : `${shown.total} ${shown.total === 1 ? 'segment' : 'segments'}.`}
          </p>
          {shown.total > 0 && (
            <div class="table-wrap">
              <table class="list segments" aria-describedby="segment-count">
                <thead>
                  <tr>
                    <th scope="col">Segment</th>
                    <th scope="col">Match</th>
                    <th scope="col">Constraints</th>
                  </tr>
                </thead>
                <tbody>
                  {shown.items.map((s) => (
                    <tr key={s.key}>
                      {/* Key and name share a column so the constraints keep room on a phone. */}
                      <th scope="row">
                        <Link href={paths.segment(namespace, s.key, reference)}>
                          <code>{s.key}</code>
                        </Link>
                        {s.name !== '' && s.name !== s.key && <span class="segment-name">{s.name}</span>}
                      </th>
                      <td>{matchTypeLabel(s.matchType)}</td>
                      <td>
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
