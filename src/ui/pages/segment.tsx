/**
 * One segment: who is in it (match type and constraints in words, each with its description),
 * and, on request, the flags whose rules or rollouts use it. That last answer comes from one
 * document, the namespace's evaluation snapshot (lib/segment-usage.ts), rather than one request
 * per flag; it is read only when asked for, since a large namespace makes it large.
 */
import { useState } from 'preact/hooks';
import { withQuery } from '../api.js';
import { NamespaceTabs } from '../components/namespace-tabs.js';
import { PageTitle } from '../components/page-title.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { useApp } from '../context.js';
import { constraintText, matchTypeLabel, matchTypeSentence } from '../../evaluation/constraint-words.js';
import { paths } from '../lib/routes.js';
import { segmentUses, type UsageDocument } from '../lib/segment-usage.js';
import { Link } from '../router.js';
import type { Segment } from '../types.js';
import { useApi } from '../use-api.js';

function UsedBy({ namespace, segmentKey }: { namespace: string; segmentKey: string }) {
  const { reference } = useApp();
  const res = useApi<UsageDocument>(withQuery(`/internal/v1/evaluation/snapshot/namespace/${encodeURIComponent(namespace)}`, { reference }));
  if (res.state === 'loading') return <Loading what="the flags" />;
  if (res.state === 'error') return <ErrorBox error={res.error} />;
  const uses = segmentUses(res.data, segmentKey);
  if (uses.length === 0) return <p role="status">No flag uses this segment.</p>;
  return (
    <>
      <p role="status">
        {uses.length === 1 ? '1 flag uses' : `${uses.length} flags use`} this segment.
      </p>
      <ul class="used-by">
        {uses.map((u) => (
          <li key={u.flagKey}>
            <Link href={paths.flag(namespace, u.flagKey, reference)}>
              <code>{u.flagKey}</code>
            </Link>
            {u.flagName !== '' && u.flagName !== u.flagKey && ` (${u.flagName})`}: {u.where}
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
  // Which segment (and reference) the person asked "used by" for: another page or reference asks again.
  const [askedFor, setAskedFor] = useState<string | undefined>(undefined);
  const askKey = `${reference ?? ''}\u0000${namespace}\u0000${segmentKey}`;
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
            {/* The button stays after the answer comes, so keyboard focus is not dropped. */}
            <button type="button" onClick={() => setAskedFor(askKey)}>
              Find the flags that use this segment
            </button>
            {askedFor === askKey && <UsedBy namespace={namespace} segmentKey={segmentKey} />}
          </section>
        </>
      )}
    </>
  );
}
