/**
 * When a reference missing from the source's listing counts as deleted. A listing that suddenly
 * lacks references is as often a backend fault (a repository path briefly unreadable, a server
 * answering an empty advertisement) as a deletion, and dropping a reference loses its last good
 * snapshot and the record of its rejected revision: rebuilt when it comes back, it would be built
 * at a tip already refused, with nothing to fall back on. So a reference is gone only once it is
 * absent from `listings` successful listings in a row spanning at least `graceMs`; seen again
 * before that, it was never away and keeps all it had.
 *
 * Bounds: one entry per tracked reference currently missing (refresh.ts forgets a reference it
 * drops for another reason). Pure bookkeeping: the caller passes the time and does the dropping.
 */
export interface RefAbsenceOptions {
  /** Successful listings in a row a reference must be absent from (at least 1). */
  readonly listings: number;
  /** And the time from the first of them to the last (ms, at least 0). */
  readonly graceMs: number;
}

/** What one listing means for one reference. */
export type Absence =
  | { readonly kind: 'present' }
  /** Missing, but not for long enough: keep it as it is. `first` is true at the first listing without it. */
  | { readonly kind: 'missing'; readonly listings: number; readonly sinceMs: number; readonly first: boolean }
  /** Missing from enough listings over the grace period: deleted. */
  | { readonly kind: 'gone'; readonly listings: number; readonly sinceMs: number };

/** A share of the references listed before that vanishing at once is logged as a likely backend fault. */
export interface Vanished {
  readonly names: readonly string[];
  readonly before: number;
}

export class RefAbsenceTracker {
  readonly #listings: number;
  readonly #graceMs: number;
  readonly #missing = new Map<string, { since: number; listings: number }>();

  constructor(opts: RefAbsenceOptions) {
    this.#listings = Math.max(1, Math.floor(opts.listings));
    this.#graceMs = Math.max(0, opts.graceMs);
  }

  /** Records one successful listing's verdict on `ref` (listed or not) at `at` (epoch ms). */
  note(ref: string, listed: boolean, at: number): Absence {
    if (listed) {
      this.#missing.delete(ref);
      return { kind: 'present' };
    }
    let m = this.#missing.get(ref);
    const first = m === undefined;
    if (m === undefined) {
      m = { since: at, listings: 0 };
      this.#missing.set(ref, m);
    }
    m.listings++;
    if (m.listings >= this.#listings && at - m.since >= this.#graceMs) {
      this.#missing.delete(ref);
      return { kind: 'gone', listings: m.listings, sinceMs: m.since };
    }
    return { kind: 'missing', listings: m.listings, sinceMs: m.since, first };
  }

  /** The reference is no longer tracked (dropped as idle, say): forget its absence. */
  forget(ref: string): void {
    this.#missing.delete(ref);
  }

  /** Epoch ms since when `ref` has been missing from the listings, if it is. */
  missingSince(ref: string): number | undefined {
    return this.#missing.get(ref)?.since;
  }
}

/**
 * The names of `before` that `now` lacks, when they are many at once: at least two, and more
 * than half of what was listed. A deletion of one branch is not reported; a listing that lost
 * most of them is.
 */
export function manyVanished(before: ReadonlySet<string>, now: ReadonlyMap<string, unknown>): Vanished | undefined {
  const names = [...before].filter((n) => !now.has(n));
  if (names.length < 2 || names.length * 2 <= before.size) return undefined;
  return { names, before: before.size };
}
