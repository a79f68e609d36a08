/**
 * The diff page: what head changes compared with base (any two references the server can build:
 * branches, tags, commit ids), through `GET /api/v1/diff`: a summary per namespace, each flag's and
 * segment's changes in words (the words of `vexil diff`), and the impact preview (how many of N
 * synthetic entities get another outcome, from what to what). The address holds the comparison
 * shown, so it can be shared, and opening it runs the comparison. Made for review: each
 * namespace and entry collapses (a large comparison starts collapsed, drawn 100 entries at a
 * time), a filter with counts (changed, added, removed, impact > 0), flags reached through a
 * changed segment listed even when the sample shows no change, an added or removed flag's summary,
 * the policy's guard findings beside their flags (`policy=auto`), "Copy as Markdown" (the text of
 * `vexil diff --format markdown`) and "Copy link".
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { withQuery } from '../api.js';
import { PageTitle } from '../components/page-title.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { TruthBanner } from '../components/truth-banner.js';
import { useApp } from '../context.js';
import {
  DIFF_FILTERS,
  OPEN_UP_TO,
  type DiffEntry,
  type DiffFilter,
  type DiffReport,
  type DiffSetup,
  type FlagImpact,
  type GuardProblem,
  type NamespaceEntries,
  changeText,
  diffApiQuery,
  diffEntries,
  diffMarkdown,
  diffQuery,
  diffSetupError,
  entryLine,
  entryStatusText,
  filterCounts,
  flagSummaryLines,
  guardText,
  guardsHeadline,
  impactHeadline,
  matchesFilter,
  namespaceSummaries,
  overallText,
  parseDiffQuery,
  sampleText,
  transitionShare,
  viaSegmentText,
} from '../lib/diff-text.js';
import type { Flag, Rollout, Rule } from '../types.js';
import { flagTypeLabel, shortRevision } from '../lib/format.js';
import { paths } from '../lib/routes.js';
import { Link, navigate, useLocation } from '../router.js';
import { useApi } from '../use-api.js';

const value = (e: Event) => (e.currentTarget as HTMLInputElement).value;

export function DiffPage() {
  const { snapshots, reference } = useApp();
  const loc = useLocation();
  // The address names the comparison shown (not what is being typed): each Compare is a new
  // history entry, so Back and Forward go through earlier comparisons.
  const shown = useMemo(() => parseDiffQuery(loc.query), [loc.href]);
  const asked = shown.base !== '' && shown.head !== '' && diffSetupError(shown) === undefined ? shown : undefined;
  const [setup, setSetup] = useState<DiffSetup>(shown);
  // Each Compare asks again (a branch may have moved), even for the same setup.
  const [comparisons, setComparisons] = useState(0);
  const [formError, setFormError] = useState<string | undefined>(undefined);

  // Back/Forward: the form shows the comparison of the address it came back to.
  useEffect(() => setSetup(shown), [shown]);

  // An empty form starts from the default reference as base.
  useEffect(() => {
    if (snapshots !== undefined && shown.base === '' && shown.head === '') setSetup((s) => (s.base === '' ? { ...s, base: snapshots.defaultReference } : s));
  }, [snapshots, shown]);

  const compare = () => {
    const err = diffSetupError(setup);
    setFormError(err);
    if (err !== undefined) return;
    const address = withQuery(paths.diff(), { ref: reference, ...diffQuery(setup) });
    navigate(address, { replace: address === location.pathname + location.search });
    setComparisons((n) => n + 1);
  };
  const update = (p: Partial<DiffSetup>) => setSetup((s) => ({ ...s, ...p }));
  const refs = snapshots?.references ?? [];

  return (
    <>
      <PageTitle title="Diff" />
      <p class="muted">
        What <em>head</em> changes compared with <em>base</em>: any branch, tag or commit id the server can build, through <code>GET /api/v1/diff</code>.
      </p>
      <form
        class="filters diff-form"
        onSubmit={(e) => {
          e.preventDefault();
          compare();
        }}
      >
        <datalist id="diff-refs">
          {refs.map((r) => (
            <option key={r.reference} value={r.reference}>
              {r.revision ? shortRevision(r.revision.id) : ''}
            </option>
          ))}
        </datalist>
        <div class="field">
          <label for="diff-base">Base reference</label>
          <input id="diff-base" list="diff-refs" value={setup.base} placeholder="main" onInput={(e) => update({ base: value(e) })} autocomplete="off" spellcheck={false} />
        </div>
        <div class="field">
          <label for="diff-head">Head reference</label>
          <input id="diff-head" list="diff-refs" value={setup.head} placeholder="branch, tag or commit" onInput={(e) => update({ head: value(e) })} autocomplete="off" spellcheck={false} />
        </div>
        <div class="field">
          <label for="diff-namespace">Namespace (optional)</label>
          <input id="diff-namespace" value={setup.namespace} placeholder="all" onInput={(e) => update({ namespace: value(e) })} autocomplete="off" spellcheck={false} />
        </div>
        <div class="field">
          <label for="diff-impact">Impact entities</label>
          <input
            id="diff-impact"
            inputMode="numeric"
            value={setup.impact}
            aria-describedby="diff-impact-note"
            onInput={(e) => update({ impact: value(e) })}
            autocomplete="off"
            class="narrow"
          />
          <span id="diff-impact-note" class="muted small">
            0 = no impact preview
          </span>
        </div>
        <button
          type="button"
          aria-label="Swap base and head"
          onClick={() => setSetup((s) => ({ ...s, base: s.head, head: s.base }))}
        >
          ⇄ Swap
        </button>
        <button type="submit" class="primary">
          Compare
        </button>
      </form>
      {formError !== undefined && (
        <p class="field-error" role="alert">
          {formError}
        </p>
      )}
      {asked === undefined ? (
        <p class="muted" role="status">
          Choose a base and a head, then Compare.
        </p>
      ) : (
        <Comparison key={comparisons} setup={asked} />
      )}
    </>
  );
}

function Comparison({ setup }: { setup: DiffSetup }) {
  const res = useApi<DiffReport>(withQuery('/api/v1/diff', diffApiQuery(setup)));
  // A side whose newest commit was rejected (or never valid, or stale) is not "the branch": say so per side.
  const banners = (
    <>
      <TruthBanner reference={setup.base} side="Base" />
      {setup.head !== setup.base && <TruthBanner reference={setup.head} side="Head" />}
    </>
  );
  if (res.state === 'loading') return <>{banners}<Loading what="the comparison" /></>;
  if (res.state === 'error') return <>{banners}<ErrorBox error={res.error} /></>;
  return <>{banners}<Report report={res.data} impactAsked={diffApiQuery(setup).impact !== undefined} /></>;
}

function Report({ report, impactAsked }: { report: DiffReport; impactAsked: boolean }) {
  const summaries = namespaceSummaries(report);
  const all = useMemo(() => diffEntries(report), [report]);
  const counts = useMemo(() => filterCounts(all), [all]);
  const [filter, setFilter] = useState<DiffFilter>('all');
  const sample = report.impact?.sample;
  // A small comparison starts open; a large one with its entries collapsed (a namespace stays open when it is
  // the only one or holds few entries).
  const small = counts.all <= OPEN_UP_TO;
  const loose = (report.guards?.findings ?? []).filter((g) => g.namespace === undefined);
  return (
    <section aria-labelledby="diff-result-heading">
      <h2 id="diff-result-heading">Summary</h2>
      <p>
        <code title={report.base.revision}>{report.base.reference}</code> ({shortRevision(report.base.revision)}) →{' '}
        <code title={report.head.revision}>{report.head.reference}</code> ({shortRevision(report.head.revision)})
      </p>
      <p role="status" aria-live="polite" id="diff-overall" class="diff-overall">
        {overallText(report)}
      </p>
      {sample !== undefined && (
        <p class="muted">
          {sampleText(sample)}
          {report.impact!.omittedFlags > 0 && ` ${report.impact!.omittedFlags} flags were left out of it (over the evaluation budget).`}
        </p>
      )}
      <CopyButtons report={report} impactAsked={impactAsked} />
      {report.guards !== undefined && (
        <div class={`diff-guards ${report.guards.failed ? 'failed' : 'passed'}`} id="diff-guards">
          <p>
            <strong>{report.guards.failed ? '✗ ' : '✓ '}</strong>
            {guardsHeadline(report.guards)} Each finding is shown beside the flag it concerns.
          </p>
          {loose.length > 0 && <GuardList guards={loose} />}
        </div>
      )}
      {summaries.length > 0 && (
        <div class="table-wrap">
          <table class="list diff-summary">
            <caption class="visually-hidden">Changes per namespace</caption>
            <thead>
              <tr>
                <th scope="col">Namespace</th>
                <th scope="col">Flags added</th>
                <th scope="col">Flags removed</th>
                <th scope="col">Flags changed</th>
                <th scope="col">Segments added</th>
                <th scope="col">Segments removed</th>
                <th scope="col">Segments changed</th>
              </tr>
            </thead>
            <tbody>
              {summaries.map((s) => (
                <tr key={s.namespace}>
                  <th scope="row">
                    <a href={`#ns-${s.namespace}`}>
                      <code>{s.namespace}</code>
                    </a>
                    {s.status !== 'changed' ? ` (${s.status})` : ''}
                  </th>
                  <td>{s.flags.added}</td>
                  <td>{s.flags.removed}</td>
                  <td>{s.flags.changed}</td>
                  <td>{s.segments.added}</td>
                  <td>{s.segments.removed}</td>
                  <td>{s.segments.changed}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {counts.all > 0 && (
        <fieldset class="diff-filter">
          <legend>Show</legend>
          {DIFF_FILTERS.map((f) => (
            <label key={f.id}>
              <input type="radio" name="diff-filter" value={f.id} checked={filter === f.id} onChange={() => setFilter(f.id)} /> {f.label} ({counts[f.id].toLocaleString('en-US')})
            </label>
          ))}
        </fieldset>
      )}
      {all.map((n) => (
        <NamespaceSection key={n.ns.key} entries={n} report={report} filter={filter} open={small || all.length === 1 || n.entries.length <= OPEN_UP_TO} entriesOpen={small} />
      ))}
    </section>
  );
}

/** "Copy as Markdown" (the text `vexil diff --format markdown` writes) and "Copy link" (this page's address). */
function CopyButtons({ report, impactAsked }: { report: DiffReport; impactAsked: boolean }) {
  const [said, setSaid] = useState('');
  const [manual, setManual] = useState<string | undefined>(undefined);
  const copy = async (text: string, what: string) => {
    try {
      await navigator.clipboard.writeText(text);
      setManual(undefined);
      setSaid(`${what} copied.`);
    } catch {
      // No clipboard (permission refused, an insecure origin): the text to copy by hand.
      setManual(text);
      setSaid(`The browser refused the clipboard: select the ${what.toLowerCase()} below and copy it.`);
    }
  };
  return (
    <div class="diff-copy">
      <button type="button" onClick={() => void copy(diffMarkdown(report, impactAsked), 'Markdown')}>
        Copy as Markdown
      </button>
      <button type="button" onClick={() => void copy(location.href, 'Link')}>
        Copy link
      </button>
      <span role="status" class="muted small">
        {said}
      </span>
      {manual !== undefined && (
        <textarea class="diff-manual-copy" readOnly rows={6} aria-label="Text to copy" value={manual} onFocus={(e) => (e.currentTarget as HTMLTextAreaElement).select()} />
      )}
    </div>
  );
}

/** Entries drawn at once in an open namespace (100); more on request (a 3,000-flag namespace stays light). */
const PAGE = 100;

function NamespaceSection(props: { entries: NamespaceEntries; report: DiffReport; filter: DiffFilter; open: boolean; entriesOpen: boolean }) {
  const { entries, report, filter } = props;
  const ns = entries.ns;
  const [open, setOpen] = useState(props.open);
  const [limit, setLimit] = useState(PAGE);
  const shown = entries.entries.filter((e) => matchesFilter(e, filter));
  if (filter !== 'all' && shown.length === 0) return null;
  const counted = filter === 'all' ? `${plural(shown.length, 'entry', 'entries')}` : `${shown.length.toLocaleString('en-US')} of ${plural(entries.entries.length, 'entry', 'entries')} shown`;
  return (
    <details class="diff-namespace" id={`ns-${ns.key}`} open={open} onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>
        <h2 class="diff-ns-heading">
          Namespace <code>{ns.key}</code> <span class={statusClass(ns.status)}>{ns.status}</span> <span class="muted small">{counted}</span>
        </h2>
      </summary>
      {open && (
        <>
          {ns.changes.length > 0 && <ChangeList changes={ns.changes.map(changeText)} />}
          {entries.guards.length > 0 && <GuardList guards={entries.guards} />}
          {shown.slice(0, limit).map((e) => (
            <EntryPanel key={`${e.what}/${e.key}`} entry={e} report={report} open={props.entriesOpen} />
          ))}
          {shown.length > limit && (
            <button type="button" onClick={() => setLimit((n) => n + PAGE)}>
              Show {Math.min(PAGE, shown.length - limit).toLocaleString('en-US')} more of {(shown.length - limit).toLocaleString('en-US')}
            </button>
          )}
        </>
      )}
    </details>
  );
}

function EntryPanel({ entry: e, report, open: startOpen }: { entry: DiffEntry; report: DiffReport; open: boolean }) {
  const [open, setOpen] = useState(startOpen);
  const side = e.status === 'removed' ? report.base.reference : report.head.reference;
  const href = e.what === 'flag' ? paths.flag(e.namespace, e.key, side) : paths.segment(e.namespace, e.key, side);
  const failed = e.guards.some((g) => g.severity === 'error');
  return (
    <details class={`panel diff-entry${failed ? ' guard-failed' : ''}`} id={`${e.what}-${e.namespace}-${e.key}`} open={open} onToggle={(ev) => setOpen((ev.currentTarget as HTMLDetailsElement).open)}>
      <summary>
        <span class="diff-entry-head">
          <span class="muted">{e.what}</span> <code>{e.key}</code> <span class={statusClass(e.status)}>{e.status === 'via-segment' ? 'via a segment' : e.status}</span>
          {e.type !== undefined && <span class="muted">{flagTypeLabel(e.type)}</span>}
          {failed && <span class="badge bad">✗ guard</span>}
        </span>
        <span class="diff-entry-line muted small">{entryLine(e)}</span>
      </summary>
      {open && (
        <div class="diff-entry-body">
          <p class="small">
            <Link href={href}>
              Open the {e.what} on <code>{side}</code>
            </Link>
          </p>
          {e.guards.length > 0 && <GuardList guards={e.guards} />}
          {e.status === 'via-segment' && e.impact !== undefined && <p>{viaSegmentText(e.impact)}</p>}
          {e.changes.length > 0 && <ChangeList changes={e.changes.map(changeText)} />}
          {(e.status === 'added' || e.status === 'removed') &&
            (e.what === 'flag' ? <FlagSummary namespace={e.namespace} flag={e.key} reference={side} status={e.status} /> : <p>{entryStatusText(e.status, 'segment')}</p>)}
          <ImpactBlock impact={e.impact} />
        </div>
      )}
    </details>
  );
}

/** An added or removed flag as it is on its side: type, enabled, one line per rule or rollout (read when opened). */
function FlagSummary({ namespace, flag, reference, status }: { namespace: string; flag: string; reference: string; status: 'added' | 'removed' }) {
  const base = `/api/v1/namespaces/${encodeURIComponent(namespace)}/flags/${encodeURIComponent(flag)}`;
  const f = useApi<Flag>(withQuery(base, { reference }));
  const rules = useApi<{ rules: Rule[] }>(withQuery(`${base}/rules`, { reference }));
  const rollouts = useApi<{ rollouts: Rollout[] }>(withQuery(`${base}/rollouts`, { reference }));
  const intro = entryStatusText(status, 'flag');
  if (f.state === 'error') return <><p>{intro}</p><ErrorBox error={f.error} /></>;
  if (rules.state === 'error') return <><p>{intro}</p><ErrorBox error={rules.error} /></>;
  if (rollouts.state === 'error') return <><p>{intro}</p><ErrorBox error={rollouts.error} /></>;
  if (f.state !== 'ok' || rules.state !== 'ok' || rollouts.state !== 'ok') return <><p>{intro}</p><Loading what="the flag's summary" /></>;
  const lines = flagSummaryLines(f.data, rules.data.rules, rollouts.data.rollouts);
  return (
    <div class="diff-flag-summary">
      <p>{intro}</p>
      <ul class="changes">
        {lines.map((l, i) => (
          <li key={i}>{l}</li>
        ))}
      </ul>
    </div>
  );
}

function GuardList({ guards }: { guards: readonly GuardProblem[] }) {
  return (
    <ul class="diff-guard-list">
      {guards.map((g, i) => (
        <li key={i} class={`guard-${g.severity}`}>
          <strong>{g.severity === 'error' ? '✗ ' : g.severity === 'warning' ? '⚠ ' : 'ℹ '}</strong>
          {guardText(g)}
          {g.hint !== undefined && <span class="muted small"> Hint: {g.hint}</span>}
        </li>
      ))}
    </ul>
  );
}

function ChangeList({ changes }: { changes: string[] }) {
  return (
    <ul class="changes">
      {changes.map((c, i) => (
        <li key={i}>{c}</li>
      ))}
    </ul>
  );
}

function ImpactBlock({ impact }: { impact: FlagImpact | undefined }) {
  if (impact === undefined) return null;
  return (
    <div class="impact">
      <p class="impact-headline">
        <strong>Impact:</strong> {impactHeadline(impact)}
      </p>
      {impact.transitions.length > 0 && (
        <div class="table-wrap">
          <table class="list transitions">
            <caption class="visually-hidden">Outcome changes of {impact.flag}</caption>
            <thead>
              <tr>
                <th scope="col">From</th>
                <th scope="col">To</th>
                <th scope="col">Entities</th>
                <th scope="col">Share</th>
              </tr>
            </thead>
            <tbody>
              {impact.transitions.map((t) => {
                const share = transitionShare(t.count, impact.evaluated);
                return (
                  <tr key={`${t.from}→${t.to}`}>
                    <td>
                      <code>{t.from}</code>
                    </td>
                    <td>
                      <code>{t.to}</code>
                    </td>
                    <td class="num">{share.count}</td>
                    <td class="num">{share.percent}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function statusClass(status: string): string {
  return status === 'added' ? 'badge on' : status === 'removed' ? 'badge bad' : status === 'via-segment' ? 'badge' : 'badge off';
}

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
