/**
 * The evaluation context as a person types it, shared by the console and the entity page: key/value
 * rows or a JSON object (lib/context-input.ts turns either into the API's context), with ready rows
 * for the keys the namespace's segments read (lib/context-keys.ts), each saying which segments read
 * it. `useContextInput` holds the state; `addKey` puts a key the trace found missing into a row and
 * moves the focus to its value. One editor per page (its element ids are fixed).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import {
  type ContextParse,
  type ContextRow,
  contextFromJson,
  contextFromRows,
  jsonFromContext,
  rowsFromContext,
  withContextKey,
  withSuggestedRows,
} from '../lib/context-input.js';
import { type ContextKey, readByText } from '../lib/context-keys.js';

export interface ContextInput {
  mode: 'rows' | 'json';
  rows: ContextRow[];
  jsonText: string;
  /** The inline message under the editor (a context that cannot be sent). */
  error: string | undefined;
  /** What the input gives: the context, or why there is none. */
  context: ContextParse;
  /** The context as the address keeps it: the JSON as typed, or the rows' context as JSON. */
  contextText: string;
  keys: readonly ContextKey[];
  setError(error: string | undefined): void;
  setRows(update: (rows: ContextRow[]) => ContextRow[]): void;
  setJsonText(text: string): void;
  switchMode(next: 'rows' | 'json'): boolean;
  /** Adds a row for `key` (switching to rows) and focuses its value. */
  addKey(key: string): void;
  /** Which value field to focus next (bumped by addKey). */
  focus: { index: number; n: number } | undefined;
}

/** `initialText`: the context from the address (JSON text, '' for none). `keys`: offered as ready rows. */
export function useContextInput(initialText: string, initialMode: 'rows' | 'json', keys: readonly ContextKey[]): ContextInput {
  const [mode, setMode] = useState(initialMode);
  const [rows, setRows] = useState<ContextRow[]>(() => {
    const parsed = contextFromJson(initialText);
    return parsed.ok ? rowsFromContext(parsed.context) : [{ key: '', value: '' }];
  });
  const [jsonText, setJsonText] = useState(() => (initialText === '' ? '{}' : initialText));
  const [error, setError] = useState<string | undefined>(undefined);
  const [focus, setFocus] = useState<{ index: number; n: number } | undefined>(undefined);
  const keyList = useMemo(() => keys.map((k) => k.key), [keys]);

  useEffect(() => setRows((old) => withSuggestedRows(old, keyList)), [keyList.join('\n')]);

  const context: ContextParse = mode === 'rows' ? contextFromRows(rows) : contextFromJson(jsonText);
  const contextText = mode === 'json' ? jsonText : context.ok ? JSON.stringify(context.context) : '';

  const switchMode = (next: 'rows' | 'json'): boolean => {
    if (next === mode) return true;
    if (!context.ok) {
      setError(`${context.error} Fix it before switching.`);
      return false;
    }
    setError(undefined);
    if (next === 'json') setJsonText(jsonFromContext(context.context));
    else setRows(withSuggestedRows(rowsFromContext(context.context), keyList));
    setMode(next);
    return true;
  };

  const addKey = (key: string) => {
    let base = rows;
    if (mode === 'json') {
      if (!context.ok) {
        setError(`${context.error} Fix it before adding "${key}".`);
        return;
      }
      base = withSuggestedRows(rowsFromContext(context.context), keyList);
      setMode('rows');
    }
    const next = withContextKey(base, key);
    setError(undefined);
    setRows(next.rows);
    setFocus((f) => ({ index: next.index, n: (f?.n ?? 0) + 1 }));
  };

  return {
    mode,
    rows,
    jsonText,
    error,
    context,
    contextText,
    keys,
    setError,
    setRows: (update) => setRows(update),
    setJsonText: (text) => {
      setJsonText(text);
      setError(undefined);
    },
    switchMode,
    addKey,
    focus,
  };
}

const value = (e: Event) => (e.currentTarget as HTMLInputElement).value;

export function ContextEditor({ input }: { input: ContextInput }) {
  const { mode, rows, error, keys } = input;
  useEffect(() => {
    if (input.focus === undefined) return;
    document.getElementById(`context-value-${input.focus.index}`)?.focus();
  }, [input.focus?.n]);
  const setRow = (i: number, r: Partial<ContextRow>) => input.setRows((old) => old.map((x, k) => (k === i ? { ...x, ...r } : x)));
  const byKey = new Map(keys.map((k) => [k.key, k]));

  return (
    <fieldset class="console-context">
      <legend>Context</legend>
      <div class="mode-switch" role="radiogroup" aria-label="Context input">
        <label>
          <input type="radio" name="context-mode" value="rows" checked={mode === 'rows'} onChange={() => input.switchMode('rows')} /> Key/value rows
        </label>
        <label>
          <input type="radio" name="context-mode" value="json" checked={mode === 'json'} onChange={() => input.switchMode('json')} /> JSON object
        </label>
      </div>
      {mode === 'rows' ? (
        <>
          {keys.length > 0 && <p class="muted small">The namespace's segments read {keys.length === 1 ? 'this key' : `these ${keys.length} keys`}; a row left without a value is not sent.</p>}
          <ul class="context-rows">
            {rows.map((r, i) => {
              const read = byKey.get(r.key.trim());
              return (
                <li key={i}>
                  <label class="visually-hidden" for={`context-key-${i}`}>
                    Context key {i + 1}
                  </label>
                  <input
                    id={`context-key-${i}`}
                    placeholder="key"
                    value={r.key}
                    onInput={(e) => setRow(i, { key: value(e), suggested: false })}
                    autocomplete="off"
                    spellcheck={false}
                  />
                  <label class="visually-hidden" for={`context-value-${i}`}>
                    Context value {i + 1}
                  </label>
                  <input
                    id={`context-value-${i}`}
                    placeholder="value"
                    value={r.value}
                    aria-describedby={read ? `context-note-${i}` : undefined}
                    onInput={(e) => setRow(i, { value: value(e) })}
                    autocomplete="off"
                    spellcheck={false}
                  />
                  <button
                    type="button"
                    aria-label={`Remove context row ${i + 1}`}
                    onClick={() => input.setRows((old) => (old.length === 1 ? [{ key: '', value: '' }] : old.filter((_, k) => k !== i)))}
                  >
                    Remove
                  </button>
                  {read && (
                    <span class="row-note muted small" id={`context-note-${i}`}>
                      {readByText(read)}
                    </span>
                  )}
                </li>
              );
            })}
          </ul>
          <button type="button" onClick={() => input.setRows((old) => [...old, { key: '', value: '' }])}>
            Add context row
          </button>
        </>
      ) : (
        <div class="field">
          <label for="context-json">Context (JSON object of strings)</label>
          <textarea
            id="context-json"
            rows={6}
            value={input.jsonText}
            spellcheck={false}
            aria-invalid={error !== undefined}
            aria-describedby={error !== undefined ? 'context-error' : undefined}
            onInput={(e) => input.setJsonText((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </div>
      )}
      {error !== undefined && (
        <p id="context-error" class="field-error" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}
