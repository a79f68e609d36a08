/**
 * The SnapshotStore: owns time and I/O between a Source and the request path.
 *
 * - One current, frozen Snapshot per reference, replaced by a single assignment: a request that
 *   called `get`/`resolve` once keeps a consistent view however many swaps happen meanwhile.
 * - Builds run off the request path, one at a time (a serial queue); a change noticed during a
 *   build queues exactly one more look, so rapid edits coalesce.
 * - Last good wins: a revision that fails to read, parse or validate never replaces the served
 *   snapshot; it is logged with its located problems, kept as `lastRejected` and emitted.
 * - Parsed documents are cached by content id across reloads and references.
 */
import { Code, VexilError, notFound } from '../errors.js';
import { LOCAL_REFERENCE } from '../sources/local.js';
import { readState } from '../sources/read-state.js';
import type { Revision, Source } from '../sources/types.js';
import type { Snapshot } from '../state/model.js';
import type { Problem } from '../state/problem.js';
import { InvalidStateError } from './invalid-state-error.js';
import { createParseCache, type ParseCacheStats } from './parse-cache.js';
import type { RefStatus, RejectedRevision, SnapshotStore, StoreEvent } from './types.js';

/** The subset of a pino logger the store uses. */
export interface StoreLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface SnapshotStoreOptions {
  readonly source: Source;
  readonly logger?: StoreLogger;
  /** Changes are coalesced over this window before a rebuild starts (default 100 ms). */
  readonly debounceMs?: number;
  /** Build time of snapshots and status timestamps; injected for tests. */
  readonly now?: () => Date;
  /** The reference served when a request names none (default `local`). */
  readonly defaultReference?: string;
  /** Files over this many bytes are refused with a located problem (default 8 MiB). */
  readonly maxFileSize?: number;
  /** For sources without `watch`: look for changes this often (ms). No polling when absent. */
  readonly pollIntervalMs?: number;
}

export interface ManagedSnapshotStore extends SnapshotStore {
  /** First build of the default reference, then watch/poll. Throws InvalidStateError with located problems. */
  start(): Promise<void>;
  /** Look at the source now and rebuild what changed (serialized with every other build). */
  refresh(): Promise<void>;
  parseCacheStats(): ParseCacheStats;
}

interface RefState {
  snapshot?: Snapshot;
  revision?: Revision;
  loadedAt?: string;
  lastRejected?: RejectedRevision;
  lastError?: { at: string; message: string };
}

/** How long a refs() answer is trusted when a request names an unknown reference. */
const REFS_TTL_MS = 1000;
const noop = () => {};

export function createSnapshotStore(opts: SnapshotStoreOptions): ManagedSnapshotStore {
  const { source } = opts;
  const logger: StoreLogger = opts.logger ?? { debug: noop, info: noop, warn: noop, error: noop };
  const debounceMs = opts.debounceMs ?? 100;
  const now = opts.now ?? (() => new Date());
  const defaultReference = opts.defaultReference ?? LOCAL_REFERENCE;
  const parseCache = createParseCache();

  const refs = new Map<string, RefState>();
  const listeners = new Set<(e: StoreEvent) => void>();
  const pendingBuilds = new Map<string, Promise<Snapshot>>();
  let knownRefs = new Map<string, Revision>();
  let knownRefsAt = 0;
  let refsInFlight: Promise<Map<string, Revision>> | undefined;

  let tail: Promise<unknown> = Promise.resolve();
  let queuedRefresh: Promise<void> | undefined;
  let debounceTimer: NodeJS.Timeout | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let unwatch: (() => Promise<void>) | undefined;
  let closed = false;

  /** Runs `fn` after everything queued before it: no two builds ever overlap. */
  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = tail.then(fn);
    tail = p.then(noop, noop);
    return p;
  }

  function stateOf(ref: string): RefState {
    let st = refs.get(ref);
    if (st === undefined) {
      st = {};
      refs.set(ref, st);
    }
    return st;
  }

  function emit(e: StoreEvent): void {
    for (const l of listeners) {
      try {
        l(e);
      } catch (err) {
        logger.error({ err }, 'store listener failed');
      }
    }
  }

  async function fetchRefs(): Promise<Map<string, Revision>> {
    refsInFlight ??= source
      .refs()
      .then((r) => {
        knownRefs = r;
        knownRefsAt = Date.now();
        return r;
      })
      .finally(() => {
        refsInFlight = undefined;
      });
    return refsInFlight;
  }

  function recordError(ref: string, message: string): void {
    const at = now().toISOString();
    stateOf(ref).lastError = { at, message };
    logger.error({ reference: ref, err: message }, 'reading state failed; still serving the last good snapshot');
    emit({ type: 'error', reference: ref, message });
  }

  /**
   * Reads and loads `rev`. On success swaps it in and returns it; otherwise records the rejection
   * (or, when `initial`, throws it: there is nothing to fall back on).
   */
  async function build(ref: string, rev: Revision, initial: boolean): Promise<Snapshot | undefined> {
    const started = performance.now();
    const st = stateOf(ref);
    let result;
    let revision = rev;
    try {
      const fileSet = await source.files(rev);
      revision = fileSet.revision;
      result = await readState(fileSet, {
        reference: ref,
        now: now(),
        parseCache,
        ...(opts.maxFileSize !== undefined ? { maxFileSize: opts.maxFileSize } : {}),
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (initial) throw err;
      recordError(ref, message);
      return undefined;
    }
    const at = now().toISOString();
    st.lastError = undefined;
    if (result.snapshot === undefined) {
      const rejected: RejectedRevision = { revision, at, problems: result.problems };
      if (initial) throw new InvalidStateError(ref, revision.id, result.problems);
      st.lastRejected = rejected;
      logger.warn(
        { reference: ref, revision: revision.id, problems: result.problems.map(formatProblem) },
        'state change rejected; still serving the last good snapshot',
      );
      emit({ type: 'rejected', reference: ref, rejected });
      return undefined;
    }
    const snapshot = result.snapshot;
    st.snapshot = snapshot;
    st.revision = revision;
    st.loadedAt = at;
    st.lastRejected = undefined;
    const durationMs = performance.now() - started;
    logger.info({ reference: ref, revision: revision.id, durationMs: Math.round(durationMs * 10) / 10 }, 'snapshot loaded');
    if (snapshot.warnings.length > 0) {
      logger.warn({ reference: ref, revision: revision.id, problems: snapshot.warnings.map(formatProblem) }, 'state loaded with warnings');
    }
    emit({ type: 'swap', reference: ref, snapshot, durationMs });
    return snapshot;
  }

  async function refreshNow(): Promise<void> {
    if (closed) return;
    parseCache.nextGeneration();
    let current: Map<string, Revision>;
    try {
      current = await fetchRefs();
    } catch (err) {
      recordError(defaultReference, err instanceof Error ? err.message : String(err));
      return;
    }
    const tracked = new Set([defaultReference, ...refs.keys()]);
    for (const ref of tracked) {
      if (closed) return;
      const rev = current.get(ref);
      if (rev === undefined) {
        if (ref === defaultReference) recordError(ref, `reference "${ref}" not found`);
        else refs.delete(ref); // the branch is gone: stop serving it
        continue;
      }
      const st = stateOf(ref);
      if (st.revision?.id === rev.id) {
        // Back to the served content (e.g. a broken edit undone): nothing newer is rejected any more.
        st.lastError = undefined;
        if (st.lastRejected !== undefined) {
          st.lastRejected = undefined;
          logger.info({ reference: ref, revision: rev.id }, 'state restored to the served revision');
        }
        continue;
      }
      if (st.lastRejected?.revision.id === rev.id) continue; // already reported
      await build(ref, rev, false);
    }
    parseCache.sweep();
  }

  function refresh(): Promise<void> {
    queuedRefresh ??= serial(async () => {
      queuedRefresh = undefined;
      await refreshNow();
    });
    return queuedRefresh;
  }

  /** Coalesces a burst of change events: the first one opens a window, the rebuild runs at its end. */
  function onChange(): void {
    if (closed || debounceTimer !== undefined) return;
    debounceTimer = setTimeout(() => {
      debounceTimer = undefined;
      refresh().catch((err: unknown) => logger.error({ err }, 'refresh failed'));
    }, debounceMs);
  }

  function buildOnDemand(ref: string, initial: boolean): Promise<Snapshot> {
    const pending = pendingBuilds.get(ref);
    if (pending !== undefined) return pending;
    const p = serial(async () => {
      const existing = refs.get(ref)?.snapshot;
      if (existing !== undefined) return existing;
      parseCache.nextGeneration();
      let rev = initial ? undefined : knownRefs.get(ref);
      rev ??= (await fetchRefs()).get(ref);
      if (rev === undefined) throw notFound(`reference "${ref}" not found`);
      const snap = await build(ref, rev, initial);
      if (snap !== undefined) return snap;
      const st = refs.get(ref);
      const first = st?.lastRejected?.problems.find((x) => x.severity === 'error');
      throw new VexilError(
        Code.FailedPrecondition,
        first !== undefined
          ? `reference "${ref}" has no valid state: ${formatProblem(first)}`
          : `reference "${ref}" could not be read: ${st?.lastError?.message ?? 'unknown error'}`,
      );
    }).finally(() => pendingBuilds.delete(ref));
    pendingBuilds.set(ref, p);
    return p;
  }

  const store: ManagedSnapshotStore = {
    defaultReference,

    get(ref?: string) {
      return refs.get(ref === undefined || ref === '' ? defaultReference : ref)?.snapshot;
    },

    async resolve(ref?: string) {
      const key = ref === undefined || ref === '' ? defaultReference : ref;
      const snap = refs.get(key)?.snapshot;
      if (snap !== undefined) return snap;
      if (closed) throw new VexilError(Code.Unavailable, 'the store is closed');
      if (key !== defaultReference && !knownRefs.has(key) && !pendingBuilds.has(key)) {
        // Do not let requests naming made-up references make the source list refs on every call.
        const fresh = Date.now() - knownRefsAt < REFS_TTL_MS ? knownRefs : await fetchRefs();
        if (!fresh.has(key)) throw notFound(`reference "${key}" not found`);
      }
      return buildOnDemand(key, false);
    },

    status(): RefStatus[] {
      const names = [...refs.keys()].sort((a, b) =>
        a === defaultReference ? -1 : b === defaultReference ? 1 : a < b ? -1 : a > b ? 1 : 0,
      );
      return names.map((reference) => {
        const st = refs.get(reference) as RefState;
        return {
          reference,
          ...(st.revision !== undefined ? { revision: st.revision } : {}),
          ...(st.loadedAt !== undefined ? { loadedAt: st.loadedAt } : {}),
          ...(st.lastRejected !== undefined ? { lastRejected: st.lastRejected } : {}),
          ...(st.lastError !== undefined ? { lastError: st.lastError } : {}),
        };
      });
    },

    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    async start() {
      if (source.watch !== undefined) unwatch = source.watch(onChange);
      else if (opts.pollIntervalMs !== undefined && opts.pollIntervalMs > 0) {
        pollTimer = setInterval(onChange, opts.pollIntervalMs);
        pollTimer.unref();
      }
      try {
        await buildOnDemand(defaultReference, true);
      } catch (err) {
        await store.close();
        throw err;
      }
    },

    refresh,

    parseCacheStats: () => parseCache.stats(),

    async close() {
      closed = true;
      if (debounceTimer !== undefined) clearTimeout(debounceTimer);
      debounceTimer = undefined;
      if (pollTimer !== undefined) clearInterval(pollTimer);
      pollTimer = undefined;
      const stop = unwatch;
      unwatch = undefined;
      if (stop !== undefined) await stop();
      await tail; // let a running build finish before the source goes away
      await source.close?.();
    },
  };
  return store;
}

/** One line per problem, for logs: `file:line:col: severity rule: message`. */
export function formatProblem(p: Problem): string {
  const loc = p.file === '' ? '' : p.line > 0 ? `${p.file}:${p.line}:${p.column}: ` : `${p.file}: `;
  return `${loc}${p.severity} ${p.rule}: ${p.message}`;
}
