/**
 * Refresh: one look at the source and what follows from it. List the references; drop those idle
 * for `idleTtlMs` and those deleted (gone from the listing for the removal grace, ref-absence.ts;
 * a listing that loses most names at once is logged as a likely backend fault); then build each
 * tracked reference whose revision moved (the default one, the prebuilt ones, those built on
 * request; pinned commits never move), prefetching them together when the source can. A revision
 * already served or already rejected is not read again. Refreshes are queued in the build queue's
 * poll lane and coalesce: asking while one waits joins it. A refresh of named references (a push
 * webhook names the branch it moved) lists the source as any refresh does but rebuilds only those.
 *
 * Owns the poll generation (a failed on-demand build is retried once it moves), the failures in a
 * row (the poller backs off on them), the last listing's names and the absence tracker. When a
 * refresh runs is the poller's business (poller.ts).
 */
import type { Revision, Source } from '../sources/types.js';
import type { Admission } from './admission.js';
import type { RevisionBuilder } from './build-revision.js';
import type { BuildQueue } from './build-queue.js';
import type { OnDemandBuilds } from './build-on-demand.js';
import type { Listing } from './listing.js';
import type { GenerationalParseCache } from './parse-cache.js';
import { manyVanished, RefAbsenceTracker, type RefAbsenceOptions } from './ref-absence.js';
import type { RefTable } from './ref-table.js';
import type { StoreEvent, StoreLogger } from './types.js';

export interface Refresh {
  /** Queues one refresh in the poll lane (joins one already waiting); resolves when it has run. */
  refresh(): Promise<void>;
  /** Runs a refresh now (the caller holds the build queue). `listing`: reuse a listing just made (right after start). */
  refreshNow(listing?: Map<string, Revision>): Promise<void>;
  /** Queues one refresh in the poll lane that rebuilds only `names` (tracked ones; others are ignored). */
  refreshReferences(names: ReadonlySet<string>): Promise<void>;
  /** Refreshes started so far. */
  readonly polls: number;
  /** Refreshes in a row that failed to list or to read a reference. */
  readonly consecutiveFailures: number;
}

export interface RefreshOptions {
  readonly source: Source;
  readonly refs: RefTable;
  readonly listing: Listing;
  readonly admission: Admission;
  readonly builder: RevisionBuilder;
  readonly onDemand: OnDemandBuilds;
  readonly queue: BuildQueue;
  readonly parseCache: GenerationalParseCache;
  readonly logger: StoreLogger;
  readonly emit: (e: StoreEvent) => void;
  /** Whether the source is polled (then `checkedAt` is recorded). */
  readonly polled: boolean;
  readonly idleTtlMs: number;
  readonly referenceRemoval: RefAbsenceOptions;
  readonly isClosed: () => boolean;
  /** Epoch ms now. */
  readonly nowMs: () => number;
}

export function createRefresh(opts: RefreshOptions): Refresh {
  const { source, refs, listing, admission, builder, onDemand, queue, parseCache, logger, emit, polled, idleTtlMs, isClosed, nowMs } = opts;
  const { defaultReference } = refs;
  const absence = new RefAbsenceTracker(opts.referenceRemoval);
  /** The names the last successful poll listed (a listing that loses most of them is reported). */
  let lastPolled: ReadonlySet<string> | undefined;
  let consecutiveFailures = 0;
  /** Polls started so far: a failed on-demand build is tried again once this moves. */
  let polls = 0;
  let queuedRefresh: Promise<void> | undefined;

  /** `only`: check and rebuild these references alone (listed and idle ones evicted as in any refresh). */
  async function refreshNow(given?: Map<string, Revision>, only?: ReadonlySet<string>): Promise<void> {
    if (isClosed()) return;
    parseCache.nextGeneration();
    polls++;
    let current: Map<string, Revision>;
    try {
      current = given ?? (await listing.fetch());
    } catch (err) {
      consecutiveFailures++;
      builder.recordError(defaultReference, err instanceof Error ? err.message : String(err));
      return;
    }
    // A new look at the source: names not found before may exist now.
    admission.forgetNotFound();
    const checkedAt = nowMs();
    let failed = false;
    evictIdle(checkedAt);
    const vanished = lastPolled !== undefined ? manyVanished(lastPolled, current) : undefined;
    if (vanished !== undefined) {
      logger.warn(
        { vanished: vanished.names.length, listedBefore: vanished.before, listedNow: current.size, references: vanished.names.slice(0, 20) },
        'many references vanished from the listing at once (a backend fault more likely than deletions): each is kept until it stays unlisted for the removal grace',
      );
    }
    lastPolled = new Set(current.keys());

    const tracked = new Set([defaultReference, ...refs.names()]);
    for (const ref of current.keys()) if (refs.isPrebuilt(ref)) tracked.add(ref);
    if (only !== undefined) for (const ref of tracked) if (!only.has(ref)) tracked.delete(ref);
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
          builder.recordError(ref, `reference "${ref}" not found`);
        } else if (st !== undefined) {
          const seen = absence.note(ref, false, checkedAt);
          if (seen.kind === 'gone') {
            drop(ref); // the branch is gone: stop serving it
            logger.info({ reference: ref, unlistedPolls: seen.listings, unlistedMs: checkedAt - seen.sinceMs }, 'reference no longer exists; dropped');
          } else if (seen.kind === 'missing' && seen.first) {
            logger.info({ reference: ref }, 'reference missing from the listing; kept with its last good state until it stays unlisted for the removal grace');
          }
        }
        continue;
      }
      const missingSince = absence.missingSince(ref);
      if (missingSince !== undefined) {
        absence.note(ref, true, checkedAt);
        logger.info({ reference: ref, unlistedMs: checkedAt - missingSince }, 'reference listed again; its last good state was kept');
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
        for (const [ref] of todo) builder.recordError(ref, message);
        consecutiveFailures++;
        return;
      }
    }
    for (const [ref, rev] of todo) {
      if (isClosed()) return;
      await builder.build(ref, rev, false, checkedAt);
      if (refs.get(ref)?.lastError !== undefined) failed = true;
    }
    consecutiveFailures = failed ? consecutiveFailures + 1 : 0;
    parseCache.sweep();
  }

  function drop(ref: string): void {
    refs.delete(ref);
    absence.forget(ref);
    emit({ type: 'dropped', reference: ref });
  }

  /** Drops references built on request that nobody asked for in `idleTtlMs`. */
  function evictIdle(at: number): void {
    for (const [ref, st] of refs.entries()) {
      if (refs.isPrebuilt(ref) || onDemand.pending(ref) !== undefined) continue;
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

  return {
    refresh,
    refreshNow,
    refreshReferences: (names) => queue.run('poll', () => refreshNow(undefined, names)),
    get polls() {
      return polls;
    },
    get consecutiveFailures() {
      return consecutiveFailures;
    },
  };
}
