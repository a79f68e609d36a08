/**
 * The status page: per reference the server keeps (`/meta/snapshots`), the revision served (id,
 * author, message, when), when it was loaded and last checked, staleness, the last error, and the
 * last rejected revision with each located problem (`file:line:column`, severity, rule, message,
 * hint) and the lines it points at, and a link to each reference's history page. Refreshed
 * every 10 s while the page is visible.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { PageTitle } from '../components/page-title.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { useApp } from '../context.js';
import { excerptRows, location, type ProblemExcerpt } from '../lib/excerpt.js';
import { shortRevision } from '../lib/format.js';
import { statusAnchor } from '../lib/reference-truth.js';
import { paths } from '../lib/routes.js';
import { referenceState, statusSummary, whenText } from '../lib/status-text.js';
import { Link } from '../router.js';
import type { Problem, ReferenceStatus, RevisionInfo } from '../types.js';

const REFRESH_MS = 10_000;

export function StatusPage() {
  const { snapshots, snapshotsError, reloadSnapshots } = useApp();
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    const tick = () => {
      if (document.visibilityState !== 'visible') return;
      reloadSnapshots();
      setNow(Date.now());
    };
    const timer = setInterval(tick, REFRESH_MS);
    document.addEventListener('visibilitychange', tick);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', tick);
    };
  }, [reloadSnapshots]);
  useEffect(() => setNow(Date.now()), [snapshots]);
  // A link to one reference's entry (`#ref-…`, the truth banner's) lands on it once the list is drawn.
  const landed = useRef(false);
  useEffect(() => {
    if (snapshots === undefined || landed.current || !window.location.hash.startsWith('#ref-')) return;
    // The list may first be an older read that lacks the entry: try again with each new one.
    const entry = document.getElementById(decodeURIComponent(window.location.hash.slice(1)));
    if (entry === null) return;
    landed.current = true;
    entry.scrollIntoView();
  }, [snapshots]);

  return (
    <>
      <PageTitle title="Status" />
      {snapshotsError !== undefined && <ErrorBox error={snapshotsError} />}
      {snapshots === undefined ? (
        snapshotsError === undefined && <Loading what="the references' status" />
      ) : (
        <>
          <p class="muted status-line">
            <span role="status" aria-live="polite" id="status-summary">
              {statusSummary(snapshots.references)}
            </span>{' '}
            Refreshed every 10 s.{' '}
            <button type="button" onClick={reloadSnapshots}>
              Refresh now
            </button>
          </p>
          <div class="table-wrap">
            <table class="list" id="status-references">
              <caption class="visually-hidden">References</caption>
              <thead>
                <tr>
                  <th scope="col">Reference</th>
                  <th scope="col">Revision</th>
                  <th scope="col">Loaded</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {snapshots.references.map((r) => (
                  <tr key={r.reference}>
                    <th scope="row">
                      <a href={`#${statusAnchor(r.reference)}`}>
                        <code>{r.reference}</code>
                      </a>
                      {r.default && <> <span class="badge">default</span></>}
                    </th>
                    <td>{r.revision ? <code title={r.revision.id}>{shortRevision(r.revision.id)}</code> : '—'}</td>
                    <td>{whenText(r.loadedAt, now) || '—'}</td>
                    <td>
                      <StateBadge status={r} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {snapshots.references.map((r) => (
            <ReferenceSection key={r.reference} status={r} now={now} />
          ))}
        </>
      )}
    </>
  );
}


function StateBadge({ status }: { status: ReferenceStatus }) {
  const state = referenceState(status);
  const cls = state === 'ok' ? 'badge on' : state === 'not loaded' ? 'badge' : state === 'stale' ? 'badge off' : 'badge bad';
  return <span class={cls}>{state}</span>;
}

function ReferenceSection({ status: r, now }: { status: ReferenceStatus; now: number }) {
  const id = statusAnchor(r.reference);
  return (
    <section class="panel status-ref" id={id} aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>
        <code>{r.reference}</code> {r.default && <span class="badge">default</span>} <StateBadge status={r} />
      </h2>
      <p>
        <Link href={paths.namespaces(r.reference)}>Browse the flags of {r.reference}</Link>
        {' · '}
        <Link href={paths.history(r.reference)}>History of {r.reference}</Link>
      </p>
      <dl class="props">
        {r.revision ? <RevisionProps revision={r.revision} now={now} /> : (
          <>
            <dt>Revision</dt>
            <dd>none loaded yet</dd>
          </>
        )}
        <dt>Loaded at</dt>
        <dd>{whenText(r.loadedAt, now) || '—'}</dd>
        <dt>Checked at</dt>
        <dd>{whenText(r.checkedAt, now) || '—'}</dd>
        <dt>Staleness</dt>
        <dd>{r.stale ?? 'not stale'}</dd>
        <dt>Last error</dt>
        <dd>{r.lastError ? `${r.lastError.message} (${whenText(r.lastError.at, now)})` : 'none'}</dd>
      </dl>
      {r.lastRejected && (
        <>
          <h3>Rejected revision</h3>
          <p>
            The revision below was rejected; {r.revision ? <>the server keeps serving <code>{shortRevision(r.revision.id)}</code>.</> : 'nothing is served yet.'}
          </p>
          <dl class="props">
            <RevisionProps revision={r.lastRejected.revision} now={now} />
            <dt>Rejected at</dt>
            <dd>{whenText(r.lastRejected.at, now)}</dd>
          </dl>
          <h4>
            {r.lastRejected.problems.length} problem{r.lastRejected.problems.length === 1 ? '' : 's'}
          </h4>
          <ol class="problems">
            {r.lastRejected.problems.map((p, i) => (
              <ProblemItem key={i} problem={p} />
            ))}
          </ol>
        </>
      )}
    </section>
  );
}

function RevisionProps({ revision, now }: { revision: RevisionInfo; now: number }) {
  return (
    <>
      <dt>Revision</dt>
      <dd>
        <code title={revision.id}>{shortRevision(revision.id)}</code>
        {shortRevision(revision.id) !== revision.id && <span class="visually-hidden"> (full id {revision.id})</span>}
      </dd>
      <dt>Author</dt>
      <dd>{revision.meta?.author ?? '—'}</dd>
      <dt>Message</dt>
      <dd class="message">{revision.meta?.message?.trim() || '—'}</dd>
      <dt>When</dt>
      <dd>{whenText(revision.meta?.at, now) || '—'}</dd>
    </>
  );
}

function ProblemItem({ problem: p }: { problem: Problem }) {
  const excerpt = p.excerpt as ProblemExcerpt | undefined;
  return (
    <li class="problem">
      <p>
        <code class="location">{location(p)}</code> <span class={p.severity === 'error' ? 'badge bad' : 'badge off'}>{p.severity}</span>{' '}
        <code class="rule">{p.rule}</code>
      </p>
      <p class="problem-message">{p.message}</p>
      {p.hint !== undefined && p.hint !== '' && <p class="muted">Hint: {p.hint}</p>}
      {excerpt !== undefined && <ExcerptBlock excerpt={excerpt} problem={p} />}
    </li>
  );
}

function ExcerptBlock({ excerpt, problem }: { excerpt: ProblemExcerpt; problem: Problem }) {
  const rows = excerptRows(excerpt, problem.line, problem.column);
  const last = excerpt.startLine + excerpt.lines.length - 1;
  const gutter = ' '.repeat(rows[0]?.number.length ?? 1);
  return (
    <pre class="excerpt" aria-label={`${problem.file} lines ${excerpt.startLine} to ${last}`}>
      {rows.map((r) => (
        <span key={r.number} class={r.offending ? 'offending' : undefined}>
          {`${r.offending ? '>' : ' '} ${r.number} │ `}
          {r.mark ? (
            <>
              {r.mark.before}
              <mark>{r.mark.at === '' ? ' ' : r.mark.at}</mark>
              {r.mark.after}
              {`\n  ${gutter} │ ${r.mark.caretIndent}^`}
            </>
          ) : (
            r.text
          )}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}
