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
 *
 * What a request naming a reference may cost is bounded, since anyone who may evaluate can name
 * any string: a name not found is remembered (a bounded set, until the next poll) and answered
 * 404 without asking the source again; the source is listed on requests' behalf at most once a
 * second; references built on request are capped (`maxReferences`), and so are the builds waiting
 * (`maxPendingBuilds`): beyond either, 503 with Retry-After, never a build. Polls run before any
 * waiting on-demand work (build-queue.ts). A backend that cannot be read is a 503 with a generic
 * message: its error text (hosts, ports) goes to the log and /meta/snapshots only.
 */
import { Code, VexilError, notFound } from '../errors.js';
import { LOCAL_REFERENCE } from '../sources/local.js';
import { withExcerpts } from '../state/excerpt.js';
import { globMatch } from '../state/glob.js';
import { readState } from '../sources/read-state.js';
import type { Revision, Source } from '../sources/types.js';
import type { Snapshot } from '../state/model.js';
import type { Problem } from '../state/problem.js';
import { createBuildQueue } from './build-queue.js';
import { InvalidStateError } from './invalid-state-error.js';
import { createMatcherWarmup } from './matcher-warmup.js';
import { BoundedNameSet } from './name-set.js';
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
  /** A revision whose state files add up to more bytes is refused with a located problem (default 64 MiB). */
  readonly maxStateSize?: number;
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
  /**
   * At most this many references built because a request named them are kept at once (default
   * 64; the default reference and prebuilt ones do not count). A request needing one more: 503.
   */
  readonly maxReferences?: number;
  /** At most this many on-demand builds wait or run at once (default 8). One more: 503. */
  readonly maxPendingBuilds?: number;
  /** Whether a name the source does not list but can look up (a Git commit id) may be served (default true). */
  readonly allowUnlistedReferences?: boolean;
}

export interface ManagedSnapshotStore extends SnapshotStore {
  /** First build of the default reference, then watch/poll. Throws InvalidStateError with located problems. */
  start(): Promise<void>;
  /** Look at the source now and rebuild what changed (serialized with every other build). */
  refresh(): Promise<void>;
  parseCacheStats(): ParseCacheStats;
  /** Resolves once no build or refresh is queued and the matchers of the snapshots built are generated (tests, benchmarks). */
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
  /** The poll generation of the last failure: a reference never built is not tried again on request before the next poll. */
  failedInPoll?: number;
}

/** Where a reference points, as found for a build. */
interface Located {
  readonly rev?: Revision;
  readonly pinned?: boolean;
  readonly checkedAt?: number;
}

/**
 * How long a refs() answer (or a failure to get one) stands for a request naming a reference the
 * listing lacks: the source is listed on requests' behalf at most this often.
 */
const REFS_TTL_MS = 1000;
const DEFAULT_IDLE_TTL_MS = 10 * 60_000;
export const DEFAULT_MAX_REFERENCES = 64;
export const DEFAULT_MAX_PENDING_BUILDS = 8;
/** Names answered 404 remembered until the next poll, at most this many and this many characters (oldest forgotten first). */
const MAX_NOT_FOUND_NAMES = 10_000;
const MAX_NOT_FOUND_CHARS = 1_000_000;
/** Unlisted names (commit ids) waiting to be looked up at once; one more is a 503. */
const MAX_WAITING_LOOKUPS = 1000;
const noop = () => {};

export function createSnapshotStore(opts: SnapshotStoreOptions): ManagedSnapshotStore {
  const { source } = opts;
  const logger: StoreLogger = opts.logger ?? { debug: noop, info: noop, warn: noop, error: noop };
  const debounceMs = opts.debounceMs ?? 100;
  const now = opts.now ?? (() => new Date());
  const defaultReference = opts.defaultReference ?? LOCAL_REFERENCE;
  const parseCache = createParseCache();
  // Generated matchers are made off the request path, after each swap (matcher-warmup.ts).
  const warmup = createMatcherWarmup();
  const nowMs = opts.now !== undefined ? () => (opts.now as () => Date)().getTime() : Date.now;
  const prebuild = opts.prebuild ?? [defaultReference];
  const idleTtlMs = opts.idleTtlMs ?? DEFAULT_IDLE_TTL_MS;
  const polled = source.watch === undefined && opts.pollIntervalMs !== undefined && opts.pollIntervalMs > 0;
  const maxBackoffMs = opts.maxBackoffMs ?? defaultMaxBackoffMs(opts.pollIntervalMs ?? 0, opts.maxStalenessMs);
  const maxReferences = opts.maxReferences ?? DEFAULT_MAX_REFERENCES;
  const maxPendingBuilds = opts.maxPendingBuilds ?? DEFAULT_MAX_PENDING_BUILDS;
  const allowUnlisted = opts.allowUnlistedReferences ?? true;
  let startedAt = nowMs();
  let consecutiveFailures = 0;
  let nextDelayMs: number | undefined;
  /** Polls started so far: a failed on-demand build is tried again once this moves. */
  let polls = 0;

  const refs = new Map<string, RefState>();
  const listeners = new Set<(e: StoreEvent) => void>();
  const pendingBuilds = new Map<string, Promise<Snapshot>>();
  let knownRefs = new Map<string, Revision>();
  let knownRefsAt = 0;
  /** The last failed listing: when, and why. */
  let listingFailure: { at: number; err: unknown } | undefined;
  let refsInFlight: Promise<Map<string, Revision>> | undefined;
  const notFoundNames = new BoundedNameSet(MAX_NOT_FOUND_NAMES, MAX_NOT_FOUND_CHARS);
  /** Unlisted names waiting for the next lookup pass, and every lookup not answered yet. */
  const waitingLookups = new Map<string, { resolve: (r: Revision | undefined) => void; reject: (err: unknown) => void }>();
  const lookupsInFlight = new Map<string, Promise<Revision | undefined>>();
  let lookupPassQueued = false;

  const queue = createBuildQueue();
  let queuedRefresh: Promise<void> | undefined;
  let debounceTimer: NodeJS.Timeout | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let unwatch: (() => Promise<void>) | undefined;
  let closed = false;

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
      .then(
        (r) => {
          knownRefs = r;
          knownRefsAt = nowMs();
          listingFailure = undefined;
          return r;
        },
        (err: unknown) => {
          listingFailure = { at: nowMs(), err };
          throw err;
        },
      )
      .finally(() => {
        refsInFlight = undefined;
      });
    return refsInFlight;
  }

  function recordError(ref: string, message: string): void {
    if (closed) return; // backend work abandoned by close(): not a backend fault
    const at = now().toISOString();
    const st = stateOf(ref);
    st.lastError = { at, message };
    st.failedInPoll = polls;
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
        ...(opts.maxStateSize !== undefined ? { maxStateSize: opts.maxStateSize } : {}),
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (initial) throw err;
      recordError(ref, message);
      return undefined;
    }
    if (closed && !initial) return undefined;
    const at = now().toISOString();
    st.lastError = undefined;
    if (polled && checkedAt !== undefined) st.checkedAt = checkedAt;
    if (result.snapshot === undefined) {
      // The offending lines, quoted while the file texts are at hand (they are not kept after).
      const problems = result.sourceText !== undefined ? withExcerpts(result.problems, result.sourceText) : result.problems;
      const rejected: RejectedRevision = { revision, at, problems };
      if (initial) throw new InvalidStateError(ref, revision.id, problems);
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
    warmup.add(snapshot);
    return snapshot;
  }

  /**
   * One look at the source: which references exist and where they point, then a build of each
   * tracked reference that moved. `listing` reuses a listing just made (right after start).
   */
  async function refreshNow(listing?: Map<string, Revision>): Promise<void> {
    if (closed) return;
    parseCache.nextGeneration();
    polls++;
    let current: Map<string, Revision>;
    try {
      current = listing ?? (await fetchRefs());
    } catch (err) {
      consecutiveFailures++;
      recordError(defaultReference, err instanceof Error ? err.message : String(err));
      return;
    }
    // A new look at the source: names not found before may exist now.
    notFoundNames.clear();
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
          drop(ref); // the branch is gone: stop serving it
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

  function drop(ref: string): void {
    refs.delete(ref);
    emit({ type: 'dropped', reference: ref });
  }

  /** Drops references built on request that nobody asked for in `idleTtlMs`. */
  function evictIdle(at: number): void {
    for (const [ref, st] of refs) {
      if (isPrebuilt(ref) || pendingBuilds.has(ref)) continue;
      if (at - st.lastUsedAt > idleTtlMs) {
        drop(ref);
        logger.info({ reference: ref, idleMs: at - st.lastUsedAt }, 'reference idle; dropped');
      }
    }
  }

  function refresh(): Promise<void> {
    queuedRefresh ??= queue.run('poll', async () => {
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

  /**
   * Where `ref` points when its build starts. At start: a listing made now (the local copy when
   * the source is unreachable), else the source's lookup. Later (a tracked reference built again
   * on request): the latest listing, else the lookup of an unlisted name; never a new listing.
   */
  async function locate(ref: string, initial: boolean): Promise<Located> {
    if (!initial) {
      const listed = knownRefs.get(ref);
      if (listed !== undefined) return { rev: listed, checkedAt: knownRefsAt };
      const found = isUnlistedName(ref) ? await source.lookup?.(ref) : undefined;
      return found !== undefined ? { rev: found, pinned: true, checkedAt: nowMs() } : {};
    }
    let listed: Revision | undefined;
    try {
      listed = (await fetchRefs()).get(ref);
    } catch (err) {
      if (source.cachedRefs === undefined) throw err;
      // Restart while the backend is unreachable: serve the local copy, report the outage.
      const cached = (await source.cachedRefs().catch(() => undefined))?.get(ref);
      if (cached === undefined) throw err;
      recordError(ref, err instanceof Error ? err.message : String(err));
      logger.warn({ reference: ref, revision: cached.id }, 'source unreachable at start; serving the local copy');
      return { rev: cached };
    }
    if (listed !== undefined) return { rev: listed, checkedAt: nowMs() };
    const found = await source.lookup?.(ref);
    return found !== undefined ? { rev: found, pinned: true, checkedAt: nowMs() } : {};
  }

  /** A name the source does not list but may serve through `lookup` (a full commit id). */
  const isUnlistedName = (ref: string) => source.lookup !== undefined && COMMIT_LIKE.test(ref);

  /**
   * Builds `ref` in the queue's demand lane (the poll lane at start); concurrent requests share
   * the build. `located`: where a request's admission found it, for a reference not tracked yet,
   * which must fit under the caps first.
   */
  function buildOnDemand(ref: string, initial: boolean, located?: Located): Promise<Snapshot> {
    const pending = pendingBuilds.get(ref);
    if (pending !== undefined) return pending;
    if (located !== undefined) checkCapacity(ref);
    const p = queue
      .run(initial ? 'poll' : 'demand', async () => {
        const existing = refs.get(ref)?.snapshot;
        if (existing !== undefined) return existing;
        parseCache.nextGeneration();
        let where: Located;
        try {
          where = located ?? (await locate(ref, initial));
        } catch (err) {
          if (initial) throw err;
          throw backendUnavailable(ref, err);
        }
        const { rev, pinned, checkedAt } = where;
        if (rev === undefined) throw unknownReference(ref);
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
        throw cannotServe(ref);
      })
      .finally(() => pendingBuilds.delete(ref));
    pendingBuilds.set(ref, p);
    return p;
  }

  /**
   * Whether a request naming `ref` may cost anything (the reference is neither built nor being
   * built): a name found missing since the last poll is 404 at once; a name the last listing
   * lacks lists the source again (at most once per REFS_TTL_MS for all requests), an unlisted one
   * (commit id) is looked up in a batch; one still missing is remembered, then 404.
   */
  async function admit(ref: string): Promise<Located> {
    if (notFoundNames.has(ref)) throw unknownReference(ref);
    const known = knownRefs.get(ref);
    if (known !== undefined) return { rev: known, checkedAt: knownRefsAt };
    const unlisted = isUnlistedName(ref);
    if (unlisted && !allowUnlisted) {
      throw notFound(`reference "${ref}" not found: this server does not serve commit ids, only branches and tags`);
    }
    let listing: Map<string, Revision>;
    try {
      listing = await recentListing();
    } catch (err) {
      throw backendUnavailable(ref, err);
    }
    const listed = listing.get(ref);
    if (listed !== undefined) return { rev: listed, checkedAt: knownRefsAt };
    if (unlisted) {
      let found: Revision | undefined;
      try {
        found = await lookupUnlisted(ref);
      } catch (err) {
        if (err instanceof VexilError) throw err;
        throw backendUnavailable(ref, err);
      }
      if (found !== undefined) return { rev: found, pinned: true, checkedAt: nowMs() };
    }
    notFoundNames.add(ref);
    throw unknownReference(ref);
  }

  /** The last listing when younger than REFS_TTL_MS, else a new one (shared); a failure stands as long. */
  async function recentListing(): Promise<Map<string, Revision>> {
    const at = nowMs();
    if (at - knownRefsAt < REFS_TTL_MS) return knownRefs;
    if (listingFailure !== undefined && at - listingFailure.at < REFS_TTL_MS) throw listingFailure.err;
    return fetchRefs();
  }

  /**
   * Looks up unlisted names in passes: one queued job answers every name waiting when it runs, so
   * however many requests name commit ids, at most one lookup job waits in the queue.
   */
  function lookupUnlisted(name: string): Promise<Revision | undefined> {
    const inFlight = lookupsInFlight.get(name);
    if (inFlight !== undefined) return inFlight;
    if (lookupsInFlight.size >= MAX_WAITING_LOOKUPS) {
      throw overloaded(`reference "${name}" cannot be looked up now: too many lookups are waiting; try again later`, 1);
    }
    const p = new Promise<Revision | undefined>((resolve, reject) => waitingLookups.set(name, { resolve, reject }));
    lookupsInFlight.set(name, p);
    p.then(
      () => lookupsInFlight.delete(name),
      () => lookupsInFlight.delete(name),
    );
    if (!lookupPassQueued) {
      lookupPassQueued = true;
      void queue.run('demand', lookupPass);
    }
    return p;
  }

  async function lookupPass(): Promise<void> {
    lookupPassQueued = false;
    const batch = [...waitingLookups];
    waitingLookups.clear();
    let failure: unknown;
    for (const [name, waiter] of batch) {
      // The source failing once fails the whole pass: no request per name against a backend that is down.
      if (failure !== undefined) {
        waiter.reject(failure);
        continue;
      }
      try {
        waiter.resolve(await source.lookup?.(name));
      } catch (err) {
        failure = err;
        waiter.reject(err);
      }
    }
  }

  /**
   * A reference not tracked yet may be built when fewer than maxReferences references built on
   * request are kept (or being built) and fewer than maxPendingBuilds builds wait. Else 503.
   */
  function checkCapacity(ref: string): void {
    if (pendingBuilds.size >= maxPendingBuilds) {
      throw overloaded(`reference "${ref}" cannot be built now: ${maxPendingBuilds} builds are already waiting; try again later`, 1);
    }
    if (isPrebuilt(ref)) return;
    let kept = 0;
    let leastRecentUse = Number.POSITIVE_INFINITY;
    for (const [name, st] of refs) {
      if (isPrebuilt(name)) continue;
      kept++;
      leastRecentUse = Math.min(leastRecentUse, st.lastUsedAt);
    }
    for (const name of pendingBuilds.keys()) if (!refs.has(name) && !isPrebuilt(name)) kept++;
    if (kept < maxReferences) return;
    // A slot frees when the least recently used one has been idle for idleTtlMs (seen at a poll).
    const untilIdle = Number.isFinite(leastRecentUse) ? leastRecentUse + idleTtlMs - nowMs() : 0;
    throw overloaded(
      `reference "${ref}" cannot be built now: the server already keeps ${maxReferences} references built on request; try again later`,
      Math.max(untilIdle, opts.pollIntervalMs ?? 0) / 1000,
    );
  }

  const unknownReference = (ref: string) => notFound(`reference "${ref}" not found`);

  function overloaded(message: string, retryAfterSeconds: number): VexilError {
    return new VexilError(Code.Unavailable, message, { headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) } });
  }

  /**
   * The backend could not be read for `ref`: a 503 with a message that says so and nothing more
   * (the error text names hosts and ports; it is logged and shown in /meta/snapshots). Retry
   * after the next poll, which tries again.
   */
  function backendUnavailable(ref: string, cause: unknown): VexilError {
    const wait = (nextDelayMs ?? opts.pollIntervalMs ?? 30_000) / 1000;
    return new VexilError(Code.Unavailable, `reference "${ref}" cannot be read now: the state backend is unavailable; try again later`, {
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(wait))) },
      cause,
    });
  }

  /**
   * Why `ref` has no snapshot after its build: a backend that could not be read (503; a read that
   * succeeds clears lastError, so when set it is the latest outcome), else invalid content (400).
   */
  function cannotServe(ref: string): VexilError {
    const st = refs.get(ref);
    if (st?.lastError === undefined) return noValidState(ref);
    return backendUnavailable(ref, new Error(st.lastError.message));
  }

  function noValidState(ref: string): VexilError {
    const first = refs.get(ref)?.lastRejected?.problems.find((x) => x.severity === 'error');
    return new VexilError(
      Code.FailedPrecondition,
      first !== undefined ? `reference "${ref}" has no valid state: ${formatProblem(first)}` : `reference "${ref}" has no valid state`,
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
    // Public (/ready): the error itself (hosts, ports) is only in lastError, which /meta/snapshots shows.
    const why = st.lastError !== undefined ? ': the state backend could not be read (lastError in /meta/snapshots)' : '';
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
      const pending = pendingBuilds.get(key);
      if (pending !== undefined) return pending;
      if (st !== undefined) {
        // Tracked but not built: its last build failed. Answer from that until a poll moves on.
        if (st.lastError !== undefined && st.failedInPoll === polls) throw backendUnavailable(key, new Error(st.lastError.message));
        if (st.lastError === undefined && st.lastRejected !== undefined && st.pinned === true) throw noValidState(key);
        return buildOnDemand(key, false);
      }
      if (key === defaultReference) return buildOnDemand(key, false);
      const located = await admit(key);
      return buildOnDemand(key, false, located);
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
          void queue.run('poll', () => refreshNow(listing.size > 0 ? listing : undefined)).catch((err: unknown) =>
            logger.error({ err }, 'prebuild failed'),
          );
        }
        schedulePoll(nextPollDelay(0, { intervalMs: opts.pollIntervalMs as number, maxBackoffMs, ...randomOpt }));
      }
    },

    refresh,

    parseCacheStats: () => parseCache.stats(),

    async settled() {
      // A finished job's callers may queue more (start queues the prebuild): look again after them.
      do {
        await queue.idle();
        await new Promise((r) => setImmediate(r));
      } while (!queue.isIdle());
      await warmup.idle();
    },

    pollState: () => ({ consecutiveFailures, ...(nextDelayMs !== undefined ? { nextDelayMs } : {}) }),

    async close() {
      closed = true;
      warmup.close();
      if (debounceTimer !== undefined) clearTimeout(debounceTimer);
      debounceTimer = undefined;
      if (pollTimer !== undefined) clearTimeout(pollTimer);
      pollTimer = undefined;
      const stop = unwatch;
      unwatch = undefined;
      if (stop !== undefined) await stop();
      // Backend work is abandoned, not awaited: closing the source first fails its requests in
      // flight (a hung Git server would otherwise hold the shutdown for its 30 s timeout), then
      // the builds that were waiting on them end; none swaps anything in once closed.
      await source.close?.();
      await queue.idle();
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
