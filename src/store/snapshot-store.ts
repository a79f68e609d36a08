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
 *
 * Many references (a Git source): the default reference and those matching `prebuild` globs are
 * built on every refresh; any other reference the source lists (or can look up, e.g. a commit
 * id) is built on its first request, requests for it share that one build, then it is refreshed
 * with the others while it is used and dropped after `idleTtlMs` without requests. A reference
 * the source stops listing (a deleted branch) is dropped. A request for a built reference never
 * waits on the source. Polled sources are polled on a timer that backs off with jitter while
 * polls fail; a reference not confirmed for `maxStalenessMs` is reported `stale` (see /ready).
 */
import { Code, VexilError, notFound } from '../errors.js';
import { LOCAL_REFERENCE } from '../sources/local.js';
import { globMatch } from '../state/glob.js';
import { readState } from '../sources/read-state.js';
import type { Revision, Source } from '../sources/types.js';
import type { Snapshot } from '../state/model.js';
import type { Problem } from '../state/problem.js';
import { InvalidStateError } from './invalid-state-error.js';
import { createParseCache, type ParseCacheStats } from './parse-cache.js';
import { defaultMaxBackoffMs, nextPollDelay } from './poll-schedule.js';
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
  /** Globs (`*` matches any characters) of references built on every refresh; default [defaultReference]. */
  readonly prebuild?: readonly string[];
  /** Other references are dropped after this long without a request (default 10 min). */
  readonly idleTtlMs?: number;
  /** Polled sources: a reference not confirmed by the source for this long is reported `stale`. */
  readonly maxStalenessMs?: number;
  /** Longest wait between failing polls (default 5 min, or half maxStalenessMs when shorter). */
  readonly maxBackoffMs?: number;
  /** Jitter source, [0, 1) (tests). */
  readonly random?: () => number;
}

export interface ManagedSnapshotStore extends SnapshotStore {
  /** First build of the default reference, then watch/poll. Throws InvalidStateError with located problems. */
  start(): Promise<void>;
  /** Look at the source now and rebuild what changed (serialized with every other build). */
  refresh(): Promise<void>;
  parseCacheStats(): ParseCacheStats;
  /** Resolves once no build or refresh is queued (tests, benchmarks). */
  settled(): Promise<void>;
  /** Polling state: failures in a row and the wait chosen for the next poll. */
  pollState(): { readonly consecutiveFailures: number; readonly nextDelayMs?: number };
}

interface RefState {
  snapshot?: Snapshot;
  revision?: Revision;
  loadedAt?: string;
  lastRejected?: RejectedRevision;
  lastError?: { at: string; message: string };
  /** Epoch ms the source last confirmed this reference (polled sources). */
  checkedAt?: number;
  /** Epoch ms of the last request naming it (idle eviction). */
  lastUsedAt: number;
  /** Came from `source.lookup` (a commit id): immutable, never refreshed. */
  pinned?: boolean;
}

/** How long a refs() answer is trusted when a request names an unknown reference. */
const REFS_TTL_MS = 1000;
const DEFAULT_IDLE_TTL_MS = 10 * 60_000;
const noop = () => {};

export function createSnapshotStore(opts: SnapshotStoreOptions): ManagedSnapshotStore {
  const { source } = opts;
  const logger: StoreLogger = opts.logger ?? { debug: noop, info: noop, warn: noop, error: noop };
  const debounceMs = opts.debounceMs ?? 100;
  const now = opts.now ?? (() => new Date());
  const defaultReference = opts.defaultReference ?? LOCAL_REFERENCE;
  const parseCache = createParseCache();
  const nowMs = opts.now !== undefined ? () => (opts.now as () => Date)().getTime() : Date.now;
  const prebuild = opts.prebuild ?? [defaultReference];
  const idleTtlMs = opts.idleTtlMs ?? DEFAULT_IDLE_TTL_MS;
  const polled = source.watch === undefined && opts.pollIntervalMs !== undefined && opts.pollIntervalMs > 0;
  const maxBackoffMs = opts.maxBackoffMs ?? defaultMaxBackoffMs(opts.pollIntervalMs ?? 0, opts.maxStalenessMs);
  let startedAt = nowMs();
  let consecutiveFailures = 0;
  let nextDelayMs: number | undefined;

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
      st = { lastUsedAt: nowMs() };
      refs.set(ref, st);
    }
    return st;
  }

  const isPrebuilt = (ref: string) => ref === defaultReference || prebuild.some((p) => globMatch(p, ref));

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
        knownRefsAt = nowMs();
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
  async function build(ref: string, rev: Revision, initial: boolean, checkedAt?: number): Promise<Snapshot | undefined> {
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
        buildCache: parseCache.buildCache,
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
    if (polled && checkedAt !== undefined) st.checkedAt = checkedAt;
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

  /**
   * One look at the source: which references exist and where they point, then a build of each
   * tracked reference that moved. `listing` reuses a listing just made (right after start).
   */
  async function refreshNow(listing?: Map<string, Revision>): Promise<void> {
    if (closed) return;
    parseCache.nextGeneration();
    let current: Map<string, Revision>;
    try {
      current = listing ?? (await fetchRefs());
    } catch (err) {
      consecutiveFailures++;
      recordError(defaultReference, err instanceof Error ? err.message : String(err));
      return;
    }
    const checkedAt = nowMs();
    let failed = false;
    evictIdle(checkedAt);

    const tracked = new Set([defaultReference, ...refs.keys()]);
    for (const ref of current.keys()) if (isPrebuilt(ref)) tracked.add(ref);
    const todo: Array<[string, Revision]> = [];
    for (const ref of tracked) {
      const st = refs.get(ref);
      if (st?.pinned === true) {
        if (polled) st.checkedAt = checkedAt; // a commit never moves
        continue;
      }
      const rev = current.get(ref);
      if (rev === undefined) {
        if (ref === defaultReference) {
          failed = true;
          recordError(ref, `reference "${ref}" not found`);
        } else if (st !== undefined) {
          refs.delete(ref); // the branch is gone: stop serving it
          logger.info({ reference: ref }, 'reference no longer exists; dropped');
        }
        continue;
      }
      if (st !== undefined && st.revision?.id === rev.id) {
        // Back to the served content (e.g. a broken edit undone): nothing newer is rejected any more.
        st.lastError = undefined;
        if (polled) st.checkedAt = checkedAt;
        if (st.lastRejected !== undefined) {
          st.lastRejected = undefined;
          logger.info({ reference: ref, revision: rev.id }, 'state restored to the served revision');
        }
        continue;
      }
      if (st !== undefined && st.lastRejected?.revision.id === rev.id) {
        st.lastError = undefined;
        if (polled) st.checkedAt = checkedAt;
        continue; // already reported
      }
      todo.push([ref, rev]);
    }

    if (todo.length > 1 && source.prefetch !== undefined) {
      try {
        await source.prefetch(todo.map(([, rev]) => rev));
      } catch (err) {
        // The source is failing: report it on each reference instead of one failing fetch each.
        const message = err instanceof Error ? err.message : String(err);
        for (const [ref] of todo) recordError(ref, message);
        consecutiveFailures++;
        return;
      }
    }
    for (const [ref, rev] of todo) {
      if (closed) return;
      await build(ref, rev, false, checkedAt);
      if (refs.get(ref)?.lastError !== undefined) failed = true;
    }
    consecutiveFailures = failed ? consecutiveFailures + 1 : 0;
    parseCache.sweep();
  }

  /** Drops references built on request that nobody asked for in `idleTtlMs`. */
  function evictIdle(at: number): void {
    for (const [ref, st] of refs) {
      if (isPrebuilt(ref) || pendingBuilds.has(ref)) continue;
      if (at - st.lastUsedAt > idleTtlMs) {
        refs.delete(ref);
        logger.info({ reference: ref, idleMs: at - st.lastUsedAt }, 'reference idle; dropped');
      }
    }
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

  /** Where `ref` points: the latest listing, else the source's lookup (pinned), else the local copy when the source is unreachable at start. */
  async function locate(ref: string, initial: boolean): Promise<{ rev?: Revision; pinned?: boolean; checkedAt?: number }> {
    let listed = initial ? undefined : knownRefs.get(ref);
    let checkedAt = initial ? undefined : knownRefsAt;
    if (listed === undefined) {
      try {
        listed = (await fetchRefs()).get(ref);
        checkedAt = nowMs();
      } catch (err) {
        if (!initial || source.cachedRefs === undefined) throw err;
        // Restart while the backend is unreachable: serve the local copy, report the outage.
        const cached = (await source.cachedRefs().catch(() => undefined))?.get(ref);
        if (cached === undefined) throw err;
        recordError(ref, err instanceof Error ? err.message : String(err));
        logger.warn({ reference: ref, revision: cached.id }, 'source unreachable at start; serving the local copy');
        return { rev: cached };
      }
    }
    if (listed !== undefined) return { rev: listed, ...(checkedAt !== undefined ? { checkedAt } : {}) };
    const found = await source.lookup?.(ref);
    return found !== undefined ? { rev: found, pinned: true, checkedAt: nowMs() } : {};
  }

  function buildOnDemand(ref: string, initial: boolean): Promise<Snapshot> {
    const pending = pendingBuilds.get(ref);
    if (pending !== undefined) return pending;
    const p = serial(async () => {
      const existing = refs.get(ref)?.snapshot;
      if (existing !== undefined) return existing;
      parseCache.nextGeneration();
      const { rev, pinned, checkedAt } = await locate(ref, initial);
      if (rev === undefined) throw notFound(`reference "${ref}" not found`);
      const known = refs.get(ref);
      // Its commit was already rejected: answer from the report instead of reading it again.
      if (known?.lastRejected !== undefined && known.lastRejected.revision.id === rev.id) throw noValidState(ref);
      const lastError = known?.lastError;
      if (pinned === true) stateOf(ref).pinned = true;
      const snap = await build(ref, rev, initial, checkedAt);
      // Keep an outage noticed by locate() visible after the build from the local copy.
      if (snap !== undefined && lastError !== undefined && refs.get(ref)?.lastError === undefined && checkedAt === undefined) {
        stateOf(ref).lastError = lastError;
      }
      if (snap !== undefined) return snap;
      throw noValidState(ref);
    }).finally(() => pendingBuilds.delete(ref));
    pendingBuilds.set(ref, p);
    return p;
  }

  function noValidState(ref: string): VexilError {
    const st = refs.get(ref);
    const first = st?.lastRejected?.problems.find((x) => x.severity === 'error');
    return new VexilError(
      Code.FailedPrecondition,
      first !== undefined
        ? `reference "${ref}" has no valid state: ${formatProblem(first)}`
        : `reference "${ref}" could not be read: ${st?.lastError?.message ?? 'unknown error'}`,
    );
  }

  const randomOpt = opts.random !== undefined ? { random: opts.random } : {};

  /** Polls on a timer: the interval while polls succeed, a growing jittered wait while they fail. */
  function schedulePoll(delay: number): void {
    if (closed) return;
    nextDelayMs = delay;
    pollTimer = setTimeout(() => {
      pollTimer = undefined;
      refresh()
        .catch((err: unknown) => logger.error({ err }, 'poll failed'))
        .finally(() => {
          const wait = nextPollDelay(consecutiveFailures, { intervalMs: opts.pollIntervalMs as number, maxBackoffMs, ...randomOpt });
          if (consecutiveFailures > 0) logger.warn({ consecutiveFailures, nextPollMs: wait }, 'polling backs off');
          schedulePoll(wait);
        });
    }, delay);
    pollTimer.unref();
  }

  /** Why `ref` counts as stale (polled stores with maxStalenessMs only). */
  function staleness(ref: string, st: RefState, at: number): string | undefined {
    if (!polled || opts.maxStalenessMs === undefined || st.pinned === true) return undefined;
    const since = st.checkedAt ?? startedAt;
    const age = at - since;
    if (age <= opts.maxStalenessMs) return undefined;
    const why = st.lastError !== undefined ? `: ${st.lastError.message}` : '';
    return (
      `reference "${ref}" has not been confirmed by the source for ${formatAge(age)} ` +
      `(limit ${formatAge(opts.maxStalenessMs)})${why}`
    );
  }

  const store: ManagedSnapshotStore = {
    defaultReference,

    get(ref?: string) {
      return refs.get(ref === undefined || ref === '' ? defaultReference : ref)?.snapshot;
    },

    async resolve(ref?: string) {
      const key = ref === undefined || ref === '' ? defaultReference : ref;
      const st = refs.get(key);
      if (st !== undefined) st.lastUsedAt = nowMs();
      const snap = st?.snapshot;
      if (snap !== undefined) return snap;
      if (closed) throw new VexilError(Code.Unavailable, 'the store is closed');
      if (key !== defaultReference && !knownRefs.has(key) && !pendingBuilds.has(key) && st === undefined) {
        // Do not let requests naming made-up references make the source list refs on every call.
        const fresh = nowMs() - knownRefsAt < REFS_TTL_MS ? knownRefs : await fetchRefs();
        if (!fresh.has(key) && (source.lookup === undefined || !COMMIT_LIKE.test(key))) {
          throw notFound(`reference "${key}" not found`);
        }
      }
      return buildOnDemand(key, false);
    },

    status(): RefStatus[] {
      const names = [...refs.keys()].sort((a, b) =>
        a === defaultReference ? -1 : b === defaultReference ? 1 : a < b ? -1 : a > b ? 1 : 0,
      );
      const at = nowMs();
      return names.map((reference) => {
        const st = refs.get(reference) as RefState;
        const stale = staleness(reference, st, at);
        return {
          reference,
          ...(st.revision !== undefined ? { revision: st.revision } : {}),
          ...(st.loadedAt !== undefined ? { loadedAt: st.loadedAt } : {}),
          ...(st.lastRejected !== undefined ? { lastRejected: st.lastRejected } : {}),
          ...(st.lastError !== undefined ? { lastError: st.lastError } : {}),
          ...(st.checkedAt !== undefined ? { checkedAt: new Date(st.checkedAt).toISOString() } : {}),
          ...(stale !== undefined ? { stale } : {}),
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
      startedAt = nowMs();
      if (source.watch !== undefined) unwatch = source.watch(onChange);
      try {
        await buildOnDemand(defaultReference, true);
      } catch (err) {
        await store.close();
        throw err;
      }
      if (polled) {
        // The other prebuilt references, from the listing start() just made: no second round trip.
        if (prebuild.some((p) => p !== defaultReference)) {
          const listing = knownRefs;
          void serial(() => refreshNow(listing.size > 0 ? listing : undefined)).catch((err: unknown) =>
            logger.error({ err }, 'prebuild failed'),
          );
        }
        schedulePoll(nextPollDelay(0, { intervalMs: opts.pollIntervalMs as number, maxBackoffMs, ...randomOpt }));
      }
    },

    refresh,

    parseCacheStats: () => parseCache.stats(),

    async settled() {
      let seen: Promise<unknown> | undefined;
      while (seen !== tail) {
        seen = tail;
        await tail;
      }
    },

    pollState: () => ({ consecutiveFailures, ...(nextDelayMs !== undefined ? { nextDelayMs } : {}) }),

    async close() {
      closed = true;
      if (debounceTimer !== undefined) clearTimeout(debounceTimer);
      debounceTimer = undefined;
      if (pollTimer !== undefined) clearTimeout(pollTimer);
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

/** A full Git commit id: may be servable although no ref listing names it. */
const COMMIT_LIKE = /^[0-9a-f]{40}$/;

/** `6m5s`, `45s`, `2h0m`: for status messages. */
function formatAge(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60}s`;
  return `${Math.floor(m / 60)}h${m % 60}m`;
}

/** One line per problem, for logs: `file:line:col: severity rule: message`. */
export function formatProblem(p: Problem): string {
  const loc = p.file === '' ? '' : p.line > 0 ? `${p.file}:${p.line}:${p.column}: ` : `${p.file}: `;
  return `${loc}${p.severity} ${p.rule}: ${p.message}`;
}
