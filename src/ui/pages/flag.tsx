/**
 * One flag, in the order people ask: what it is (name, key, type, state, description); what it
 * serves and to whom in one or two sentences (lib/flag-summary.ts); on a reference other than the
 * default one, whether it differs from the default and a link to the diff; then how it decides —
 * a variant flag's rules in rank order (segments and distributions drawn as bars, each with its
 * text equivalent; drawn dashed and marked "not applied" while the flag is disabled), a boolean
 * flag's rollouts in order down to what everyone else gets; then its variants (attachments folded),
 * its lifecycle (owner, temporary or permanent, expires), the last commit that changed it (with a
 * link to that commit's diff) and other metadata, and the semantic checks that concern it. Reads:
 * the flag, its rules, its rollouts, its outline (which segments match everyone), its last change,
 * its checks; on another reference the same on the default one to compare.
 */
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, withQuery } from '../api.js';
import { FlagElsewhere } from '../components/flag-elsewhere.js';
import { NamespaceTabs } from '../components/namespace-tabs.js';
import { PageTitle } from '../components/page-title.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { useApp } from '../context.js';
import { distributionBar, percentText } from '../lib/distribution-bars.js';
import { bySeverity, locationText } from '../lib/check-text.js';
import { sameApartFromTimestamps } from '../lib/flag-compare.js';
import { booleanSummary, variantSummary, type SummaryRule } from '../lib/flag-summary.js';
import { countOf, flagTypeLabel, prettyJson } from '../lib/format.js';
import { lastChangeText } from '../lib/last-change-text.js';
import { lifecycleView } from '../lib/lifecycle-text.js';
import { paths } from '../lib/routes.js';
import { everyoneElseText, operatorWord, rolloutText, segmentKeysOf, segmentSetText, type SegmentSetLike } from '../lib/rule-text.js';
import { Link } from '../router.js';
import type { Check, ChecksPage, Flag, LastChange, NamespaceOutline, Rollout, Rule, Segment, Variant } from '../types.js';
import { useApi } from '../use-api.js';

/** Colour class of a variant, the same in every rule of the flag (styles.css: .c0 … .c5). */
function colourClass(variantIndex: number): string {
  return variantIndex < 0 ? 'c0' : `c${(variantIndex % 5) + 1}`;
}

/**
 * `segment a` / `segments a AND b` with each key linked to its segment page; reads exactly as
 * segmentSetText (which also words the empty sets).
 */
function SegmentSet({ set, namespace }: { set: SegmentSetLike; namespace: string }) {
  const { reference } = useApp();
  const keys = segmentKeysOf(set);
  if (keys.length === 0) return <>{segmentSetText(set)}</>;
  const op = operatorWord(set.segmentOperator);
  return (
    <>
      {keys.length === 1 ? 'segment ' : 'segments '}
      {keys.map((k, i) => (
        <Fragment key={`${i}-${k}`}>
          {i > 0 && <strong class="op">{` ${op} `}</strong>}
          <Link href={paths.segment(namespace, k, reference)}>{k}</Link>
        </Fragment>
      ))}
    </>
  );
}

function VariantItem({ variant, isDefault }: { variant: Variant; isDefault: boolean }) {
  const attachment = variant.attachment === '' || variant.attachment === 'null' ? '' : prettyJson(variant.attachment);
  return (
    <li class="panel variant">
      <h3>
        <code>{variant.key}</code>
        {isDefault && <span class="badge on">default</span>}
      </h3>
      <dl class="props">
        {variant.name !== '' && (
          <>
            <dt>Name</dt>
            <dd>{variant.name}</dd>
          </>
        )}
        {variant.description !== '' && (
          <>
            <dt>Description</dt>
            <dd>{variant.description}</dd>
          </>
        )}
        <dt>Attachment</dt>
        <dd>
          {attachment === '' ? (
            <span class="muted">none</span>
          ) : (
            <details class="attachment">
              <summary>{`Show (${countOf(attachment.split('\n').length, 'line', 'lines')} of JSON)`}</summary>
              <pre>{attachment}</pre>
            </details>
          )}
        </dd>
      </dl>
    </li>
  );
}

function DistributionView({ rule, variants }: { rule: Rule; variants: Variant[] }) {
  const bar = distributionBar(rule.distributions, variants);
  if (bar.parts.length === 0) {
    return <p class="muted">No distributions: an entity this rule matches gets a match without a variant.</p>;
  }
  return (
    <div class="distribution">
      {/* The bar is decoration; the list under it says the same in words. */}
      <div class="bar" aria-hidden="true">
        {bar.parts.map((p, i) => (
          <span key={i} class={colourClass(p.variantIndex)} style={{ width: `${p.width}%` }} />
        ))}
      </div>
      <ul class="bar-legend" aria-label={`Distribution of rule ${rule.rank}`}>
        {bar.parts.map((p, i) => (
          <li key={i}>
            <span class={`swatch ${colourClass(p.variantIndex)}`} aria-hidden="true" />
            {`${p.variantKey} ${percentText(p.rollout)}`}
          </li>
        ))}
        {bar.remainder > 0 && (
          <li>
            <span class="swatch none" aria-hidden="true" />
            {`no variant ${percentText(bar.remainder)}`}
          </li>
        )}
      </ul>
      {bar.total > 100 && <p class="muted">The rollouts add up to {percentText(bar.total)}: what lies beyond 100% is never reached.</p>}
    </div>
  );
}

function RulesView({ flag, rules, namespace }: { flag: Flag; rules: Rule[]; namespace: string }) {
  const fallback = flag.defaultVariant ? `the default variant ${flag.defaultVariant.key}` : 'no variant';
  return (
    <section aria-labelledby="rules-heading">
      <h2 id="rules-heading">Rules</h2>
      {!flag.enabled && <p class="note">The flag is disabled: its rules are not evaluated and every entity gets {fallback}.</p>}
      {rules.length === 0 ? (
        <p>No rules: every entity gets {fallback}.</p>
      ) : (
        <>
          <p class="muted">In rank order: the first rule whose segments match an entity decides; entities no rule matches get {fallback}.</p>
          {/* Disabled: drawn dashed and faded, and each rule says so in words. */}
          <ol class={flag.enabled ? 'rules' : 'rules inactive'}>
            {[...rules]
              .sort((a, b) => a.rank - b.rank)
              .map((r) => (
                <li key={r.id} class="panel">
                  <h3>
                    Rule {r.rank}
                    {!flag.enabled && <span class="badge off">not applied: flag disabled</span>}
                  </h3>
                  <p>
                    Entities in <SegmentSet set={r} namespace={namespace} />
                  </p>
                  <DistributionView rule={r} variants={flag.variants} />
                </li>
              ))}
          </ol>
        </>
      )}
    </section>
  );
}

function RolloutsView({ flag, rollouts, namespace }: { flag: Flag; rollouts: Rollout[]; namespace: string }) {
  return (
    <section aria-labelledby="rollouts-heading">
      <h2 id="rollouts-heading">Rollouts</h2>
      <p class="muted">In order: the first rollout that applies to an entity decides.</p>
      {/* Flipt evaluates a disabled boolean flag's rollouts all the same (flipt-semantics §2.4). */}
      {!flag.enabled && <p class="note">The flag is disabled: that only decides what everyone else gets (false); its rollouts still apply.</p>}
      <ol class="rollouts">
        {[...rollouts]
          .sort((a, b) => a.rank - b.rank)
          .map((r) => (
            <li key={r.id}>
              {r.segment !== undefined ? (
                <>
                  entities in <SegmentSet set={r.segment} namespace={namespace} />
                  {` → ${r.segment.value}`}
                </>
              ) : (
                rolloutText(r)
              )}
              {r.description !== '' && <span class="muted"> — {r.description}</span>}
            </li>
          ))}
        <li>{everyoneElseText(flag.enabled)}</li>
      </ol>
    </section>
  );
}

/** The lifecycle keys shown apart from the other metadata. */
const LIFECYCLE_KEYS = new Set(['owner', 'lifecycle', 'expires']);

function LifecycleView({ flag }: { flag: Flag }) {
  const view = lifecycleView(flag.metadata, Date.now());
  return (
    <dl class="props lifecycle" aria-label="Lifecycle">
      <dt>Owner</dt>
      <dd>{view.owner ?? <span class="muted">not set</span>}</dd>
      <dt>Lifecycle</dt>
      <dd>{view.lifecycle ?? <span class="muted">not set</span>}</dd>
      <dt>Expires</dt>
      <dd>
        {view.expires === undefined ? (
          <span class="muted">not set</span>
        ) : (
          <>
            {view.expires}
            {view.expired !== undefined && <span class="badge bad">{view.expired}</span>}
          </>
        )}
      </dd>
    </dl>
  );
}

/** "Last changed in <commit> by <author>, <age>: <message>", linked to that commit's diff; or why it is not known. */
function LastChangeView({ namespace, flagKey }: { namespace: string; flagKey: string }) {
  const { reference } = useApp();
  const res = useApi<{ lastChange: LastChange }>(
    withQuery(`/api/v1/namespaces/${encodeURIComponent(namespace)}/flags/${encodeURIComponent(flagKey)}/last-change`, { reference }),
  );
  if (res.state === 'loading') return <Loading what="the last change" />;
  if (res.state === 'error') return <p class="muted last-change">Last change not known: {res.error.message}</p>;
  const change = res.data.lastChange;
  const text = lastChangeText(change, Date.now());
  if (change.revision === null) return <p class="muted last-change">{text}</p>;
  return (
    <p class="last-change">
      <span title={`${change.revision} at ${change.committedAt}`}>{text}</span>
      {change.parent !== undefined && (
        <>
          {' '}
          (<Link href={paths.diff({ base: change.parent, head: change.revision, namespace })}>see the change</Link>)
        </>
      )}
    </p>
  );
}

function CheckItem({ check: c, namespace }: { check: Check; namespace: string }) {
  const { reference } = useApp();
  return (
    <li class="problem">
      <p>
        <span class={c.severity === 'error' ? 'badge bad' : c.severity === 'warning' ? 'badge off' : 'badge'}>{c.severity}</span>{' '}
        <code class="rule">{c.rule}</code>
      </p>
      <p class="problem-message">{c.message}</p>
      {c.segmentKey !== '' && (
        <p class="muted">
          About segment <Link href={paths.segment(namespace, c.segmentKey, reference)}>{c.segmentKey}</Link>, which this flag uses.
        </p>
      )}
      {c.hint !== '' && <p class="muted">Hint: {c.hint}</p>}
      <p class="muted">
        At <code class="location">{locationText(c)}</code>
      </p>
    </li>
  );
}

function ChecksView({ namespace, flagKey }: { namespace: string; flagKey: string }) {
  const { reference } = useApp();
  const res = useApi<ChecksPage>(withQuery(`/api/v1/namespaces/${encodeURIComponent(namespace)}/checks`, { reference, flag: flagKey }));
  return (
    <section aria-labelledby="checks-heading">
      <h2 id="checks-heading">Checks</h2>
      {res.state === 'loading' && <Loading what="the checks" />}
      {res.state === 'error' && <ErrorBox error={res.error} />}
      {res.state === 'ok' &&
        (res.data.checks.length === 0 ? (
          <p class="muted">No check concerns this flag.</p>
        ) : (
          <ul class="problems checks">
            {bySeverity(res.data.checks).map((c, i) => (
              <CheckItem key={`${i}-${c.rule}`} check={c} namespace={namespace} />
            ))}
          </ul>
        ))}
    </section>
  );
}

/** The rules in the shape the summary reads: segment sets and variant keys with percentages. */
function summaryRules(rules: readonly Rule[], variants: readonly Variant[]): SummaryRule[] {
  const keyOf = new Map(variants.map((v) => [v.id, v.key]));
  return rules.map((r) => ({
    rank: r.rank,
    segments: segmentKeysOf(r),
    operator: operatorWord(r.segmentOperator),
    distributions: r.distributions.map((d) => ({ variantKey: keyOf.get(d.variantId) ?? d.variantId, rollout: d.rollout })),
  }));
}

function Summary({ flag, rules, rollouts, outline }: { flag: Flag; rules: Rule[] | undefined; rollouts: Rollout[] | undefined; outline: NamespaceOutline | undefined }) {
  const everyone = new Set(outline?.everyoneSegments ?? []);
  let sentences: string[] | undefined;
  if (flag.type === 'BOOLEAN_FLAG_TYPE' && rollouts !== undefined) {
    sentences = booleanSummary(
      flag.enabled,
      rollouts.map((r) =>
        r.threshold !== undefined
          ? { rank: r.rank, value: r.threshold.value, percentage: r.threshold.percentage }
          : { rank: r.rank, value: r.segment?.value ?? false, segments: r.segment ? segmentKeysOf(r.segment) : [], operator: operatorWord(r.segment?.segmentOperator ?? '') },
      ),
      everyone,
    );
  } else if (flag.type !== 'BOOLEAN_FLAG_TYPE' && rules !== undefined) {
    sentences = variantSummary(flag, summaryRules(rules, flag.variants), everyone);
  }
  return (
    <section aria-labelledby="serves-heading" class="serves-summary">
      <h2 id="serves-heading">What it serves</h2>
      {sentences === undefined ? <Loading what="the summary" /> : sentences.map((t, i) => <p key={i}>{t}</p>)}
    </section>
  );
}

type Comparison = { state: 'same' | 'differs' | 'missing' } | { state: 'unknown'; why: string };

/**
 * On a reference other than the server's default: whether this flag (its definition, rules or
 * rollouts, and the segments they name) reads differently on the default reference.
 */
function DiffersFromDefault({ namespace, flag, rules, rollouts }: { namespace: string; flag: Flag; rules: Rule[]; rollouts: Rollout[] }) {
  const { reference, snapshots } = useApp();
  const def = snapshots?.defaultReference;
  const [cmp, setCmp] = useState<Comparison | undefined>(undefined);
  const other = reference !== undefined && def !== undefined && reference !== def;
  useEffect(() => {
    if (!other) return;
    const ctl = new AbortController();
    setCmp(undefined);
    const base = `/api/v1/namespaces/${encodeURIComponent(namespace)}/flags/${encodeURIComponent(flag.key)}`;
    const segPath = (k: string, ref: string | undefined) => withQuery(`/api/v1/namespaces/${encodeURIComponent(namespace)}/segments/${encodeURIComponent(k)}`, { reference: ref });
    const get = <T,>(path: string) => api<T>(path, { signal: ctl.signal });
    const keysOf = (rs: readonly Rule[], ros: readonly Rollout[]) => [...rs.flatMap((r) => segmentKeysOf(r)), ...ros.flatMap((r) => (r.segment ? segmentKeysOf(r.segment) : []))];
    (async (): Promise<Comparison> => {
      let theirs: Flag;
      try {
        theirs = await get<Flag>(base);
      } catch (err) {
        if ((err as { status?: number }).status === 404) return { state: 'missing' };
        throw err;
      }
      const [theirRules, theirRollouts] = await Promise.all([get<{ rules: Rule[] }>(`${base}/rules`), get<{ rollouts: Rollout[] }>(`${base}/rollouts`)]);
      if (
        !sameApartFromTimestamps(theirs, flag) ||
        !sameApartFromTimestamps(theirRules.rules, rules) ||
        !sameApartFromTimestamps(theirRollouts.rollouts, rollouts)
      ) {
        return { state: 'differs' };
      }
      // The same rules can select other entities when a segment they name changed.
      const keys = [...new Set(keysOf(rules, rollouts))].slice(0, 50);
      const pairs = await Promise.all(
        keys.map((k) => Promise.all([get<Segment>(segPath(k, reference)).catch(() => undefined), get<Segment>(segPath(k, undefined)).catch(() => undefined)])),
      );
      return pairs.every(([a, b]) => sameApartFromTimestamps(a, b)) ? { state: 'same' } : { state: 'differs' };
    })().then(
      (c) => setCmp(c),
      (err: unknown) => {
        if (!ctl.signal.aborted) setCmp({ state: 'unknown', why: err instanceof Error ? err.message : String(err) });
      },
    );
    return () => ctl.abort();
  }, [other, namespace, flag, rules, rollouts, reference]);
  if (!other || cmp === undefined) return null;
  const diffLink = (
    <Link href={paths.diff({ base: def, head: reference, namespace })}>
      see the diff of {def} and {reference}
    </Link>
  );
  if (cmp.state === 'same') return <p class="muted compare">The same on {def}, the default reference.</p>;
  if (cmp.state === 'unknown') return <p class="muted compare">Whether it differs from {def} could not be read: {cmp.why}</p>;
  return (
    <p class="note compare" role="note">
      <strong>{cmp.state === 'missing' ? `Not on ${def}` : `Differs from ${def}`}</strong>
      {cmp.state === 'missing' ? `: this flag exists on ${reference} only; ` : `, the default reference: `}
      {diffLink}.
    </p>
  );
}

export function FlagPage({ namespace, flagKey }: { namespace: string; flagKey: string }) {
  const { reference } = useApp();
  const nsPath = `/api/v1/namespaces/${encodeURIComponent(namespace)}`;
  const base = `${nsPath}/flags/${encodeURIComponent(flagKey)}`;
  const flagRes = useApi<Flag>(withQuery(base, { reference }));
  // Both lists are read at once: a variant flag has no rollouts and a boolean flag no rules.
  const rulesRes = useApi<{ rules: Rule[] }>(withQuery(`${base}/rules`, { reference }));
  const rolloutsRes = useApi<{ rollouts: Rollout[] }>(withQuery(`${base}/rollouts`, { reference }));
  const outlineRes = useApi<NamespaceOutline>(withQuery(`${nsPath}/outline`, { reference, flags: flagKey }));

  const flag = flagRes.state === 'ok' ? flagRes.data : undefined;
  const isBoolean = flag?.type === 'BOOLEAN_FLAG_TYPE';
  const decisions = isBoolean ? rolloutsRes : rulesRes;
  const metadata = Object.entries(flag?.metadata ?? {}).filter(([k]) => !LIFECYCLE_KEYS.has(k));
  const rules = rulesRes.state === 'ok' ? rulesRes.data.rules : undefined;
  const rollouts = rolloutsRes.state === 'ok' ? rolloutsRes.data.rollouts : undefined;

  return (
    <>
      <NamespaceTabs namespace={namespace} current="flags" />
      <PageTitle title={flag ? flag.name || flag.key : flagKey} />
      {flagRes.state === 'loading' && <Loading what="the flag" />}
      {flagRes.state === 'error' && <ErrorBox error={flagRes.error} />}
      {flagRes.state === 'error' && flagRes.error.status === 404 && <FlagElsewhere namespace={namespace} flagKey={flagKey} />}
      {flag && (
        <>
          <p class="flag-summary">
            <code>{flag.key}</code>
            <span>{flagTypeLabel(flag.type)} flag</span>
            <span class={flag.enabled ? 'badge on' : 'badge off'}>{flag.enabled ? 'enabled' : 'disabled'}</span>
          </p>
          {flag.description !== '' && <p>{flag.description}</p>}
          <Summary flag={flag} rules={rules} rollouts={rollouts} outline={outlineRes.state === 'ok' ? outlineRes.data : undefined} />
          {rules !== undefined && rollouts !== undefined && <DiffersFromDefault namespace={namespace} flag={flag} rules={rules} rollouts={rollouts} />}
          <p>
            <Link href={paths.console({ ref: reference, namespace, flag: flag.key })}>Try it in the console</Link>
          </p>

          {decisions.state === 'loading' && <Loading what={isBoolean ? 'the rollouts' : 'the rules'} />}
          {decisions.state === 'error' && <ErrorBox error={decisions.error} />}
          {rules !== undefined && !isBoolean && <RulesView flag={flag} rules={rules} namespace={namespace} />}
          {rollouts !== undefined && isBoolean && <RolloutsView flag={flag} rollouts={rollouts} namespace={namespace} />}

          {!isBoolean && (
            <section aria-labelledby="variants-heading">
              <h2 id="variants-heading">Variants</h2>
              <p>
                Default variant: {flag.defaultVariant ? <code>{flag.defaultVariant.key}</code> : <span class="muted">none</span>}
              </p>
              {flag.variants.length === 0 ? (
                <p class="muted">No variants.</p>
              ) : (
                <ul class="variants">
                  {flag.variants.map((v) => (
                    <VariantItem key={v.id} variant={v} isDefault={v.id === flag.defaultVariant?.id} />
                  ))}
                </ul>
              )}
            </section>
          )}

          <section aria-labelledby="metadata-heading">
            <h2 id="metadata-heading">Metadata</h2>
            <LifecycleView flag={flag} />
            {metadata.length > 0 && (
              <dl class="props">
                {metadata.map(([k, v]) => (
                  <Fragment key={k}>
                    <dt>{k}</dt>
                    <dd>{String(v)}</dd>
                  </Fragment>
                ))}
              </dl>
            )}
            <LastChangeView namespace={namespace} flagKey={flag.key} />
          </section>
          <ChecksView namespace={namespace} flagKey={flag.key} />
        </>
      )}
    </>
  );
}
