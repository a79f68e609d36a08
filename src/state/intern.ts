/**
 * Sharing by equal content, for stores that keep many similar states at once (one per branch, tag
 * or bundle). A branch that edits one flag re-parses that file: without this, every flag of the
 * file (and, for a segments file, every flag using those segments) would be parsed into new
 * objects and built again, although all but one are equal to what another reference already holds.
 *
 * When a file is parsed again in a new version, its flags and segments are replaced by equal
 * objects already held (internFile), so the build cache, keyed by parsed-object identity
 * (build.ts), finds their built Flag and Segment; built namespaces whose flags and segments are
 * the same objects are shared too (build.ts). Content keys only find candidates: a candidate is
 * used only when it is exactly equal (same key order, same types, Object.is for numbers), so a key
 * collision or a lossy key (JSON turns NaN into null) never shares anything unequal. Only loads
 * given a build cache with a content table do any of it: plain `load()` pays nothing.
 *
 * Ids: they derive from the namespace, the flag or segment key and positions inside it (ids.ts),
 * never from the file or the position of the flag in it, so equal content in the same namespace
 * has equal ids wherever it sits, and sharing the built object is exact.
 *
 * Problems are located from each file's own text and path-addressed findings (the object is not
 * consulted), so a shared object still reports its problems at the right file, line and column.
 */
import { hash } from 'node:crypto';

/** Content key → an object of that content, held weakly (it lives as long as some state holds it). */
export interface ContentTable {
  lookup(key: string): object | undefined;
  remember(key: string, value: object): void;
}

/** Nodes walked per object at most: YAML aliases can make a few lines stand for billions of values. */
const MAX_NODES = 50_000;

/**
 * The key of a plain JSON-like value (what js-yaml's core schema and JSON.parse produce), or
 * undefined when it is too large to be worth sharing.
 */
export function contentKey(kind: string, value: unknown): string | undefined {
  if (countNodes(value, { left: MAX_NODES }) === false) return undefined;
  return textKey(kind, JSON.stringify(value));
}

/** The key of a text made by the caller (already canonical). */
export function textKey(kind: string, text: string): string {
  return kind + hash('sha1', text, 'base64');
}

function countNodes(v: unknown, budget: { left: number }): boolean {
  if (--budget.left < 0) return false;
  if (v === null || typeof v !== 'object') return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!countNodes(v[i], budget)) return false;
    return true;
  }
  for (const k in v) if (!countNodes((v as Record<string, unknown>)[k], budget)) return false;
  return true;
}

/** Exact structural equality of two parsed values (bounded; false when the bound is reached). */
export function sameContent(a: unknown, b: unknown, budget: { left: number } = { left: MAX_NODES }): boolean {
  if (--budget.left < 0) return false;
  // Object.is, not ===: 0 and -0 are different contents (NaN the same).
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return Object.is(a, b);
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameContent(a[i], b[i], budget)) return false;
    return true;
  }
  if (Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    // Same order too: key order shows through (metadata is served in declared order).
    if (ka[i] !== kb[i]) return false;
    if (!sameContent((a as Record<string, unknown>)[ka[i]], (b as Record<string, unknown>)[kb[i]], budget)) return false;
  }
  return true;
}

/** The held object equal to `value`, or `value` itself (then remembered for the next ones). */
export function internValue<T extends object>(kind: string, value: T, table: ContentTable): T {
  const key = contentKey(kind, value);
  if (key === undefined) return value;
  const held = table.lookup(key);
  if (held !== undefined && sameContent(held, value)) return held as T;
  if (held === undefined) table.remember(key, value);
  return value;
}

/** Documents whose flags and segments are in a content table (see internFile). */
const registered = new WeakSet<readonly unknown[]>();

/**
 * Called with the freshly parsed documents of a file (not yet shared with anyone). Content is
 * compared only where it pays: when another version of the same file was parsed before (a branch
 * or a new commit that edits it). Then that version's flags and segments are put in the table
 * (once), and each flag and segment of the new one is replaced by an equal one already held. The
 * first version of a file costs one table entry, so a store that serves one reference pays
 * nothing more. (Flags moved to another file are not found: a rare case, and only sharing is lost.)
 */
export function internFile(path: string, docs: readonly unknown[], table: ContentTable): void {
  const pathKey = `p${path}`;
  const previous = table.lookup(pathKey) as readonly unknown[] | undefined;
  if (previous !== undefined && previous !== docs) {
    if (!registered.has(previous)) {
      eachItem(previous, table, false);
      registered.add(previous);
    }
    eachItem(docs, table, true);
    registered.add(docs);
  }
  table.remember(pathKey, docs);
}

/** Remembers each flag and segment not held yet; with `replace`, swaps in the held equal ones. */
function eachItem(docs: readonly unknown[], table: ContentTable, replace: boolean): void {
  for (const doc of docs) {
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) continue;
    const d = doc as { flags?: unknown; segments?: unknown };
    items(d.flags, 'f', table, replace);
    items(d.segments, 's', table, replace);
  }
}

function items(list: unknown, kind: string, table: ContentTable, replace: boolean): void {
  if (!Array.isArray(list)) return;
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i];
    if (item === null || typeof item !== 'object' || Array.isArray(item)) continue;
    const held = internValue(kind, item, table);
    // Only the new documents' own `flags`/`segments` arrays are written to.
    if (replace) list[i] = held;
  }
}
