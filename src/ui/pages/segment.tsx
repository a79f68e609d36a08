/**
 * One segment: who is in it (match type and constraints in words, each with its description),
 * and the flags whose rules or rollouts use it, with where (rule and rollout ranks). That answer is
 * one light read, `GET .../segments/{key}/usage` (a few bytes per flag, gzipped), so it is read
 * with the page.
 */
import { withQuery } from '../api.js';
import { NamespaceTabs } from '../components/namespace-tabs.js';
import { PageTitle } from '../components/page-title.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { useApp } from '../context.js';
import { constraintText, matchTypeLabel, matchTypeSentence } from '../../evaluation/constraint-words.js';
import { paths } from '../lib/routes.js';
import { usageHeadline, whereText } from '../lib/segment-usage.js';
import { Link } from '../router.js';
import type { Segment, SegmentUsage } from '../types.js';
import { useApi } from '../use-api.js';

function UsedBy({ namespace, segmentKey }: { namespace: string; segmentKey: string }) {
  const { reference } = useApp();
  const res = useApi<SegmentUsage>(
    withQuery(`/api/v1/namespaces/${encodeURIComponent(namespace)}/segments/${encodeURIComponent(segmentKey)}/usage`, { reference }),
  );
  if (res.state === 'loading') return <Loading what="the flags" />;
  if (res.state === 'error') return <ErrorBox error={res.error} />;
  const uses = res.data.flags;
  if (uses.length === 0) return <p role="status">{usageHeadline(0)}</p>;
  return (
    <>
      <p role="status">{usageHeadline(uses.length)}</p>
      <ul class="used-by">
        {uses.map((u) => (
          <li key={u.key}>
            <Link href={paths.flag(namespace, u.key, reference)}>
              <code>{u.key}</code>
            </Link>
            {u.name !== '' && u.name !== u.key && ` (${u.name})`}: {whereText(u)}
          </li>
        ))}
      </ul>
    </>
  );
}

export function SegmentPage({ namespace, segmentKey }: { namespace: string; segmentKey: string }) {
  const { reference } = useApp();
  const res = useApi<Segment>(
    withQuery(`/api/v1/namespaces/${encodeURIComponent(namespace)}/segments/${encodeURIComponent(segmentKey)}`, { reference }),
  );
  const segment = res.state === 'ok' ? res.data : undefined;

  return (
    <>
      <NamespaceTabs namespace={namespace} current="segments" />
      <PageTitle title={segment ? segment.name || segment.key : segmentKey} />
      {res.state === 'loading' && <Loading what="the segment" />}
      {res.state === 'error' && <ErrorBox error={res.error} />}
      {segment && (
        <>
          <p class="flag-summary">
            <code>{segment.key}</code>
            <span>match {matchTypeLabel(segment.matchType)}</span>
          </p>
          {segment.description !== '' && <p>{segment.description}</p>}

          <section aria-labelledby="constraints-heading">
            <h2 id="constraints-heading">Constraints</h2>
            <p>{matchTypeSentence(segment.matchType, segment.constraints.length)}</p>
            {segment.constraints.length > 0 && (
              <ul class="constraints detailed">
                {segment.constraints.map((c) => (
                  <li key={c.id}>
                    <span class="constraint">{constraintText(c)}</span>
                    {c.description !== '' && <span class="muted constraint-description">{c.description}</span>}
                  </li>
                ))}
              </ul>
            )}
          </section>

          <section aria-labelledby="used-by-heading">
            <h2 id="used-by-heading">Used by</h2>
            <UsedBy namespace={namespace} segmentKey={segmentKey} />
          </section>
        </>
      )}
    </>
  );
}
