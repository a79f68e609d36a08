/**
 * The diff page: what head changes compared with base (any two references the server can build:
 * branches, tags, commit ids), through `GET /api/v1/diff`: a summary per namespace, each flag's and
 * segment's changes in words (the words of `vexil diff`), and the impact preview (how many of N
 * synthetic entities get another outcome, from what to what). The address holds the comparison
 * shown, so it can be shared, and opening it runs the comparison.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { withQuery } from '../api.js';
import { PageTitle } from '../components/page-title.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { TruthBanner } from '../components/truth-banner.js';
import { useApp } from '../context.js';
import {
  type DiffReport,
  type DiffSetup,
  type FlagImpact,
  type NamespaceDiff,
  changeText,
  diffApiQuery,
  diffQuery,
  diffSetupError,
  entryStatusText,
  impactByFlag,
  impactHeadline,
  namespaceSummaries,
  overallText,
  parseDiffQuery,
  sampleText,
  transitionShare,
} from '../lib/diff-text.js';
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
  return <>{banners}<Report report={res.data} /></>;
}

function Report({ report }: { report: DiffReport }) {
  const impacts = useMemo(() => impactByFlag(report), [report]);
  const summaries = namespaceSummaries(report);
  const sample = report.impact?.sample;
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
      {report.namespaces.map((ns) => (
        <NamespaceSection key={ns.key} ns={ns} report={report} impacts={impacts} />
      ))}
    </section>
  );
}

function NamespaceSection({ ns, report, impacts }: { ns: NamespaceDiff; report: DiffReport; impacts: Map<string, FlagImpact> }) {
  const listed = new Set(ns.flags.map((f) => f.key));
  // Flags whose definition is unchanged but which read a changed segment.
  const alsoAffected = (report.impact?.flags ?? []).filter((i) => i.namespace === ns.key && !listed.has(i.flag) && i.changed > 0);
  const refFor = (status: string) => (status === 'removed' ? report.base.reference : report.head.reference);
  return (
    <section class="diff-namespace" id={`ns-${ns.key}`} aria-labelledby={`ns-${ns.key}-h`}>
      <h2 id={`ns-${ns.key}-h`}>
        Namespace <code>{ns.key}</code> <span class={statusClass(ns.status)}>{ns.status}</span>
      </h2>
      {ns.changes.length > 0 && (
        <ul class="changes">
          {ns.changes.map((c, i) => (
            <li key={i}>{changeText(c)}</li>
          ))}
        </ul>
      )}
      {ns.flags.length > 0 && <h3>Flags</h3>}
      {ns.flags.map((f) => (
        <article key={f.key} class="panel diff-entry" aria-labelledby={`flag-${ns.key}-${f.key}`}>
          <h4 id={`flag-${ns.key}-${f.key}`}>
            <Link href={paths.flag(ns.key, f.key, refFor(f.status))}>
              <code>{f.key}</code>
            </Link>{' '}
            <span class={statusClass(f.status)}>{f.status}</span> <span class="muted">{flagTypeLabel(f.type)}</span>
          </h4>
          {f.changes.length === 0 ? <p>{entryStatusText(f.status, 'flag')}</p> : <ChangeList changes={f.changes.map(changeText)} />}
          <ImpactBlock impact={impacts.get(`${ns.key}/${f.key}`)} />
        </article>
      ))}
      {ns.segments.length > 0 && <h3>Segments</h3>}
      {ns.segments.map((s) => (
        <article key={s.key} class="panel diff-entry" aria-labelledby={`segment-${ns.key}-${s.key}`}>
          <h4 id={`segment-${ns.key}-${s.key}`}>
            <Link href={paths.segment(ns.key, s.key, refFor(s.status))}>
              <code>{s.key}</code>
            </Link>{' '}
            <span class={statusClass(s.status)}>{s.status}</span>
          </h4>
          {s.changes.length === 0 ? <p>{entryStatusText(s.status, 'segment')}</p> : <ChangeList changes={s.changes.map(changeText)} />}
        </article>
      ))}
      {alsoAffected.length > 0 && (
        <>
          <h3>Flags affected through their segments</h3>
          {alsoAffected.map((i) => (
            <article key={i.flag} class="panel diff-entry" aria-labelledby={`affected-${ns.key}-${i.flag}`}>
              <h4 id={`affected-${ns.key}-${i.flag}`}>
                <Link href={paths.flag(ns.key, i.flag, report.head.reference)}>
                  <code>{i.flag}</code>
                </Link>
              </h4>
              <ImpactBlock impact={i} />
            </article>
          ))}
        </>
      )}
    </section>
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
  return status === 'added' ? 'badge on' : status === 'removed' ? 'badge bad' : 'badge off';
}
