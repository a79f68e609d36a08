/**
 * The history page of one reference (`GET /meta/history`, docs/history.md): what vexil served
 * when, newest first, with the revisions it rejected in their place in time. Each served entry
 * says from when until when it was served (or that it is serving now), what replaced it, and
 * links to the diff page comparing the revision served before it with it; each rejection shows
 * its first problems at `file:line:column` and what vexil kept serving. Pages of older entries
 * follow the API's `pageToken`, kept in the address. The revision served before the page's oldest
 * entries is read from the next page (one bounded request) so their links are there too.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { PageTitle } from '../components/page-title.js';
import { Loading } from '../components/status-line.js';
import { useApp } from '../context.js';
import { location as problemLocation } from '../lib/excerpt.js';
import { shortRevision } from '../lib/format.js';
import {
  emptyHistoryText,
  firstLine,
  historyApiPath,
  historyErrorText,
  historySummary,
  newestServed,
  parseHistoryQuery,
  previousLookupPath,
  problemCountText,
  servedBeforeOnPage,
  servedForText,
} from '../lib/history-text.js';
import { paths } from '../lib/routes.js';
import { whenText } from '../lib/status-text.js';
import { Link, useLocation } from '../router.js';
import type { HistoryEntry, HistoryPage as HistoryPageData } from '../types.js';
import { useApi } from '../use-api.js';

/** The revision served before the page's oldest entries: still being read, read (maybe none), or unreadable. */
type Before = { state: 'reading' } | { state: 'read'; revision: string | undefined } | { state: 'unknown' };

export function HistoryPage() {
  const { reference, snapshots } = useApp();
  const loc = useLocation();
  const address = parseHistoryQuery(loc.query);
  const limitParam = loc.query.get('limit') ?? undefined;
  const name = reference ?? snapshots?.defaultReference;
  const loaded = useApi<HistoryPageData>(historyApiPath(reference, address));
  const now = Date.now();

  const lookup = loaded.state === 'ok' ? previousLookupPath(reference, loaded.data.nextPageToken) : undefined;
  const [before, setBefore] = useState<Before>({ state: 'reading' });
  useEffect(() => {
    if (loaded.state !== 'ok') return;
    if (lookup === undefined) {
      setBefore({ state: 'read', revision: undefined });
      return;
    }
    const ctl = new AbortController();
    setBefore({ state: 'reading' });
    api<HistoryPageData>(lookup, { signal: ctl.signal }).then(
      (older) => setBefore({ state: 'read', revision: newestServed(older.entries) }),
      (err: unknown) => {
        if (!ctl.signal.aborted && err instanceof ApiError) setBefore({ state: 'unknown' });
      },
    );
    return () => ctl.abort();
  }, [loaded, lookup]);

  return (
    <>
      <PageTitle title={name === undefined ? 'History' : `History of ${name}`}>
        History{name !== undefined && <> of <code>{name}</code></>}
      </PageTitle>
      <p class="muted">
        What vexil served and when, newest first, with the revisions it rejected in their place (a rejected revision never replaced what was served).
        Each served revision links to the diff with the one served before it. The reference's state now is on the{' '}
        <Link href={paths.status(reference)}>status page</Link>.
      </p>
      {loaded.state === 'loading' && <Loading what="the history" />}
      {loaded.state === 'error' && <HistoryError error={loaded.error} reference={reference} limit={limitParam} />}
      {loaded.state === 'ok' && (
        <>
          {loaded.data.entries.length === 0 ? (
            <p id="history-empty" class="panel">
              {emptyHistoryText(name ?? 'this reference', address.pageToken !== '')}
            </p>
          ) : (
            <>
              <p class="muted" role="status" id="history-summary">
                {historySummary(loaded.data.entries, loaded.data.nextPageToken !== '')}
              </p>
              <EntryList entries={loaded.data.entries} before={before} reference={reference} now={now} />
            </>
          )}
          {(address.pageToken !== '' || loaded.data.nextPageToken !== '') && (
            <nav class="pager" aria-label="History pages">
              {address.pageToken !== '' && <Link href={paths.history(reference, { limit: limitParam })}>Newest entries</Link>}
              {loaded.data.nextPageToken !== '' && (
                <Link href={paths.history(reference, { limit: limitParam, pageToken: loaded.data.nextPageToken })}>Older entries</Link>
              )}
            </nav>
          )}
        </>
      )}
    </>
  );
}

function HistoryError({ error, reference, limit }: { error: ApiError; reference: string | undefined; limit: string | undefined }) {
  const words = historyErrorText(error.status, error.message);
  return (
    <div class="error-box" role="alert" id="history-error">
      <p>
        <strong>{words.title}</strong>: {words.text}
      </p>
      {error.status === 400 && (
        <p>
          <Link href={paths.history(reference, { limit })}>Show the newest entries</Link>
        </p>
      )}
    </div>
  );
}

function EntryList({ entries, before, reference, now }: { entries: readonly HistoryEntry[]; before: Before; reference: string | undefined; now: number }) {
  const onPage = servedBeforeOnPage(entries);
  return (
    <ol class="history" id="history-entries">
      {entries.map((e, i) => (
        <EntryItem key={`${e.status}-${e.revision}-${entryKey(e)}`} entry={e} servedBefore={onPage[i] !== undefined ? { state: 'read', revision: onPage[i] } : before} reference={reference} now={now} />
      ))}
    </ol>
  );
}

const entryKey = (e: HistoryEntry) => (e.status === 'served' ? e.servedFrom : e.rejectedAt) ?? '';

function Revision({ id }: { id: string }) {
  const short = shortRevision(id);
  return (
    <>
      <code title={id}>{short}</code>
      {short !== id && <span class="visually-hidden"> (full id {id})</span>}
    </>
  );
}

function EntryItem({ entry: e, servedBefore, reference, now }: { entry: HistoryEntry; servedBefore: Before; reference: string | undefined; now: number }) {
  const served = e.status === 'served';
  const message = firstLine(e.message);
  const problems = e.problems ?? [];
  return (
    <li class={`panel history-entry ${e.status}`}>
      <h2>
        <span class={served ? 'badge on' : 'badge bad'}>{served ? 'served' : 'rejected'}</span> <Revision id={e.revision} />{' '}
        <span class="entry-message">{message === '' ? '(no commit message)' : message}</span>
      </h2>
      <dl class="props">
        <dt>Author</dt>
        <dd>{e.author || '—'}</dd>
        <dt>Committed at</dt>
        <dd>{whenText(e.committedAt ?? undefined, now) || '—'}</dd>
        {served ? (
          <>
            <dt>Served</dt>
            <dd>
              {whenText(e.servedFrom ?? undefined, now)} → {e.servedUntil === null ? <strong>serving now</strong> : whenText(e.servedUntil, now)}
              {servedForText(e, now) !== '' && <span class="muted"> ({servedForText(e, now)})</span>}
            </dd>
            <dt>Replaced by</dt>
            <dd>{e.replacedBy === null ? '—' : <Revision id={e.replacedBy} />}</dd>
          </>
        ) : (
          <>
            <dt>Rejected at</dt>
            <dd>{whenText(e.rejectedAt, now) || '—'}</dd>
            <dt>Kept serving</dt>
            <dd>{keptServing(servedBefore)}</dd>
          </>
        )}
        {e.replica !== undefined && (
          <>
            <dt>Recorded by</dt>
            <dd>
              <code>{e.replica}</code>
            </dd>
          </>
        )}
      </dl>
      {served ? (
        <DiffLink entry={e} servedBefore={servedBefore} reference={reference} />
      ) : (
        <>
          <h3>{capitalise(problemCountText(problems.length, e.problemCount ?? problems.length))}</h3>
          <ol class="problems">
            {problems.map((p, i) => (
              <li key={i} class="problem">
                <code class="location">{problemLocation(p)}</code> <span class={p.severity === 'error' ? 'badge bad' : 'badge off'}>{p.severity}</span>{' '}
                <code class="rule">{p.rule}</code> <span class="problem-message">{p.message}</span>
              </li>
            ))}
          </ol>
        </>
      )}
    </li>
  );
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function keptServing(b: Before) {
  if (b.state === 'reading') return 'looking it up…';
  if (b.state === 'unknown') return 'unknown (the older entries could not be read)';
  return b.revision === undefined ? 'nothing (no revision of the reference had been served)' : <Revision id={b.revision} />;
}

function DiffLink({ entry: e, servedBefore, reference }: { entry: HistoryEntry; servedBefore: Before; reference: string | undefined }) {
  if (servedBefore.state === 'reading') return <p class="muted">Looking up the revision served before…</p>;
  if (servedBefore.state === 'unknown') return <p class="muted">The revision served before cannot be read now.</p>;
  if (servedBefore.revision === undefined) return <p class="muted">The first revision in the history kept: nothing served before it to compare with.</p>;
  const base = servedBefore.revision;
  return (
    <p>
      <Link class="diff-link" href={paths.diff({ ref: reference, base, head: e.revision })}>
        Diff with the revision served before
      </Link>{' '}
      <span class="muted">
        (<code>{shortRevision(base)}</code> → <code>{shortRevision(e.revision)}</code>)
      </span>
    </p>
  );
}
