/**
 * The status page: per reference the server keeps (`/meta/snapshots`), problems first (nothing
 * served, an older revision served because the newest was rejected, a failed check, stale), the
 * revision served (id, author, message, commit time), when it was loaded and last checked, the
 * last error, and the last rejected revision with each located problem (`file:line:column`,
 * severity, rule, message, hint) and the lines it points at, with a link to each reference's
 * history. "Check now" asks the server to look at the source (`POST /meta/refresh`, which the
 * server coalesces to one look a second) and says when it looked and what changed, or why it was
 * refused. A filter narrows the list when there are many references. Re-read every 10 s while the
 * page is visible.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { PageTitle } from '../components/page-title.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { useApp } from '../context.js';
import { excerptRows, location, type ProblemExcerpt } from '../lib/excerpt.js';
import { age, countOf, formatCount, shortRevision } from '../lib/format.js';
import { statusAnchor } from '../lib/reference-truth.js';
import { paths } from '../lib/routes.js';
import {
  checkChanges,
  checkRefusedText,
  checkResultText,
  isProblem,
  problemsFirst,
  referenceState,
  statusSummary,
  whenText,
  type ReferenceState,
} from '../lib/status-text.js';
import { Link } from '../router.js';
import type { Problem, ReferenceStatus, RevisionInfo, Snapshots } from '../types.js';

const REFRESH_MS = 10_000;
/** From this many references on, a filter field narrows the list. */
const FILTER_FROM = 10;

type Check = { state: 'idle' } | { state: 'checking' } | { state: 'done'; text: string } | { state: 'refused'; status: number; text: string };

export function StatusPage() {
  const { snapshots, snapshotsError, reloadSnapshots } = useApp();
  const [now, setNow] = useState(Date.now());
  const [check, setCheck] = useState<Check>({ state: 'idle' });
  const [filter, setFilter] = useState('');

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
  const target = window.location.hash.startsWith('#ref-') ? decodeURIComponent(window.location.hash.slice(1)) : undefined;
  useEffect(() => {
    if (snapshots === undefined || landed.current || target === undefined) return;
    // The list may first be an older read that lacks the entry: try again with each new one.
    const entry = document.getElementById(target);
    if (entry === null) return;
    landed.current = true;
    entry.scrollIntoView();
  }, [snapshots, target]);

  const checkNow = async () => {
    const before = snapshots?.references ?? [];
    setCheck({ state: 'checking' });
    try {
      // A refused check is said here; it does not leave the page for the login page.
      const after = await api<Snapshots>('/meta/refresh', { method: 'POST', body: {}, quiet401: true });
      setCheck({ state: 'done', text: checkResultText(Date.now(), checkChanges(before, after.references)) });
      reloadSnapshots();
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError(0, undefined, String(err));
      setCheck({ state: 'refused', status: e.status, text: checkRefusedText(e.status, e.message) });
    }
  };

  const refs = snapshots === undefined ? [] : problemsFirst(snapshots.references);
  const needle = filter.trim().toLowerCase();
  const shown = needle === '' ? refs : refs.filter((r) => r.reference.toLowerCase().includes(needle));

  return (
    <>
      <PageTitle title="Status" />
      {snapshotsError !== undefined && <ErrorBox error={snapshotsError} />}
      <div class="status-check">
        <button type="button" id="check-now" onClick={() => void checkNow()} disabled={check.state === 'checking'} aria-describedby="check-result">
          {check.state === 'checking' ? 'Checking…' : 'Check now'}
        </button>
        <p id="check-result" role="status" class={check.state === 'refused' ? 'check-refused' : 'muted'}>
          {check.state === 'idle' && 'Asks the server to look at the source now instead of waiting for its next poll.'}
          {check.state === 'checking' && 'Asking the server to look at the source…'}
          {check.state === 'done' && check.text}
          {check.state === 'refused' && (
            <>
              {check.text}
              {check.status === 401 && (
                <>
                  {' '}
                  <Link href={paths.login('/ui/status')}>Sign in</Link>
                </>
              )}
            </>
          )}
        </p>
      </div>
      {snapshots === undefined ? (
        snapshotsError === undefined && <Loading what="the references' status" />
      ) : (
        <>
          <p class="muted status-line">
            <span role="status" aria-live="polite" id="status-summary">
              {statusSummary(snapshots.references)}
            </span>{' '}
            Re-read every 10 s.
          </p>
          {refs.length >= FILTER_FROM && (
            <p class="status-filter">
              <label for="status-filter">Filter references</label>{' '}
              <input id="status-filter" type="search" value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} autocomplete="off" spellcheck={false} />{' '}
              <span class="muted" aria-live="polite">
                {shown.length === refs.length ? countOf(refs.length, 'reference') : `${formatCount(shown.length)} of ${countOf(refs.length, 'reference')}`}
              </span>
            </p>
          )}
          <div class="table-wrap">
            <table class="list" id="status-references">
              <caption class="visually-hidden">References, problems first</caption>
              <thead>
                <tr>
                  <th scope="col">Reference</th>
                  <th scope="col">State</th>
                  <th scope="col">Served</th>
                  <th scope="col">Loaded</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((r) => (
                  <tr key={r.reference}>
                    <th scope="row">
                      <a href={`#${statusAnchor(r.reference)}`}>
                        <code>{r.reference}</code>
                      </a>
                      {r.default && <> <span class="badge">default</span></>}
                    </th>
                    <td>
                      <StateBadge status={r} />
                    </td>
                    <td>
                      {r.revision ? (
                        <>
                          <code title={r.revision.id}>{shortRevision(r.revision.id)}</code>
                          {r.revision.meta?.at !== undefined && <span class="muted"> committed {age(r.revision.meta.at, now)}</span>}
                        </>
                      ) : (
                        'nothing'
                      )}
                    </td>
                    <td>{age(r.loadedAt, now) || '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {shown.map((r) => (
            <ReferenceSection key={r.reference} status={r} now={now} targeted={target === statusAnchor(r.reference)} />
          ))}
        </>
      )}
    </>
  );
}

const BADGE: Record<ReferenceState, string> = {
  'nothing served': 'badge bad',
  'older revision served': 'badge bad',
  'check failed': 'badge off',
  stale: 'badge off',
  'not loaded': 'badge',
  ok: 'badge on',
};

function StateBadge({ status }: { status: ReferenceStatus }) {
  const state = referenceState(status);
  return <span class={BADGE[state]}>{state}</span>;
}

/** One sentence under a reference's heading: what is served, in words. */
function servedSentence(r: ReferenceStatus): string {
  const state = referenceState(r);
  const served = r.revision ? shortRevision(r.revision.id) : '';
  switch (state) {
    case 'nothing served':
      return r.lastRejected
        ? `Nothing is served: its newest commit ${shortRevision(r.lastRejected.revision.id)} was rejected and no earlier commit was ever valid.`
        : 'Nothing is served: the source could not be read yet.';
    case 'older revision served':
      return `An older revision is still served: ${served}, because the newest commit ${shortRevision(r.lastRejected!.revision.id)} was rejected.`;
    case 'check failed':
      return `${served} is served, but the last look at the source failed: the newest commit may be another one.`;
    case 'stale':
      return `${served} is served, but the source has not confirmed it lately.`;
    case 'not loaded':
      return 'Not loaded yet.';
    case 'ok':
      return `${served} is served, the newest commit the server has seen.`;
  }
}

function ReferenceSection({ status: r, now, targeted }: { status: ReferenceStatus; now: number; targeted: boolean }) {
  const id = statusAnchor(r.reference);
  const problem = isProblem(referenceState(r));
  const props = (
    <dl class="props">
      {r.revision ? (
        <RevisionProps revision={r.revision} now={now} />
      ) : (
        <>
          <dt>Revision</dt>
          <dd>none served</dd>
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
  );
  return (
    <section class={`panel status-ref${problem ? ' problem' : ''}`} id={id} aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>
        <code>{r.reference}</code> {r.default && <span class="badge">default</span>} <StateBadge status={r} />
      </h2>
      <p>{servedSentence(r)}</p>
      <p>
        <Link href={paths.namespaces(r.reference)}>Browse the flags of {r.reference}</Link>
        {' · '}
        <Link href={paths.history(r.reference)}>History of {r.reference}</Link>
      </p>
      {problem ? (
        props
      ) : (
        <details open={targeted}>
          <summary>Revision, load and check times of {r.reference}</summary>
          {props}
        </details>
      )}
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
          <h4>{countOf(r.lastRejected.problems.length, 'problem')}</h4>
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
      <dt>Committed</dt>
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
    // Focusable: on a narrow screen the lines scroll sideways, and the keyboard must reach that too.
    <pre class="excerpt" tabIndex={0} aria-label={`${problem.file} lines ${excerpt.startLine} to ${last}`}>
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
