/**
 * "The last commit that touched this flag" for the flag page (`GET .../flags/{key}/last-change`):
 * the newest commit of the first-parent history of a snapshot's revision whose change altered the
 * flag's definition, not merely its file.
 *
 * How: the flag's file is found among the snapshot's state files (their parsed documents come
 * from the store's parse cache, read and parsed again only when it dropped them); the source's
 * `history` gives the commits that changed that file (blob ids compared, MAX_COMMITS_WALKED at
 * most); for each, newest first, the flag's entry is parsed out of the file at the commit and at
 * its parent and the two compared as canonical JSON. A flag absent from the parent (added, or
 * moved from another file) counts as changed, so a flag added in the first commit walked reports
 * that commit.
 *
 * Bounds: one answer per (revision, namespace, flag), the last MAX_ANSWERS kept (a snapshot never
 * changes, so an answer never goes stale); concurrent asks share one walk, walks of one flag run
 * one after another, and at most MAX_CONCURRENT_WALKS run at once in all. Backends without history (local folder, OCI, object storage) answer
 * `revision: null` with the reason at once.
 */
import { VexilError, notFound } from '../errors.js';
import type { Snapshot } from '../model/snapshot.js';
import type { Revision, Source, SourceFile } from '../sources/types.js';
import { namespaceKeyOf } from '../state/document.js';
import { INDEX_FILE_NAMES, parseCacheKey, selectStateFiles, type ParseCache } from '../state/load.js';
import { decodeUtf8, fileKindOf, parseText } from '../state/parse.js';
import type { RefTable } from './ref-table.js';
import { backendUnavailable } from './refusals.js';
import type { LastChange } from './types.js';

/** Commits of the first-parent history walked at most for one answer. */
export const MAX_COMMITS_WALKED = 200;
/** Walks running at once across all flags (the others wait their turn): hostile asks cost bounded work. */
const MAX_CONCURRENT_WALKS = 2;
/** Answers kept (least recently asked dropped first). */
const MAX_ANSWERS = 1000;

export type { LastChange } from './types.js';

export interface LastChangeTable {
  /** The last change of flag `flagKey` of namespace `namespace` in `snapshot`; 404 when the snapshot lacks the flag. */
  of(snapshot: Snapshot, namespace: string, flagKey: string): Promise<LastChange>;
}

export interface LastChangeOptions {
  readonly source: Source;
  readonly refs: RefTable;
  readonly parseCache: ParseCache;
  readonly maxFileSize: number;
  /** Retry-After (ms) of a refusal when the backend cannot be read. */
  readonly retryAfterMs: () => number;
}

const NO_HISTORY: Record<Source['kind'], string> = {
  local: 'the state is read from a local folder, which keeps no commit history',
  oci: 'the state is read from an OCI registry, whose bundles keep no commit history',
  object: 'the state is read from object storage, which keeps no commit history',
  git: 'this Git source cannot walk its history',
};

/** JSON with object keys sorted: equal definitions give equal text whatever the key order in the file. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** The flag's entry in the documents of one file, as canonical JSON; undefined when absent. */
function definitionIn(docs: readonly unknown[], namespace: string, flagKey: string): string | undefined {
  for (const doc of docs) {
    if (doc === null || typeof doc !== 'object' || namespaceKeyOf(doc) !== namespace) continue;
    const flags = (doc as { flags?: unknown }).flags;
    if (!Array.isArray(flags)) continue;
    const flag: unknown = flags.find((f: unknown) => f !== null && typeof f === 'object' && (f as { key?: unknown }).key === flagKey);
    if (flag !== undefined) return canonical(flag);
  }
  return undefined;
}

function parseDocs(path: string, bytes: Uint8Array): readonly unknown[] {
  const kind = fileKindOf(path);
  if (typeof kind !== 'string') return [];
  const decoded = decodeUtf8(bytes);
  if ('failure' in decoded) return [];
  const parsed = parseText(decoded.text, kind);
  return 'docs' in parsed ? parsed.docs : [];
}

export function createLastChange(opts: LastChangeOptions): LastChangeTable {
  const answers = new Map<string, Promise<LastChange>>();
  /** The walk of each flag running now (namespace and key): the next one waits for it. */
  const running = new Map<string, Promise<unknown>>();
  /** Walks in progress, and the turns of those waiting for one of the MAX_CONCURRENT_WALKS places. */
  let walking = 0;
  const waiting: Array<() => void> = [];
  async function inTurn<T>(work: () => Promise<T>): Promise<T> {
    if (walking >= MAX_CONCURRENT_WALKS) await new Promise<void>((resolve) => waiting.push(resolve));
    walking++;
    try {
      return await work();
    } finally {
      walking--;
      waiting.shift()?.();
    }
  }

  async function docsOf(file: SourceFile): Promise<readonly unknown[]> {
    const key = parseCacheKey(file.path, file.contentId);
    const cached = key !== undefined ? (opts.parseCache.get(key) as { docs?: readonly unknown[] } | undefined) : undefined;
    if (cached !== undefined && Array.isArray(cached.docs)) return cached.docs;
    return parseDocs(file.path, await file.bytes());
  }

  /** The state file holding the flag at the snapshot's revision, and its definition there. */
  async function locate(revision: Revision, namespace: string, flagKey: string): Promise<{ path: string; definition: string } | undefined> {
    const set = await opts.source.files(revision);
    let indexFile;
    for (const name of INDEX_FILE_NAMES) {
      const f = set.files.find((x) => x.path === name);
      if (f !== undefined) {
        indexFile = { path: f.path, bytes: await f.bytes() };
        break;
      }
    }
    const selected = new Set(selectStateFiles(set.files.map((f) => f.path), indexFile).paths);
    for (const f of set.files) {
      if (!selected.has(f.path)) continue;
      const definition = definitionIn(await docsOf(f), namespace, flagKey);
      if (definition !== undefined) return { path: f.path, definition };
    }
    return undefined;
  }

  async function walk(snapshot: Snapshot, namespace: string, flagKey: string): Promise<LastChange> {
    const history = opts.source.history;
    if (history === undefined) return { revision: null, reason: NO_HISTORY[opts.source.kind] };
    const st = opts.refs.get(snapshot.reference);
    const revision: Revision = st?.snapshot === snapshot && st.revision !== undefined ? st.revision : { id: snapshot.revision, ref: snapshot.reference };
    const found = await locate(revision, namespace, flagKey);
    if (found === undefined) return { revision: null, reason: `no state file at revision ${snapshot.revision} defines the flag` };
    const { changes, walked, stopped } = await history.call(opts.source, snapshot.revision, found.path, MAX_COMMITS_WALKED);
    for (const change of changes) {
      const after = change.after === undefined ? undefined : definitionIn(parseDocs(found.path, await change.after()), namespace, flagKey);
      const before = change.before === undefined ? undefined : definitionIn(parseDocs(found.path, await change.before()), namespace, flagKey);
      if (after !== before) {
        const meta = await change.meta();
        return {
          revision: change.commit,
          ...(change.parent !== undefined ? { parent: change.parent } : {}),
          author: meta.author ?? '',
          message: meta.message ?? '',
          committedAt: meta.at ?? '',
        };
      }
    }
    if (stopped === 'missing-parent') return { revision: null, reason: `the flag did not change in the ${walked} commits held locally (older commits are not in the server's copy of the repository)` };
    return { revision: null, reason: `the flag did not change in the last ${walked} commits (at most ${MAX_COMMITS_WALKED} are walked)` };
  }

  return {
    of(snapshot, namespace, flagKey) {
      if (snapshot.namespaces.get(namespace)?.flags.has(flagKey) !== true) throw notFound(`flag "${namespace}/${flagKey}" not found`);
      const key = `${snapshot.revision}\0${namespace}\0${flagKey}`;
      const hit = answers.get(key);
      if (hit !== undefined) {
        answers.delete(key);
        answers.set(key, hit);
        return hit;
      }
      const flagId = `${namespace}\0${flagKey}`;
      const before = running.get(flagId) ?? Promise.resolve();
      const result = before.catch(() => {}).then(() =>
        inTurn(() => walk(snapshot, namespace, flagKey)).catch((err: unknown) => {
          if (err instanceof VexilError) throw err;
          throw backendUnavailable(snapshot.reference, err, opts.retryAfterMs());
        }),
      );
      running.set(flagId, result);
      const settled = () => {
        if (running.get(flagId) === result) running.delete(flagId);
      };
      result.then(settled, settled);
      answers.set(key, result);
      if (answers.size > MAX_ANSWERS) answers.delete(answers.keys().next().value!);
      // A failure is not kept: the next ask tries again.
      result.catch(() => {
        if (answers.get(key) === result) answers.delete(key);
      });
      return result;
    },
  };
}
