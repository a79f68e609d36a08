/**
 * The evaluation console: pick a namespace and a flag, type an entity id and a context (key/value
 * rows or a JSON object), and see what `POST /evaluate/v1/explain` answers: the result, exactly the
 * body `/evaluate/v1/variant` or `/evaluate/v1/boolean` gives for the same request, and the trace
 * of how it was reached (the one `vexil evaluate` prints). The inputs live in the address (replaced,
 * not pushed) so a setup can be shared; an address naming a flag and an entity runs at once.
 * Nothing secret goes in the address: the token stays in the request headers (api.ts). The flag and
 * the entity id are required (said inline, nothing sent); the context editor offers the keys the
 * namespace's segments read, and a trace line whose key was not in the context offers to add it.
 * "All flags for this entity" opens the entity page (pages/entity.tsx) with the same inputs.
 */
import { Fragment } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, api, withQuery } from '../api.js';
import { ContextEditor, useContextInput } from '../components/context-editor.js';
import { EntityField } from '../components/entity-field.js';
import { PageTitle } from '../components/page-title.js';
import { ErrorBox } from '../components/status-line.js';
import { useApp } from '../context.js';
import { consoleQuery, parseConsoleQuery } from '../lib/context-input.js';
import { contextKeysOf } from '../lib/context-keys.js';
import { entityIdProblem } from '../lib/entity-id.js';
import { decisionText, resultFields, traceSteps, type TraceStep } from '../lib/explain-text.js';
import { flagTypeLabel, prettyJson, countOf } from '../lib/format.js';
import { paths } from '../lib/routes.js';
import { Link, useLocation } from '../router.js';
import type { ExplainResponse, Flag, Namespace, Page, Segment } from '../types.js';
import { useApi } from '../use-api.js';

type Run = { state: 'idle' } | { state: 'running' } | { state: 'ok'; data: ExplainResponse; body: object } | { state: 'error'; error: ApiError };

const value = (e: Event) => (e.currentTarget as HTMLInputElement).value;

export function ConsolePage() {
  const { reference } = useApp();
  const loc = useLocation();
  // The address is read once, when the page opens; after that the inputs write it.
  const initial = useMemo(() => parseConsoleQuery(loc.query), []);
  const [namespace, setNamespace] = useState(initial.namespace);
  const [flag, setFlag] = useState(initial.flag);
  const [entityId, setEntityId] = useState(initial.entityId);
  const [entityError, setEntityError] = useState<string | undefined>(undefined);
  const [flagError, setFlagError] = useState<string | undefined>(undefined);
  const [run, setRun] = useState<Run>({ state: 'idle' });
  const ran = useRef(false);

  const namespaces = useApi<Page & { namespaces: Namespace[] }>(withQuery('/api/v1/namespaces', { reference }));
  const nsPath = namespace === '' ? undefined : `/api/v1/namespaces/${encodeURIComponent(namespace)}`;
  const flags = useApi<Page & { flags: Flag[] }>(nsPath === undefined ? undefined : withQuery(`${nsPath}/flags`, { reference, limit: 0 }));
  const segments = useApi<Page & { segments: Segment[] }>(nsPath === undefined ? undefined : withQuery(`${nsPath}/segments`, { reference, limit: 0 }));
  const keys = useMemo(() => (segments.state === 'ok' ? contextKeysOf(segments.data.segments) : []), [segments]);
  const input = useContextInput(initial.context, initial.mode, keys);
  const { context, contextText, mode } = input;

  // No namespace in the address: `default` when there is one, else the first.
  useEffect(() => {
    if (namespace !== '' || namespaces.state !== 'ok') return;
    const list = namespaces.data.namespaces;
    const pick = list.find((n) => n.key === 'default') ?? list[0];
    if (pick) setNamespace(pick.key);
  }, [namespaces, namespace]);

  useEffect(() => {
    const q = consoleQuery({ namespace, flag, entityId, context: contextText, mode });
    history.replaceState(null, '', withQuery(paths.console(), { ref: reference, ...q }));
  }, [namespace, flag, entityId, contextText, mode, reference]);

  const evaluate = () => {
    // Each input that cannot be sent says why, inline; nothing is sent until all can.
    const noFlag = flag.trim() === '' ? 'Choose a flag to evaluate.' : undefined;
    const idProblem = entityIdProblem(entityId);
    setFlagError(noFlag);
    setEntityError(idProblem);
    input.setError(context.ok ? undefined : context.error);
    if (noFlag !== undefined || idProblem !== undefined || !context.ok) {
      const first = noFlag !== undefined ? 'console-flag' : idProblem !== undefined ? 'entity-id' : mode === 'json' ? 'context-json' : 'context-key-0';
      document.getElementById(first)?.focus();
      return;
    }
    const body = { namespaceKey: namespace, flagKey: flag.trim(), entityId, context: context.context, ...(reference !== undefined ? { reference } : {}) };
    ran.current = true;
    setRun({ state: 'running' });
    api<ExplainResponse>('/evaluate/v1/explain', { method: 'POST', body }).then(
      (data) => setRun({ state: 'ok', data, body }),
      (err: unknown) => setRun({ state: 'error', error: err instanceof ApiError ? err : new ApiError(0, undefined, String(err)) }),
    );
  };

  // A shared address naming a flag and an entity shows its answer at once; switching the
  // reference re-runs an evaluation already shown, against the new reference.
  useEffect(() => {
    if (ran.current || (initial.flag !== '' && initial.entityId !== '')) evaluate();
  }, [reference]);

  const flagList = flags.state === 'ok' ? flags.data.flags : [];
  const chosen = flagList.find((f) => f.key === flag.trim());
  const allFlags = paths.entity({ ref: reference, namespace, entity: entityId, context: context.ok && Object.keys(context.context).length > 0 ? JSON.stringify(context.context) : undefined });

  return (
    <>
      <PageTitle title="Evaluation console" />
      <p class="muted">
        Evaluates one flag through <code>POST /evaluate/v1/explain</code>: the same answer as <code>/evaluate/v1/variant</code> or{' '}
        <code>/evaluate/v1/boolean</code>, with the trace of how it was reached.
      </p>
      {namespaces.state === 'error' && <ErrorBox error={namespaces.error} />}
      <form
        class="console-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          evaluate();
        }}
      >
        <div class="filters">
          <div class="field">
            <label for="console-namespace">Namespace</label>
            <select id="console-namespace" value={namespace} onChange={(e) => setNamespace(value(e))}>
              {namespaces.state === 'ok' &&
                namespaces.data.namespaces.map((n) => (
                  <option key={n.key} value={n.key}>
                    {n.key}
                  </option>
                ))}
              {(namespaces.state !== 'ok' || !namespaces.data.namespaces.some((n) => n.key === namespace)) && namespace !== '' && (
                <option value={namespace}>{namespace}</option>
              )}
            </select>
          </div>
          <div class="field">
            <label for="console-flag">Flag</label>
            <input
              id="console-flag"
              list="console-flag-keys"
              value={flag}
              required
              placeholder="flag key"
              aria-describedby={flagError !== undefined ? 'console-flag-error console-flag-note' : 'console-flag-note'}
              aria-invalid={flagError !== undefined}
              onInput={(e) => {
                setFlag(value(e));
                setFlagError(undefined);
              }}
              autocomplete="off"
              spellcheck={false}
            />
            <datalist id="console-flag-keys">
              {flagList.map((f) => (
                <option key={f.key} value={f.key}>
                  {f.name !== '' && f.name !== f.key ? f.name : ''}
                </option>
              ))}
            </datalist>
            <span id="console-flag-note" class="muted small">
              {flags.state === 'loading' && namespace !== ''
                ? 'Loading flags…'
                : flags.state === 'error'
                  ? `Flags not available: ${flags.error.message}`
                  : chosen
                    ? `${flagTypeLabel(chosen.type)} flag, ${chosen.enabled ? 'enabled' : 'disabled'}`
                    : flag.trim() !== '' && flags.state === 'ok'
                      ? `No flag "${flag.trim()}" in ${namespace}`
                      : `${countOf(flagList.length, 'flag')} in ${namespace || 'this namespace'}`}
            </span>
            {flagError !== undefined && (
              <p id="console-flag-error" class="field-error" role="alert">
                {flagError}
              </p>
            )}
          </div>
          <EntityField
            value={entityId}
            error={entityError}
            onChange={(v) => {
              setEntityId(v);
              setEntityError(undefined);
            }}
          />
        </div>

        <ContextEditor input={input} />
        <p class="form-actions">
          <button type="submit" class="primary" disabled={run.state === 'running'}>
            Evaluate
          </button>
          <Link href={allFlags}>All flags for this entity</Link>
        </p>
      </form>

      <section aria-labelledby="console-result-heading">
        <h2 id="console-result-heading">Result</h2>
        <p class="muted" role="status" aria-live="polite" id="console-status">
          {run.state === 'idle' && 'Not evaluated yet.'}
          {run.state === 'running' && 'Evaluating…'}
          {run.state === 'ok' && resultSentence(run.data)}
          {run.state === 'error' && 'The evaluation failed.'}
        </p>
        {run.state === 'error' && <ErrorBox error={run.error} />}
        {run.state === 'ok' && <Outcome data={run.data} body={run.body} onAddKey={input.addKey} />}
      </section>
    </>
  );
}

function resultSentence(r: ExplainResponse): string {
  const what = r.flagType === 'BOOLEAN_FLAG_TYPE' ? `value ${r.result.enabled}` : r.result.variantKey === '' ? 'no variant' : `variant ${r.result.variantKey}`;
  return `${r.namespaceKey}/${r.flagKey} for entity "${r.explanation.entityId}": ${what}, ${r.result.reason}.`;
}

function Outcome({ data, body, onAddKey }: { data: ExplainResponse; body: object; onAddKey(key: string): void }) {
  const { reference } = useApp();
  return (
    <>
      <dl class="props" id="console-result">
        {resultFields(data).map((f) => (
          <Fragment key={f.label}>
            <dt>{f.label}</dt>
            <dd data-field={f.label.toLowerCase()}>
              {f.label === 'Attachment' && f.value !== '(none)' ? <pre>{prettyJson(f.value)}</pre> : <code>{f.value}</code>}
            </dd>
          </Fragment>
        ))}
        <dt>Flag</dt>
        <dd>
          <Link href={paths.flag(data.namespaceKey, data.flagKey, reference)}>
            <code>
              {data.namespaceKey}/{data.flagKey}
            </code>
          </Link>{' '}
          ({data.flagType === 'BOOLEAN_FLAG_TYPE' ? `boolean, enabled value ${data.explanation.enabled}` : `variant, ${data.explanation.enabled ? 'enabled' : 'disabled'}`})
        </dd>
      </dl>
      <h2>Why</h2>
      <p class="decision" id="console-decision">
        {decisionText(data)}
      </p>
      <h3>Trace</h3>
      {traceSteps(data).length === 0 ? (
        <p class="muted">Nothing was evaluated: the flag is disabled.</p>
      ) : (
        <ol class="trace">
          {traceSteps(data).map((s) => (
            <Step key={s.title} step={s} onAddKey={onAddKey} />
          ))}
        </ol>
      )}
      <details class="request">
        <summary>Request body</summary>
        <pre>{JSON.stringify(body, null, 2)}</pre>
      </details>
    </>
  );
}

const OUTCOME_CLASS: Record<TraceStep['outcome'], string> = {
  decided: 'badge on',
  'not matched': 'badge off',
  skipped: 'badge',
  'not evaluated': 'badge',
};

function Mark({ ok }: { ok: boolean }) {
  return (
    <>
      <span aria-hidden="true" class={ok ? 'mark ok' : 'mark failed'}>
        {ok ? '✓' : '✗'}
      </span>
      <span class="visually-hidden">{ok ? 'matched: ' : 'failed: '}</span>
    </>
  );
}

function Step({ step, onAddKey }: { step: TraceStep; onAddKey(key: string): void }) {
  return (
    <li class="trace-step">
      <p class="trace-head">
        <strong>{step.title}</strong>: {step.subject} <span class={OUTCOME_CLASS[step.outcome]}>{step.outcome}</span>
      </p>
      {step.segments.length > 0 && (
        <ul class="trace-segments">
          {step.segments.map((s) => (
            <li key={s.key}>
              <Mark ok={s.matched} />
              segment <code>{s.key}</code> ({s.match})
              {s.constraints.length > 0 && (
                <ul class="trace-constraints">
                  {s.constraints.map((c, i) => (
                    <li key={i}>
                      <Mark ok={c.matched} />
                      <code>{c.text}</code>
                      {c.missingKey !== undefined && (
                        <>
                          {' '}
                          <button type="button" class="add-key" onClick={() => onAddKey(c.missingKey!)}>
                            Add <code>{c.missingKey}</code> to the context
                          </button>
                        </>
                      )}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
      {step.threshold !== undefined && <p class="trace-detail">{step.threshold}</p>}
      {step.bucket !== undefined && (
        <p class="trace-detail">
          Bucket {step.bucket.value} of 0–999:{' '}
          {step.bucket.ranges.map((r, i) => (
            <span key={r.variantKey}>
              {i > 0 ? ', ' : ''}
              <code>{r.variantKey}</code> {r.range}
              {r.hit ? ' ✓ (the bucket is here)' : ''}
            </span>
          ))}
          {step.bucket.outside ? ' ✗ outside every distribution' : ''}
        </p>
      )}
    </li>
  );
}
