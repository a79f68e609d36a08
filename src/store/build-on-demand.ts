/**
 * Builds of a reference someone asked for: the default reference at start, and any reference a
 * request names that has no snapshot yet. One build per reference at a time: every request for it
 * shares that build's promise. Each runs in the build queue's demand lane (the poll lane at start,
 * so a first build goes before anything a request queued): it finds where the reference points
 * (locate), answers from the record when that revision was already rejected, else builds it
 * (build-revision.ts) and turns a failure into the refusal the request gets (refusals.ts).
 *
 * A reference not tracked yet comes with where admission found it (admission.ts) and must fit under
 * the caps first; the builds waiting here are what `maxPendingBuilds` counts.
 */
import type { Revision, Source } from '../sources/types.js';
import type { Snapshot } from '../model/snapshot.js';
import type { Admission, Located } from './admission.js';
import type { RevisionBuilder } from './build-revision.js';
import type { BuildQueue } from './build-queue.js';
import type { Listing } from './listing.js';
import type { GenerationalParseCache } from './parse-cache.js';
import type { RefTable } from './ref-table.js';
import { backendUnavailable, cannotServe, noValidState, unknownReference } from './refusals.js';
import type { StoreLogger } from './types.js';

export interface OnDemandBuilds {
  /**
   * Builds `ref` (or joins its build). `initial`: the first build at start, which throws what
   * failed as it is. `located`: where a request's admission found a reference not tracked yet.
   */
  build(ref: string, initial: boolean, located?: Located): Promise<Snapshot>;
  /** The build of `ref` waiting or running, if any. */
  pending(ref: string): Promise<Snapshot> | undefined;
  /** Every build waiting or running, by reference. */
  readonly waiting: ReadonlyMap<string, Promise<Snapshot>>;
}

export interface OnDemandBuildsOptions {
  readonly source: Source;
  readonly refs: RefTable;
  readonly listing: Listing;
  readonly admission: Admission;
  readonly builder: RevisionBuilder;
  readonly queue: BuildQueue;
  readonly parseCache: GenerationalParseCache;
  readonly logger: StoreLogger;
  /** Epoch ms now. */
  readonly nowMs: () => number;
  /** Retry-After of a backend refusal: until the next poll. */
  readonly retryAfterMs: () => number;
}

export function createOnDemandBuilds(opts: OnDemandBuildsOptions): OnDemandBuilds {
  const { source, refs, listing, admission, builder, queue, parseCache, logger, nowMs, retryAfterMs } = opts;
  const pendingBuilds = new Map<string, Promise<Snapshot>>();

  /**
   * Where `ref` points when its build starts. At start: a listing made now (the local copy when
   * the source is unreachable), else the source's lookup. Later (a tracked reference built again
   * on request): the latest listing, else the lookup of an unlisted name; never a new listing.
   */
  async function locate(ref: string, initial: boolean): Promise<Located> {
    if (!initial) {
      const listed = listing.known.get(ref);
      if (listed !== undefined) return { rev: listed, checkedAt: listing.knownAt };
      const found = admission.isUnlistedName(ref) ? await source.lookup?.(ref) : undefined;
      return found !== undefined ? { rev: found, pinned: true, checkedAt: nowMs() } : {};
    }
    let listed: Revision | undefined;
    try {
      listed = (await listing.fetch()).get(ref);
    } catch (err) {
      if (source.cachedRefs === undefined) throw err;
      // Restart while the backend is unreachable: serve the local copy, report the outage.
      const cached = (await source.cachedRefs().catch(() => undefined))?.get(ref);
      if (cached === undefined) throw err;
      builder.recordError(ref, err instanceof Error ? err.message : String(err));
      logger.warn({ reference: ref, revision: cached.id }, 'source unreachable at start; serving the local copy');
      return { rev: cached };
    }
    if (listed !== undefined) return { rev: listed, checkedAt: nowMs() };
    const found = await source.lookup?.(ref);
    return found !== undefined ? { rev: found, pinned: true, checkedAt: nowMs() } : {};
  }

  function build(ref: string, initial: boolean, located?: Located): Promise<Snapshot> {
    const pending = pendingBuilds.get(ref);
    if (pending !== undefined) return pending;
    if (located !== undefined) admission.checkCapacity(ref, pendingBuilds);
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
          throw backendUnavailable(ref, err, retryAfterMs());
        }
        const { rev, pinned, checkedAt } = where;
        if (rev === undefined) throw unknownReference(ref);
        const known = refs.get(ref);
        // Its commit was already rejected: answer from the report instead of reading it again.
        if (known?.lastRejected !== undefined && known.lastRejected.revision.id === rev.id) throw noValidState(ref, known);
        const lastError = known?.lastError;
        if (pinned === true) refs.stateOf(ref).pinned = true;
        const snap = await builder.build(ref, rev, initial, checkedAt);
        // Keep an outage noticed by locate() visible after the build from the local copy.
        if (snap !== undefined && lastError !== undefined && refs.get(ref)?.lastError === undefined && checkedAt === undefined) {
          refs.stateOf(ref).lastError = lastError;
        }
        if (snap !== undefined) return snap;
        throw cannotServe(ref, refs.get(ref), retryAfterMs());
      })
      .finally(() => pendingBuilds.delete(ref));
    pendingBuilds.set(ref, p);
    return p;
  }

  return {
    build,
    pending: (ref) => pendingBuilds.get(ref),
    waiting: pendingBuilds,
  };
}
