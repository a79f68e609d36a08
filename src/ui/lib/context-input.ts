/**
 * The context input of the evaluation console and the entity page: key/value rows or a JSON
 * object, turned into the `Record<string, string>` the evaluation API takes, with an error a person
 * can act on when the input cannot be one; the ready rows offered for the keys the namespace's
 * segments read. Also their address (what is shared: namespace, flag, entity id, context; never a
 * token). Pure, no DOM.
 */

export interface ContextRow {
  key: string;
  value: string;
  /**
   * A ready row offered for a key the segments read (or the trace found missing): left out of the
   * context while its value is empty, so offering it changes nothing until a value is typed.
   */
  suggested?: boolean;
}

export type ContextParse = { ok: true; context: Record<string, string> } | { ok: false; error: string };

/**
 * Rows → context. Fully empty rows and ready rows without a value are ignored; a value without a
 * key and a repeated key are errors.
 */
export function contextFromRows(rows: readonly ContextRow[]): ContextParse {
  // Entries, then fromEntries: a key such as `__proto__` stays an own key (an assignment would not).
  const entries: [string, string][] = [];
  const seen = new Set<string>();
  for (let i = 0; i < rows.length; i++) {
    const { key, value, suggested } = rows[i]!;
    const k = key.trim();
    if ((k === '' || suggested === true) && value === '') continue;
    if (k === '') return { ok: false, error: `Row ${i + 1}: the value "${clip(value)}" has no key.` };
    if (seen.has(k)) return { ok: false, error: `Row ${i + 1}: the key "${clip(k)}" is given twice.` };
    seen.add(k);
    entries.push([k, value]);
  }
  return { ok: true, context: Object.fromEntries(entries) };
}

/**
 * JSON text → context: an object whose values are strings (empty text is the empty context).
 * Numbers and booleans are refused rather than converted, so what is sent is what was typed.
 */
export function contextFromJson(text: string): ContextParse {
  if (text.trim() === '') return { ok: true, context: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `The context is not valid JSON: ${err instanceof Error ? err.message : String(err)}.` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: `The context must be a JSON object like {"plan": "pro"}, not ${describe(value)}.` };
  }
  const entries = Object.entries(value as Record<string, unknown>);
  for (const [k, v] of entries) {
    if (typeof v !== 'string') {
      const hint = typeof v === 'number' || typeof v === 'boolean' ? ` (write "${String(v)}")` : '';
      return { ok: false, error: `The value of "${clip(k)}" must be a string${hint}, not ${describe(v)}.` };
    }
  }
  return { ok: true, context: Object.fromEntries(entries) as Record<string, string> };
}

/** The rows showing a context (one empty row to type into when it is empty). */
export function rowsFromContext(context: Readonly<Record<string, string>>): ContextRow[] {
  const rows = Object.entries(context).map(([key, value]) => ({ key, value }));
  return rows.length > 0 ? rows : [{ key: '', value: '' }];
}

/**
 * The rows with a ready row for each of `keys` that no row holds yet, after the rows typed: ready
 * rows still empty for keys no longer offered are dropped, and so are blank rows once ready rows
 * stand in for them (one blank row is kept when nothing else is left).
 */
export function withSuggestedRows(rows: readonly ContextRow[], keys: readonly string[]): ContextRow[] {
  const offered = new Set(keys);
  const kept = rows.filter((r) => {
    if (r.suggested === true && r.value === '') return offered.has(r.key);
    return !(r.key.trim() === '' && r.value === '' && keys.length > 0);
  });
  const held = new Set(kept.map((r) => r.key.trim()));
  const out = [...kept, ...keys.filter((k) => !held.has(k)).map((key) => ({ key, value: '', suggested: true }))];
  return out.length > 0 ? out : [{ key: '', value: '' }];
}

/**
 * The rows with a row for `key` (a ready one, empty, when no row holds it yet) and the index of
 * that row, where the person types its value.
 */
export function withContextKey(rows: readonly ContextRow[], key: string): { rows: ContextRow[]; index: number } {
  const at = rows.findIndex((r) => r.key.trim() === key);
  if (at >= 0) return { rows: [...rows], index: at };
  const blank = rows.findIndex((r) => r.key.trim() === '' && r.value === '');
  if (blank >= 0) return { rows: rows.map((r, i) => (i === blank ? { key, value: '', suggested: true } : r)), index: blank };
  return { rows: [...rows, { key, value: '', suggested: true }], index: rows.length };
}

/** The JSON text showing a context (`{}` when empty). */
export function jsonFromContext(context: Readonly<Record<string, string>>): string {
  return Object.keys(context).length === 0 ? '{}' : JSON.stringify(context, null, 2);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `the ${typeof v} ${clip(JSON.stringify(v))}`;
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

/** What the console's address holds. */
export interface ConsoleSetup {
  namespace: string;
  flag: string;
  entityId: string;
  /** The context as JSON text, exactly as typed or as the rows give it. */
  context: string;
  mode: 'rows' | 'json';
}

/** Reads the console's query parameters (`namespace`, `flag`, `entity`, `context`, `mode`). */
export function parseConsoleQuery(query: URLSearchParams): ConsoleSetup {
  return {
    namespace: query.get('namespace') ?? '',
    flag: query.get('flag') ?? '',
    entityId: query.get('entity') ?? '',
    context: query.get('context') ?? '',
    mode: query.get('mode') === 'json' ? 'json' : 'rows',
  };
}

/** The query parameters of a console setup, empty ones left out (the caller adds `ref`). */
export function consoleQuery(s: ConsoleSetup): Record<string, string | undefined> {
  const context = s.context.trim();
  return {
    namespace: s.namespace || undefined,
    flag: s.flag || undefined,
    entity: s.entityId || undefined,
    context: context === '' || context === '{}' ? undefined : context,
    mode: s.mode === 'json' ? 'json' : undefined,
  };
}
