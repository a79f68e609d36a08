/**
 * The SnapshotStore: owns time and I/O between a Source and the request path. This file is its
 * public face (get, resolve, status, subscribe, start, refresh, close) and the wiring of its parts;
 * each part is a file of this folder:
 *
 *   ref-table.ts        the references kept and what is known of each
 *   listing.ts          the source's listing: the last one; listed for requests at most once a second
 *   admission.ts        what a request naming a reference may cost (404 memo, lookup passes, caps)
 *   build-on-demand.ts  one shared build per reference a request (or start) asked for
 *   build-revision.ts   the build of one revision: read, load, swap in or record the rejection
 *   refresh.ts          one look at the source: drop idle and deleted references, rebuild what moved
 *   refresh-gate.ts     looks asked for by requests (webhooks, /meta/refresh): coalesced, one a second per reference
 *   poller.ts           when to look: watch debounce, poll timer, backoff
 *   status.ts           the status rows and staleness
 *   refusals.ts         the store's 404/400/503 wording
 *   serve-revision.ts   a cluster follower's entry: serve exactly the revision another replica found
 *   build-queue.ts      builds one at a time, polls before on-demand work
 *   read-state.ts       a revision's files into a load result (with test-contexts.ts)
 *   parse-cache.ts      parsed documents shared across builds and references (build-cache.ts: built ones)
 *   matcher-warmup.ts   generated matchers, made in the background after a swap
 *   history/            served and rejected revisions recorded in the data store (GET /meta/history)
 *   notifications/      what history/ records, and audit events, queued and delivered to webhooks and Slack
 *   ref-absence.ts, name-set.ts, poll-schedule.ts   the rules refresh, admission and the poller apply
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
 * the source stops listing (a deleted branch) is dropped once it stays unlisted for the removal
 * grace (ref-absence.ts). A request for a built reference never waits on the source. A reference
 * not confirmed for `maxStalenessMs` is reported `stale` (see /ready).
 */
import { LOCAL_REFERENCE } from '../sources/local.js';
import type { Snapshot } from '../model/snapshot.js';
import type { Revision, Source } from '../sources/types.js';
import { createAdmission } from './admission.js';
import { createRevisionBuilder } from './build-revision.js';
import { createOnDemandBuilds } from './build-on-demand.js';
import { createBuildQueue } from './build-queue.js';
import { createListing } from './listing.js';
import { createMatcherWarmup } from './matcher-warmup.js';
import { createParseCache, type ParseCacheStats } from './parse-cache.js';
import { defaultMaxBackoffMs } from './poll-schedule.js';
import { createPoller } from './poller.js';
import { createRefTable } from './ref-table.js';
import { createRefresh } from './refresh.js';
import { createRefreshGate } from './refresh-gate.js';
import { createRevisionEntry, type ServeOutcome } from './serve-revision.js';
import type { HistoryRecorder } from './history/recorder.js';
import { backendUnavailable, noValidState, storeClosed } from './refusals.js';
import { createStoreStatus } from './status.js';
import { createServedChecks, type ServedChecks } from './served-checks.js';
import { createLastChange, type LastChange } from './last-change.js';
import type { RefStatus, SnapshotStore, StoreEvent, StoreLogger } from './types.js';

export { formatProblem } from './refusals.js';
export type { StoreLogger } from './types.js';
export type { ServeOutcome } from './serve-revision.js';

export interface SnapshotStoreOptions {
  readonly source: Source;
  readonly logger?: StoreLogger;
  /** Changes are coalesced over this window before a rebuild starts (default 100 ms). */
  readonly debounceMs?: number;
  /** Build time of snapshots and status timestamps; injected for tests. */
  readonly now?: () => Date;
  /** The reference served when a request names none (default `local`). */
  readonly defaultReference?: string;
  /** `storage.max_file_size`: files over this many bytes are refused with a located problem. */
  readonly maxFileSize: number;
  /** `storage.max_state_size`: a revision whose state files add up to more bytes is refused with a located problem. */
  readonly maxStateSize: number;
  /** For sources without `watch`: look for changes this often (ms). No polling when absent. */
  readonly pollIntervalMs?: number;
  /** Globs (`*` matches any characters) of references built on every refresh; default [defaultReference]. */
  readonly prebuild?: readonly string[];
  /** Other references are dropped after this long without a request (`storage.git.idle_ttl`). */
  readonly idleTtlMs: number;
  /** Polled sources: a reference not confirmed by the source for this long is reported `stale`. */
  readonly maxStalenessMs?: number;
  /** Longest wait between failing polls (default 5 min, or half maxStalenessMs when shorter). */
  readonly maxBackoffMs?: number;
  /** Jitter source, [0, 1) (tests). */
  readonly random?: () => number;
  /**
   * At most this many references built because a request named them are kept at once (the
   * default reference and prebuilt ones do not count; `storage.git.max_references`). A request
   * needing one more: 503.
   */
  readonly maxReferences: number;
  /** At most this many on-demand builds wait or run at once (`storage.git.max_pending_builds`). One more: 503. */
  readonly maxPendingBuilds: number;
  /** Whether a name the source does not list but can look up (a Git commit id) may be served (`storage.git.allow_commit_references`). */
  readonly allowUnlistedReferences: boolean;
  /**
   * `storage.reference_removal`: a reference the source stops listing is dropped only once it is
   * absent from this many polls in a row spanning at least `graceMs`. Absent: at the first poll
   * without it (the config schema holds the served default).
   */
  readonly referenceRemoval?: { readonly listings: number; readonly graceMs: number };
  /** Where served and rejected revisions are recorded (history/), before each swap is logged. */
  readonly history?: HistoryRecorder;
}

export interface ManagedSnapshotStore extends SnapshotStore {
  checks(snapshot: Snapshot): Promise<ServedChecks>;
  lastChange(snapshot: Snapshot, namespace: string, flagKey: string): Promise<LastChange>;
  /** First build of the default reference, then watch/poll. Throws InvalidStateError with located problems. */
  start(): Promise<void>;
  /** Look at the source now and rebuild what changed (serialized with every other build). */
  refresh(): Promise<void>;
  requestRefresh(references?: readonly string[]): Promise<void>;
  tracks(reference: string): boolean;
  parseCacheStats(): ParseCacheStats;
  /** Resolves once no build or refresh is queued and the matchers of the snapshots built are generated (tests, benchmarks). */
  settled(): Promise<void>;
  /** Polling state: failures in a row and the wait chosen for the next poll. */
  pollState(): { readonly consecutiveFailures: number; readonly nextDelayMs?: number };
  /** Builds exactly `revisionId` of `ref` (kept or prebuilt references only) and swaps it in (serve-revision.ts). */
  serveRevision(ref: string, revisionId: string): Promise<ServeOutcome>;
  /** The cluster confirmed `ref` at `revisionId` at `atMs`: counts as the source confirming it when that is what is served. */
  confirmRevision(ref: string, revisionId: string, atMs: number): void;
  /** The revision id each kept reference serves. */
  servedRevisions(): Map<string, string | undefined>;
  /** Polled sources: whether the poll timer looks at the source (default true; off while another replica polls for this one). */
  setPolling(enabled: boolean): void;
}

/**
 * Retry-After of a backend refusal when nothing polls (a watched source has no next poll): a hint
 * to the client, not a user setting.
 */
const RETRY_AFTER_WITHOUT_POLL_MS = 30_000;
const noop = () => {};

export function createSnapshotStore(opts: SnapshotStoreOptions): ManagedSnapshotStore {
  const { source } = opts;
  const logger: StoreLogger = opts.logger ?? { debug: noop, info: noop, warn: noop, error: noop };
  const now = opts.now ?? (() => new Date());
  const nowMs = opts.now !== undefined ? () => (opts.now as () => Date)().getTime() : Date.now;
  const defaultReference = opts.defaultReference ?? LOCAL_REFERENCE;
  const prebuild = opts.prebuild ?? [defaultReference];
  const { idleTtlMs } = opts;
  const polled = source.watch === undefined && opts.pollIntervalMs !== undefined && opts.pollIntervalMs > 0;
  let closed = false;
  let pollingPaused = false;
  const isClosed = () => closed;
  const listeners = new Set<(e: StoreEvent) => void>();

  function emit(e: StoreEvent): void {
    for (const l of listeners) {
      try {
        l(e);
      } catch (err) {
        logger.error({ err }, 'store listener failed');
      }
    }
  }

  const parseCache = createParseCache();
  // Generated matchers are made off the request path, after each swap (matcher-warmup.ts).
  const warmup = createMatcherWarmup();
  const queue = createBuildQueue();
  const refs = createRefTable({ defaultReference, prebuild, nowMs });
  const listing = createListing({ source, nowMs });
  /** Retry-After of a backend refusal: until the next poll. */
  const retryAfterMs = () => poller.nextDelayMs ?? opts.pollIntervalMs ?? RETRY_AFTER_WITHOUT_POLL_MS;
  const builder = createRevisionBuilder({
    source,
    refs,
    parseCache,
    warmup,
    logger,
    emit,
    now,
    polled,
    maxFileSize: opts.maxFileSize,
    maxStateSize: opts.maxStateSize,
    isClosed,
    pollGeneration: () => refresher.polls,
    ...(opts.history !== undefined ? { history: opts.history } : {}),
  });
  const admission = createAdmission({
    source,
    refs,
    listing,
    queue,
    maxReferences: opts.maxReferences,
    maxPendingBuilds: opts.maxPendingBuilds,
    allowUnlisted: opts.allowUnlistedReferences,
    idleTtlMs,
    ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
    nowMs,
    retryAfterMs,
  });
  const onDemand = createOnDemandBuilds({ source, refs, listing, admission, builder, queue, parseCache, logger, nowMs, retryAfterMs });
  const refresher = createRefresh({
    source,
    refs,
    listing,
    admission,
    builder,
    onDemand,
    queue,
    parseCache,
    logger,
    emit,
    polled,
    idleTtlMs,
    referenceRemoval: opts.referenceRemoval ?? { listings: 1, graceMs: 0 },
    isClosed,
    nowMs,
  });
  const poller = createPoller({
    source,
    refresh: refresher.refresh,
    consecutiveFailures: () => refresher.consecutiveFailures,
    logger,
    debounceMs: opts.debounceMs ?? 100,
    intervalMs: opts.pollIntervalMs ?? 0,
    maxBackoffMs: opts.maxBackoffMs ?? defaultMaxBackoffMs(opts.pollIntervalMs ?? 0, opts.maxStalenessMs),
    ...(opts.random !== undefined ? { random: opts.random } : {}),
    isClosed,
    paused: () => pollingPaused,
  });
  // Looks asked for by requests: coalesced, at most one a second per reference (refresh-gate.ts).
  const gate = createRefreshGate({
    look: (only) => (only === undefined ? refresher.refresh() : refresher.refreshReferences(only)),
    nowMs: () => performance.now(), // monotonic: the bound holds across wall-clock steps
  });
  const servedChecks = createServedChecks({
    source,
    refs,
    queue,
    parseCache,
    now,
    maxFileSize: opts.maxFileSize,
    maxStateSize: opts.maxStateSize,
    retryAfterMs,
  });
  const lastChange = createLastChange({ source, refs, parseCache, maxFileSize: opts.maxFileSize, retryAfterMs });
  const entry = createRevisionEntry({ refs, builder, queue, polled, isClosed, nowMs });
  const status = createStoreStatus({ refs, polled, ...(opts.maxStalenessMs !== undefined ? { maxStalenessMs: opts.maxStalenessMs } : {}), nowMs });

  const store: ManagedSnapshotStore = {
    defaultReference,

    get(ref?: string) {
      return refs.get(ref === undefined || ref === '' ? defaultReference : ref)?.snapshot;
    },

    async resolve(ref?: string) {
      const key = refs.keyOf(ref);
      const st = refs.get(key);
      if (st !== undefined) st.lastUsedAt = nowMs();
      const snap = st?.snapshot;
      if (snap !== undefined) return snap;
      if (closed) throw storeClosed();
      const pending = onDemand.pending(key);
      if (pending !== undefined) return pending;
      if (st !== undefined) {
        // Tracked but not built: its last build failed. Answer from that until a poll moves on.
        if (st.lastError !== undefined && st.failedInPoll === refresher.polls) {
          throw backendUnavailable(key, new Error(st.lastError.message), retryAfterMs());
        }
        if (st.lastError === undefined && st.lastRejected !== undefined && st.pinned === true) throw noValidState(key, st);
        return onDemand.build(key, false);
      }
      if (key === defaultReference) return onDemand.build(key, false);
      const located = await admission.admit(key);
      return onDemand.build(key, false, located);
    },

    status(): RefStatus[] {
      return status.rows();
    },

    checks: (snapshot) => servedChecks.of(snapshot),

    lastChange: (snapshot, namespace, flagKey) => lastChange.of(snapshot, namespace, flagKey),

    isPinned(ref: string) {
      return refs.get(refs.keyOf(ref))?.pinned === true;
    },

    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    async start() {
      status.markStarted();
      poller.watch();
      try {
        await onDemand.build(defaultReference, true);
      } catch (err) {
        await store.close();
        throw err;
      }
      if (polled) {
        // The other prebuilt references, from the listing start() just made: no second round trip.
        if (prebuild.some((p) => p !== defaultReference)) {
          const known: Map<string, Revision> = listing.known;
          void queue.run('poll', () => refresher.refreshNow(known.size > 0 ? known : undefined)).catch((err: unknown) =>
            logger.error({ err }, 'prebuild failed'),
          );
        }
        poller.start();
      }
    },

    refresh: refresher.refresh,

    requestRefresh: (references) => gate.request(references),

    tracks: (reference) => refs.has(reference) || refs.isPrebuilt(reference),
    serveRevision: entry.serveRevision,
    confirmRevision: entry.confirm,
    servedRevisions: entry.served,
    setPolling(enabled) {
      pollingPaused = !enabled;
    },

    parseCacheStats: () => parseCache.stats(),

    async settled() {
      // A finished job's callers may queue more (start queues the prebuild): look again after them.
      do {
        await queue.idle();
        await new Promise((r) => setImmediate(r));
      } while (!queue.isIdle());
      await warmup.idle();
    },

    pollState: () => {
      const nextDelayMs = poller.nextDelayMs;
      return { consecutiveFailures: refresher.consecutiveFailures, ...(nextDelayMs !== undefined ? { nextDelayMs } : {}) };
    },

    async close() {
      closed = true;
      gate.close();
      warmup.close();
      await poller.stop();
      // Backend work is abandoned, not awaited: closing the source first fails its requests in
      // flight (a hung Git server would otherwise hold the shutdown for its 30 s timeout), then
      // the builds that were waiting on them end; none swaps anything in once closed.
      await source.close?.();
      await queue.idle();
    },
  };
  return store;
}
