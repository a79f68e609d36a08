/**
 * "What does this entity get" (`/ui/entity?namespace=&entity=&context=`): every flag of a namespace
 * evaluated for one entity id and context in one `POST /evaluate/v1/batch` request, one row per flag
 * with its type, what it serves, the reason and the segments that matched, a link to the flag page
 * and one to the console's trace of that flag for the same entity and context. The context editor
 * offers the keys the namespace's segments read; the entity id is required (said inline, nothing
 * sent) and can be generated. "Copy as curl" gives the same batch request as a command, with a
 * placeholder where the token goes when the server requires one (never the token or the cookie).
 * The inputs live in the address (replaced, not pushed), so a setup can be shared; an address
 * naming an entity evaluates on opening.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, api, withQuery } from '../api.js';
import { ContextEditor, useContextInput } from '../components/context-editor.js';
import { EntityField } from '../components/entity-field.js';
import { PageTitle } from '../components/page-title.js';
import { ErrorBox } from '../components/status-line.js';
import { useApp } from '../context.js';
import { type BatchAnswer, type BatchBody, type EntityRow, batchBody, batchBodyProblem, entityRows } from '../lib/batch-evaluation.js';
import { consoleQuery, parseConsoleQuery } from '../lib/context-input.js';
import { contextKeysOf } from '../lib/context-keys.js';
import { curlCommand } from '../lib/curl-command.js';
import { entityIdProblem } from '../lib/entity-id.js';
import { flagTypeLabel, countOf } from '../lib/format.js';
import { paths } from '../lib/routes.js';
import { Link, useLocation } from '../router.js';
import type { Flag, Namespace, Page, Segment } from '../types.js';
import { useApi } from '../use-api.js';

/** What one run evaluated (the inputs at the time) and what the batch answered. */
interface Evaluated {
  namespace: string;
  entityId: string;
  /** The context sent, as the console's address writes it (`` when empty). */
  context: string;
  rows: EntityRow[];
  names: Map<string, string>;
  answer: BatchAnswer;
}

type Run = { state: 'idle' } | { state: 'running' } | { state: 'ok'; result: Evaluated } | { state: 'error'; error: ApiError };

const BATCH_PATH = '/evaluate/v1/batch';

export function EntityPage() {
  const { reference } = useApp();
  const loc = useLocation();
  const initial = useMemo(() => parseConsoleQuery(loc.query), []);
  const [namespace, setNamespace] = useState(initial.namespace);
  const [entityId, setEntityId] = useState(initial.entityId);
  const [entityError, setEntityError] = useState<string | undefined>(undefined);
  const [run, setRun] = useState<Run>({ state: 'idle' });
  const [copied, setCopied] = useState<string | undefined>(undefined);
  const [showCurl, setShowCurl] = useState(false);
  // Evaluate once the flag list is there: on opening an address naming an entity, and again
  // (against the new reference) when the reference is switched after a run.
  const [pending, setPending] = useState(initial.entityId !== '');

  const namespaces = useApi<Page & { namespaces: Namespace[] }>(withQuery('/api/v1/namespaces', { reference }));
  const nsPath = namespace === '' ? undefined : `/api/v1/namespaces/${encodeURIComponent(namespace)}`;
  const flags = useApi<Page & { flags: Flag[] }>(nsPath === undefined ? undefined : withQuery(`${nsPath}/flags`, { reference, limit: 0 }));
  const segments = useApi<Page & { segments: Segment[] }>(nsPath === undefined ? undefined : withQuery(`${nsPath}/segments`, { reference, limit: 0 }));
  const info = useApi<{ authentication: { required: boolean } }>('/meta/info');
  const keys = useMemo(() => (segments.state === 'ok' ? contextKeysOf(segments.data.segments) : []), [segments]);
  const input = useContextInput(initial.context, initial.mode, keys);
  const { context, contextText, mode } = input;

  useEffect(() => {
    if (namespace !== '' || namespaces.state !== 'ok') return;
    const list = namespaces.data.namespaces;
    const pick = list.find((n) => n.key === 'default') ?? list[0];
    if (pick) setNamespace(pick.key);
  }, [namespaces, namespace]);

  useEffect(() => {
    const q = consoleQuery({ namespace, flag: '', entityId, context: contextText, mode });
    history.replaceState(null, '', withQuery(paths.entity(), { ref: reference, ...q }));
  }, [namespace, entityId, contextText, mode, reference]);

  /** The batch for the inputs as they are, or undefined after saying (inline) what is missing. */
  const request = (): { body: BatchBody; flagKeys: string[]; names: Map<string, string> } | undefined => {
    const idProblem = entityIdProblem(entityId);
    setEntityError(idProblem);
    input.setError(context.ok ? undefined : context.error);
    if (idProblem !== undefined || !context.ok) {
      document.getElementById(idProblem !== undefined ? 'entity-id' : mode === 'json' ? 'context-json' : 'context-key-0')?.focus();
      return undefined;
    }
    if (flags.state !== 'ok') return undefined;
    const flagKeys = flags.data.flags.map((f) => f.key);
    const names = new Map(flags.data.flags.map((f) => [f.key, f.name] as const));
    const body = batchBody(namespace, flagKeys, entityId, context.context, reference);
    const tooLarge = batchBodyProblem(JSON.stringify(body), flagKeys.length);
    if (tooLarge !== undefined) {
      input.setError(tooLarge);
      return undefined;
    }
    return { body, flagKeys, names };
  };

  const evaluate = () => {
    if (flags.state === 'loading') {
      setPending(true);
      return;
    }
    const r = request();
    if (r === undefined || !context.ok) return;
    const sent = { namespace, entityId, context: Object.keys(context.context).length > 0 ? JSON.stringify(context.context) : '' };
    setRun({ state: 'running' });
    api<BatchAnswer>(BATCH_PATH, { method: 'POST', body: r.body }).then(
      (answer) => setRun({ state: 'ok', result: { ...sent, rows: entityRows(r.flagKeys, answer), names: r.names, answer } }),
      (err: unknown) => setRun({ state: 'error', error: err instanceof ApiError ? err : new ApiError(0, undefined, String(err)) }),
    );
  };

  useEffect(() => {
    if (!pending || flags.state === 'loading') return;
    setPending(false);
    evaluate();
  }, [pending, flags]);

  useEffect(() => {
    if (run.state === 'ok' || run.state === 'error') setPending(true);
  }, [reference]);

  const authenticated = info.state === 'ok' && info.data.authentication.required;
  const copyCurl = () => {
    const r = request();
    if (r === undefined) return;
    const text = curlCommand({ url: `${location.origin}${BATCH_PATH}`, body: r.body, authenticated });
    setShowCurl(true);
    setCopied(undefined);
    // The Clipboard API exists only in secure contexts (HTTPS or localhost); the command is shown either way.
    const clipboard = window.isSecureContext ? navigator.clipboard : undefined;
    if (clipboard === undefined) {
      setCopied('This page cannot copy here (not HTTPS): select the command below and copy it.');
      return;
    }
    clipboard.writeText(text).then(
      () => setCopied('Copied: the curl command for this batch request is on the clipboard.'),
      () => setCopied('The browser did not allow copying: select the command below and copy it.'),
    );
  };
  // Written only while shown: for thousands of flags the command is long, and the inputs change on every key.
  const shownCurl =
    showCurl && flags.state === 'ok' && context.ok && entityIdProblem(entityId) === undefined
      ? curlCommand({ url: `${location.origin}${BATCH_PATH}`, body: batchBody(namespace, flags.data.flags.map((f) => f.key), entityId, context.context, reference), authenticated })
      : undefined;

  return (
    <>
      <PageTitle title="What does this entity get" />
      <p class="muted">
        Every flag of a namespace for one entity and context, evaluated in one <code>POST /evaluate/v1/batch</code> request: what each flag serves
        and why. Each row links to the flag and to the console's trace of that flag for the same entity.
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
            <label for="entity-namespace">Namespace</label>
            <select id="entity-namespace" value={namespace} onChange={(e) => setNamespace((e.currentTarget as HTMLSelectElement).value)}>
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
            <span class="muted small" id="entity-flag-count">
              {flags.state === 'ok' ? countOf(flags.data.flags.length, 'flag') : flags.state === 'loading' ? 'Loading flags…' : ''}
            </span>
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
            Evaluate all flags
          </button>
          <button type="button" onClick={copyCurl}>
            Copy as curl
          </button>
        </p>
        <p class="muted small" role="status" id="entity-copied">
          {copied ?? ''}
        </p>
        <details class="request" open={showCurl} onToggle={(e) => setShowCurl((e.currentTarget as HTMLDetailsElement).open)}>
          <summary>The curl command</summary>
          {authenticated && <p class="small">Replace &lt;token&gt; with a client token: the page never copies yours.</p>}
          {shownCurl !== undefined ? (
            <pre id="entity-curl">{shownCurl}</pre>
          ) : (
            <p class="muted small">{flags.state === 'ok' ? 'Type an entity id (and a valid context) to see the command.' : 'Loading the flags…'}</p>
          )}
        </details>
      </form>
      {flags.state === 'error' && <ErrorBox error={flags.error} />}

      <section aria-labelledby="entity-result-heading">
        <h2 id="entity-result-heading">What each flag serves</h2>
        <p class="muted" role="status" aria-live="polite" id="entity-status">
          {run.state === 'idle' && 'Not evaluated yet.'}
          {run.state === 'running' && 'Evaluating…'}
          {run.state === 'ok' && resultSentence(run.result)}
          {run.state === 'error' && 'The evaluation failed.'}
        </p>
        {run.state === 'error' && <ErrorBox error={run.error} />}
        {run.state === 'ok' && <Results result={run.result} />}
      </section>
    </>
  );
}

function resultSentence(r: Evaluated): string {
  const n = r.rows.length;
  const count = (reason: string) => r.rows.filter((x) => x.reason === reason).length;
  const parts = [`${count('match')} by a rule or rollout`, `${count('default')} by default`, `${count('flag disabled')} disabled`];
  const unknown = count('unknown');
  if (unknown > 0) parts.push(`${unknown} unknown (a variant flag with no rule matching and no default variant)`);
  const errors = r.rows.filter((x) => x.type === 'error').length;
  if (errors > 0) parts.push(`${errors} not evaluated`);
  return `${n} flag${n === 1 ? '' : 's'} of ${r.namespace} for entity "${r.entityId}": ${parts.join(', ')}.`;
}

function Results({ result }: { result: Evaluated }) {
  const { reference } = useApp();
  if (result.rows.length === 0) return <p>The namespace {result.namespace} has no flags.</p>;
  return (
    <div class="table-wrap">
      <table class="list entity-results" id="entity-results">
        <thead>
          <tr>
            <th scope="col">Flag</th>
            <th scope="col">Type</th>
            <th scope="col">Serves</th>
            <th scope="col">Reason</th>
            <th scope="col">Segments</th>
            <th scope="col">Trace</th>
          </tr>
        </thead>
        <tbody>
          {result.rows.map((r) => {
            const name = result.names.get(r.flagKey) ?? '';
            return (
              <tr key={r.flagKey} data-flag={r.flagKey}>
                <th scope="row" data-label="Flag">
                  <Link href={paths.flag(result.namespace, r.flagKey, reference)}>
                    <code>{r.flagKey}</code>
                  </Link>
                  {name !== '' && name !== r.flagKey && <span class="segment-name muted small">{name}</span>}
                </th>
                <td data-label="Type">{r.type === 'error' ? 'error' : flagTypeLabel(r.type === 'boolean' ? 'BOOLEAN_FLAG_TYPE' : 'VARIANT_FLAG_TYPE')}</td>
                <td data-label="Serves">
                  <code>{r.served}</code>
                </td>
                <td data-label="Reason">{r.reason}</td>
                <td data-label="Segments">{r.segments === '' ? <span class="muted">none</span> : r.segments}</td>
                <td data-label="Trace">
                  <Link
                    href={paths.console({ ref: reference, namespace: result.namespace, flag: r.flagKey, entity: result.entityId, context: result.context })}
                    aria-label={`Trace of ${r.flagKey} in the console`}
                  >
                    Trace
                  </Link>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
