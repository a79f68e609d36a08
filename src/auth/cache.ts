/**
 * In-memory cache of token lookups, keyed by the token digest, so a request with a known token
 * needs no database round trip. Entries live `ttlMs` (0 = no caching); only found records are
 * cached. A delete or expiry made through this process evicts at once; one made on another
 * replica is seen here within `ttlMs`. Expiry itself is checked on every request against the
 * clock, cached or not.
 *
 * With `graceMs` (the store outage grace), an entry past `ttlMs` is kept until `graceMs` after the
 * store last confirmed it, for `stale()`: the service accepts it from there only while the store
 * cannot be asked. An entry the store no longer has (`forget`) or one evicted by id never serves.
 */
import type { Authentication, Clock } from './types.js';

export interface CachedLookup {
  readonly authentication: Authentication;
  /** The stored SHA-256 digest, for the constant-time comparison. */
  readonly digest: Buffer;
}

interface Entry {
  readonly value: CachedLookup;
  /** When the store last returned this record (ms). */
  readonly confirmedAt: number;
}

export class LookupCache {
  private readonly byDigest = new Map<string, Entry>();
  private readonly digestById = new Map<string, string>();
  /** Bumped by every eviction: a lookup that read the store before one must not cache what it read. */
  private evictions = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly clock: Clock,
    /** Oldest entries are dropped beyond this many. */
    private readonly maxEntries = 10_000,
    /** How long after its confirmation an entry may still serve `stale()` (0 = never). */
    private readonly graceMs = 0,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  /** The entry while it is younger than `ttlMs`. */
  get(key: string): CachedLookup | undefined {
    return this.within(key, this.ttlMs);
  }

  /** The entry while it is younger than `graceMs` (for when the store cannot be asked). */
  stale(key: string): CachedLookup | undefined {
    return this.graceMs > 0 ? this.within(key, this.graceMs) : undefined;
  }

  /** The store has no record for `key` (any more): its entry goes. */
  forget(key: string): void {
    const e = this.byDigest.get(key);
    if (e) this.drop(key, e.value.authentication.id);
  }

  /** Pass to put(): taken before reading the store. */
  get epoch(): number {
    return this.evictions;
  }

  /** Caches `value` unless an eviction happened since `epoch` (the read may predate a delete). */
  put(key: string, value: CachedLookup, epoch: number): void {
    if (!this.enabled || epoch !== this.evictions) return;
    this.byDigest.delete(key);
    this.byDigest.set(key, { value, confirmedAt: this.clock() });
    this.digestById.set(value.authentication.id, key);
    while (this.byDigest.size > this.maxEntries) {
      const [oldest, entry] = this.byDigest.entries().next().value as [string, Entry];
      this.drop(oldest, entry.value.authentication.id);
    }
  }

  evictId(id: string): void {
    this.evictions++;
    const key = this.digestById.get(id);
    if (key !== undefined) this.drop(key, id);
  }

  clear(): void {
    this.byDigest.clear();
    this.digestById.clear();
  }

  get size(): number {
    return this.byDigest.size;
  }

  private within(key: string, ageMs: number): CachedLookup | undefined {
    const e = this.byDigest.get(key);
    if (!e) return undefined;
    const age = this.clock() - e.confirmedAt;
    if (age < ageMs) return e.value;
    // Past every use: gone (an entry still inside the grace stays for stale()).
    if (age >= Math.max(this.ttlMs, this.graceMs)) this.drop(key, e.value.authentication.id);
    return undefined;
  }

  private drop(key: string, id: string): void {
    this.byDigest.delete(key);
    if (this.digestById.get(id) === key) this.digestById.delete(id);
  }
}
