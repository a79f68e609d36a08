/**
 * The store's view of the source's listing (`source.refs()`: which references exist and where they
 * point): the last one received and when, and the last failure to get one. Concurrent asks share
 * one call to the source. A poll always asks anew (`fetch`); a request naming a reference the last
 * listing lacks asks through `recent`, which lists the source on requests' behalf at most once per
 * REFS_TTL_MS, a failure standing as long, so a flood of made-up names costs at most one listing a
 * second.
 *
 * Bounds: one listing kept (the source's size), one call in flight. No timers.
 */
import type { Revision, Source } from '../sources/types.js';

/**
 * How long a refs() answer (or a failure to get one) stands for a request naming a reference the
 * listing lacks: the source is listed on requests' behalf at most this often.
 */
export const REFS_TTL_MS = 1000;

export interface Listing {
  /** The last listing received (empty before the first). */
  readonly known: Map<string, Revision>;
  /** Epoch ms it was received (0 before the first). */
  readonly knownAt: number;
  /** Lists the source now (joins a listing in flight). */
  fetch(): Promise<Map<string, Revision>>;
  /** The last listing when younger than REFS_TTL_MS, else a new one (shared); a failure stands as long. */
  recent(): Promise<Map<string, Revision>>;
}

export interface ListingOptions {
  readonly source: Source;
  /** Epoch ms now. */
  readonly nowMs: () => number;
}

export function createListing(opts: ListingOptions): Listing {
  const { source, nowMs } = opts;
  let knownRefs = new Map<string, Revision>();
  let knownRefsAt = 0;
  /** The last failed listing: when, and why. */
  let listingFailure: { at: number; err: unknown } | undefined;
  let refsInFlight: Promise<Map<string, Revision>> | undefined;

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

  async function recentListing(): Promise<Map<string, Revision>> {
    const at = nowMs();
    if (at - knownRefsAt < REFS_TTL_MS) return knownRefs;
    if (listingFailure !== undefined && at - listingFailure.at < REFS_TTL_MS) throw listingFailure.err;
    return fetchRefs();
  }

  return {
    get known() {
      return knownRefs;
    },
    get knownAt() {
      return knownRefsAt;
    },
    fetch: fetchRefs,
    recent: recentListing,
  };
}
