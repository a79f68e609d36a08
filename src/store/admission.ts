/**
 * Admission: what a request naming a reference the store does not keep may cost. Anyone who may
 * evaluate can name any string, so every path to the backend is bounded:
 *
 * - a name found missing is remembered (name-set.ts, bounded; forgotten at the next poll) and
 *   answered 404 without asking the source again;
 * - a name the last listing lacks lists the source again, at most once a second for all requests
 *   (listing.ts);
 * - a full commit id the source does not list is looked up in passes: one queued job answers every
 *   name waiting when it runs, and at most MAX_WAITING_LOOKUPS names wait (503 beyond);
 * - a reference not kept yet is built only while fewer than `maxReferences` references built on
 *   request are kept and fewer than `maxPendingBuilds` builds wait (503 with Retry-After beyond,
 *   never a build).
 *
 * Owns the 404 memo and the lookup passes; the caps are checked against the ref table and the
 * builds waiting (build-on-demand.ts). The refusals' wording is refusals.ts's.
 */
import { VexilError } from '../errors.js';
import type { Revision, Source } from '../sources/types.js';
import type { BuildQueue } from './build-queue.js';
import type { Listing } from './listing.js';
import { BoundedNameSet } from './name-set.js';
import type { RefTable } from './ref-table.js';
import { backendUnavailable, commitIdsNotServed, tooManyLookups, tooManyPendingBuilds, tooManyReferences, unknownReference } from './refusals.js';

/** Names answered 404 remembered until the next poll, at most this many and this many characters (oldest forgotten first). */
const MAX_NOT_FOUND_NAMES = 10_000;
const MAX_NOT_FOUND_CHARS = 1_000_000;
/** Unlisted names (commit ids) waiting to be looked up at once; one more is a 503. */
const MAX_WAITING_LOOKUPS = 1000;

/** A full Git commit id: may be servable although no ref listing names it. */
const COMMIT_LIKE = /^[0-9a-f]{40}$/;

/** Where a reference points, as found for a build. */
export interface Located {
  readonly rev?: Revision;
  readonly pinned?: boolean;
  readonly checkedAt?: number;
}

export interface Admission {
  /**
   * Whether a request naming `ref` may cost anything (the reference is neither built nor being
   * built): a name found missing since the last poll is 404 at once; a name the last listing
   * lacks lists the source again (at most once per REFS_TTL_MS for all requests), an unlisted one
   * (commit id) is looked up in a batch; one still missing is remembered, then 404.
   */
  admit(ref: string): Promise<Located>;
  /**
   * A reference not tracked yet may be built when fewer than maxReferences references built on
   * request are kept (or being built, `pending`) and fewer than maxPendingBuilds builds wait. Else 503.
   */
  checkCapacity(ref: string, pending: ReadonlyMap<string, unknown>): void;
  /** A name the source does not list but may serve through `lookup` (a full commit id). */
  isUnlistedName(ref: string): boolean;
  /** A new look at the source: names not found before may exist now. */
  forgetNotFound(): void;
}

export interface AdmissionOptions {
  readonly source: Source;
  readonly refs: RefTable;
  readonly listing: Listing;
  /** Lookup passes run in its demand lane. */
  readonly queue: BuildQueue;
  readonly maxReferences: number;
  readonly maxPendingBuilds: number;
  /** Whether a name the source does not list but can look up (a Git commit id) may be served. */
  readonly allowUnlisted: boolean;
  readonly idleTtlMs: number;
  readonly pollIntervalMs?: number;
  /** Epoch ms now. */
  readonly nowMs: () => number;
  /** Retry-After of a backend refusal: until the next poll. */
  readonly retryAfterMs: () => number;
}

export function createAdmission(opts: AdmissionOptions): Admission {
  const { source, refs, listing, queue, maxReferences, maxPendingBuilds, allowUnlisted, idleTtlMs, nowMs, retryAfterMs } = opts;
  const notFoundNames = new BoundedNameSet(MAX_NOT_FOUND_NAMES, MAX_NOT_FOUND_CHARS);
  /** Unlisted names waiting for the next lookup pass, and every lookup not answered yet. */
  const waitingLookups = new Map<string, { resolve: (r: Revision | undefined) => void; reject: (err: unknown) => void }>();
  const lookupsInFlight = new Map<string, Promise<Revision | undefined>>();
  let lookupPassQueued = false;

  const isUnlistedName = (ref: string) => source.lookup !== undefined && COMMIT_LIKE.test(ref);

  async function admit(ref: string): Promise<Located> {
    if (notFoundNames.has(ref)) throw unknownReference(ref);
    const known = listing.known.get(ref);
    if (known !== undefined) return { rev: known, checkedAt: listing.knownAt };
    const unlisted = isUnlistedName(ref);
    if (unlisted && !allowUnlisted) throw commitIdsNotServed(ref);
    let listed: Map<string, Revision>;
    try {
      listed = await listing.recent();
    } catch (err) {
      throw backendUnavailable(ref, err, retryAfterMs());
    }
    const rev = listed.get(ref);
    if (rev !== undefined) return { rev, checkedAt: listing.knownAt };
    if (unlisted) {
      let found: Revision | undefined;
      try {
        found = await lookupUnlisted(ref);
      } catch (err) {
        if (err instanceof VexilError) throw err;
        throw backendUnavailable(ref, err, retryAfterMs());
      }
      if (found !== undefined) return { rev: found, pinned: true, checkedAt: nowMs() };
    }
    notFoundNames.add(ref);
    throw unknownReference(ref);
  }

  /**
   * Looks up unlisted names in passes: one queued job answers every name waiting when it runs, so
   * however many requests name commit ids, at most one lookup job waits in the queue.
   */
  function lookupUnlisted(name: string): Promise<Revision | undefined> {
    const inFlight = lookupsInFlight.get(name);
    if (inFlight !== undefined) return inFlight;
    if (lookupsInFlight.size >= MAX_WAITING_LOOKUPS) throw tooManyLookups(name);
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

  function checkCapacity(ref: string, pending: ReadonlyMap<string, unknown>): void {
    if (pending.size >= maxPendingBuilds) throw tooManyPendingBuilds(ref, maxPendingBuilds);
    if (refs.isPrebuilt(ref)) return;
    let kept = 0;
    let leastRecentUse = Number.POSITIVE_INFINITY;
    for (const [name, st] of refs.entries()) {
      if (refs.isPrebuilt(name)) continue;
      kept++;
      leastRecentUse = Math.min(leastRecentUse, st.lastUsedAt);
    }
    for (const name of pending.keys()) if (!refs.has(name) && !refs.isPrebuilt(name)) kept++;
    if (kept < maxReferences) return;
    // A slot frees when the least recently used one has been idle for idleTtlMs (seen at a poll).
    const untilIdle = Number.isFinite(leastRecentUse) ? leastRecentUse + idleTtlMs - nowMs() : 0;
    throw tooManyReferences(ref, maxReferences, Math.max(untilIdle, opts.pollIntervalMs ?? 0) / 1000);
  }

  return {
    admit,
    checkCapacity,
    isUnlistedName,
    forgetNotFound: () => notFoundNames.clear(),
  };
}
