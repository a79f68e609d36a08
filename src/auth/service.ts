/**
 * The authentication core that routes and middleware share: token lookup (digest → cache →
 * store, constant-time re-check, expiry against the injected clock), creation, listing,
 * deletion and expiry of records. Knows nothing about HTTP.
 *
 * When the store is unavailable (store-health.ts), every call needing it is refused with the
 * one 503, except a token lookup whose record this process found within `outageGraceMs`: that
 * is decided from the cache as last known (its expiry against the clock; a delete or expiry made
 * through this process has evicted it already), and one background lookup at a time (at most
 * one a second) asks the store whether it is back.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { LookupCache, type CachedLookup } from './cache.js';
import { principalOf } from './principal.js';
import { StoreHealth, isStoreUnavailable, type StoreStatus } from './store-health.js';
import type { AuthStore, ListQuery, NewAuthentication, StoredAuthentication } from './store/types.js';
import { generateToken, hashToken, sameDigest, tokenKey } from './token.js';
import { systemClock, type Authentication, type Clock, type Method } from './types.js';

export type LookupResult =
  | { ok: true; authentication: Authentication }
  | { ok: false; reason: 'unknown token' | 'authorization expired' };

export interface CreateInput {
  method: Method;
  metadata: Readonly<Record<string, string>>;
  expiresAt?: number;
  /**
   * The creating principal (src/auth/principal.ts). Default: for a static token none (the
   * bootstrap token), for any other record the principal it stands for (a login creates itself).
   */
  createdBy?: string;
  /** A known token value (bootstrap.token); default: 32 random bytes. */
  token?: string;
}

export interface Created {
  clientToken: string;
  authentication: Authentication;
}

export type ShortenOutcome =
  | { ok: true; authentication: Authentication }
  | { ok: false; reason: 'unknown' }
  /** The record expires before the asked time (`expiresAt`, ms): left as it is. */
  | { ok: false; reason: 'later'; expiresAt: number };

export interface ListPage {
  authentications: Authentication[];
  nextPageToken: string;
}

/** Flipt's token listing: limit 0 → 25, at most 100. */
export const DEFAULT_LIST_LIMIT = 25;
export const MAX_LIST_LIMIT = 100;

export interface AuthServiceOptions {
  store: AuthStore;
  clock?: Clock;
  /** How long a found token stays in the in-memory lookup cache (0 = off). */
  cacheTtlMs: number;
  /**
   * While the store is unavailable, a cached token the store returned within this long is still
   * decided from the cache (0 = never; needs cacheTtlMs > 0).
   */
  outageGraceMs?: number;
  /** For the store outage warnings. */
  logger?: Logger;
}

/** The least time between two background lookups during a store outage (ms). */
const OUTAGE_PROBE_INTERVAL_MS = 1000;

function publicRecord(s: StoredAuthentication): Authentication {
  const { hashedToken: _omit, ...rest } = s;
  return rest;
}

export class AuthService {
  /** The store, reporting to the outage tracking (its unavailable failures are the 503). */
  readonly store: AuthStore;
  readonly clock: Clock;
  private readonly cache: LookupCache;
  private readonly health: StoreHealth;
  private probing = false;
  private lastProbe = -Infinity;

  constructor(opts: AuthServiceOptions) {
    this.clock = opts.clock ?? systemClock;
    const graceMs = opts.cacheTtlMs > 0 ? Math.max(0, opts.outageGraceMs ?? 0) : 0;
    this.health = new StoreHealth(
      this.clock,
      opts.logger,
      graceMs > 0 ? `tokens this process found in it within the last ${Math.round(graceMs / 1000)}s are still accepted` : '',
    );
    this.store = this.health.wrap(opts.store);
    this.cache = new LookupCache(opts.cacheTtlMs, this.clock, 10_000, graceMs);
  }

  /** Whether the store answered last time it was asked (for /ready and /metrics). */
  storeStatus(): StoreStatus {
    return this.health.status();
  }

  /**
   * The lookup when the token's record is in the cache, without a promise: the authenticated
   * request path then answers in the same turn as an open one. Undefined when the store must
   * be asked (lookup does).
   */
  lookupCached(token: string): LookupResult | undefined {
    return this.cachedDecision(tokenKey(token));
  }

  async lookup(token: string): Promise<LookupResult> {
    const key = tokenKey(token);
    const cached = this.cachedDecision(key);
    if (cached !== undefined) return cached;
    const epoch = this.cache.epoch;
    let record: StoredAuthentication | undefined;
    try {
      record = await this.store.getByHash(key);
    } catch (err) {
      // The outage shows here first: decide from what this process last knew, within the grace.
      const stale = isStoreUnavailable(err) ? this.cache.stale(key) : undefined;
      if (stale === undefined) throw err;
      return this.fromGrace(stale, key);
    }
    return this.found(key, record, epoch);
  }

  /** The decision when the cache can make it: a fresh entry, or (store unavailable) one within the grace. */
  private cachedDecision(key: string): LookupResult | undefined {
    const fresh = this.cache.get(key);
    if (fresh !== undefined) return this.check(fresh, key);
    if (this.health.available) return undefined;
    const stale = this.cache.stale(key);
    if (stale === undefined) return undefined;
    this.probe(key);
    return this.fromGrace(stale, key);
  }

  private fromGrace(stale: CachedLookup, key: string): LookupResult {
    const result = this.check(stale, key);
    if (result.ok) this.health.countGraceAcceptance();
    return result;
  }

  /** What the store returned for `key`: cached when found, forgotten when not. */
  private found(key: string, record: StoredAuthentication | undefined, epoch: number): LookupResult {
    if (!record) {
      this.cache.forget(key);
      return { ok: false, reason: 'unknown token' };
    }
    const found = { authentication: publicRecord(record), digest: Buffer.from(record.hashedToken, 'base64url') };
    this.cache.put(key, found, epoch);
    return this.check(found, key);
  }

  /** During an outage: one lookup at a time in the background, which ends the outage when it succeeds. */
  private probe(key: string): void {
    const now = this.clock();
    if (this.probing || now - this.lastProbe < OUTAGE_PROBE_INTERVAL_MS) return;
    this.probing = true;
    this.lastProbe = now;
    const epoch = this.cache.epoch;
    this.store.getByHash(key).then(
      (record) => {
        this.probing = false;
        this.found(key, record, epoch);
      },
      () => {
        this.probing = false;
      },
    );
  }

  /** The decision on a found record: its digest against the token's, in constant time, then expiry. */
  private check(found: CachedLookup, key: string): LookupResult {
    if (!sameDigest(found.digest, Buffer.from(key, 'base64url'))) return { ok: false, reason: 'unknown token' };
    const { expiresAt } = found.authentication;
    if (expiresAt !== undefined && expiresAt < this.clock()) return { ok: false, reason: 'authorization expired' };
    return { ok: true, authentication: found.authentication };
  }

  async create(input: CreateInput): Promise<Created> {
    const clientToken = input.token ?? generateToken();
    const stored = await this.store.create(this.newRecord(input, clientToken));
    return { clientToken, authentication: publicRecord(stored) };
  }

  /** Creates the record only when none of its method exists (bootstrap); undefined otherwise. */
  async createIfMethodEmpty(input: CreateInput): Promise<Created | undefined> {
    const clientToken = input.token ?? generateToken();
    const stored = await this.store.createIfMethodEmpty(this.newRecord(input, clientToken));
    return stored ? { clientToken, authentication: publicRecord(stored) } : undefined;
  }

  async get(id: string): Promise<Authentication | undefined> {
    const s = await this.store.getById(id);
    return s ? publicRecord(s) : undefined;
  }

  async list(q: { method?: Method; limit: number; offset: number; ownedBy?: ListQuery['ownedBy'] }): Promise<ListPage> {
    const limit = q.limit <= 0 ? DEFAULT_LIST_LIMIT : Math.min(q.limit, MAX_LIST_LIMIT);
    const rows = await this.store.list({
      ...(q.method ? { method: q.method } : {}),
      ...(q.ownedBy ? { ownedBy: q.ownedBy } : {}),
      offset: q.offset,
      limit: limit + 1,
    });
    const more = rows.length > limit;
    return {
      authentications: rows.slice(0, limit).map(publicRecord),
      nextPageToken: more ? String(q.offset + limit) : '',
    };
  }

  async delete(id: string): Promise<boolean> {
    try {
      return await this.store.delete(id);
    } finally {
      // After the commit: a lookup that read the row before it will not cache it (see
      // LookupCache.put). Also after a failure: the delete may have committed all the same.
      this.cache.evictId(id);
    }
  }

  /**
   * Sets a record's expiry, never later than the one it has: a credential can be shortened,
   * not extended (a cluster token thus never outlives its service-account token). A later time
   * leaves the record as it is.
   */
  async shorten(id: string, expiresAt: number): Promise<ShortenOutcome> {
    const current = await this.store.getById(id);
    if (current === undefined) return { ok: false, reason: 'unknown' };
    if (current.expiresAt !== undefined && expiresAt > current.expiresAt) return { ok: false, reason: 'later', expiresAt: current.expiresAt };
    const updated = await this.expire(id, expiresAt);
    return updated === undefined ? { ok: false, reason: 'unknown' } : { ok: true, authentication: updated };
  }

  async expire(id: string, expiresAt: number): Promise<Authentication | undefined> {
    try {
      const s = await this.store.setExpiry(id, expiresAt, this.clock());
      return s ? publicRecord(s) : undefined;
    } finally {
      this.cache.evictId(id);
    }
  }

  async close(): Promise<void> {
    this.cache.clear();
    await this.store.close();
  }

  private newRecord(input: CreateInput, clientToken: string): NewAuthentication {
    const now = this.clock();
    const record = {
      id: randomUUID(),
      method: input.method,
      hashedToken: hashToken(clientToken),
      metadata: { ...input.metadata },
      ...(input.expiresAt !== undefined ? { expiresAt: input.expiresAt } : {}),
      now,
    };
    // A login (session, cluster exchange) is made by the principal it stands for; a static token
    // by whoever asked for it (none for the bootstrap token).
    const createdBy =
      input.createdBy ?? (input.method === 'METHOD_TOKEN' ? undefined : principalOf({ ...record, createdAt: now, updatedAt: now }));
    return createdBy !== undefined ? { ...record, createdBy } : record;
  }
}
