/**
 * Where authentication records live. Two implementations: SQLite (embedded, one instance) and
 * PostgreSQL (several replicas sharing one database). Every write is committed before the
 * returned promise resolves, so a record is durable before the HTTP response that reports it.
 */
import type { Authentication, Method } from '../types.js';

/**
 * A store's backend could not be reached, or did not answer within its bounds (a connection
 * refused, reset or timed out, a statement cancelled by its timeout, the server shutting down),
 * as opposed to a statement the backend refused. Retrying later may succeed. The cause stays for
 * the log: it may name hosts and ports, so it never reaches a client.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  constructor(cause: unknown) {
    super(`the authentication store is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export interface NewAuthentication {
  readonly id: string;
  readonly method: Method;
  /** base64url SHA-256 of the client token (see token.ts). */
  readonly hashedToken: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly expiresAt?: number;
  /** Who created it (src/auth/principal.ts); absent for the bootstrap token. */
  readonly createdBy?: string;
  /** Creation time (ms); also the first `updatedAt`. */
  readonly now: number;
}

export interface StoredAuthentication extends Authentication {
  readonly hashedToken: string;
}

export interface ListQuery {
  readonly method?: Method;
  /**
   * Only the records this principal may see without being an admin: those it created
   * (`createdBy`) and its own record (`id`). Absent: every record.
   */
  readonly ownedBy?: { readonly createdBy?: string; readonly id: string };
  readonly offset: number;
  readonly limit: number;
}

export interface CleanupRequest {
  readonly method: Method;
  /** Records whose `expiresAt` is before this (ms) are deleted. */
  readonly expiredBefore: number;
  /** Lease: no other cleanup of this method runs (on any replica) until this time (ms). */
  readonly holdUntil: number;
  readonly now: number;
  /** Who holds the lease (for operators reading the lock table). */
  readonly holder: string;
}

/** `expired`: the records deleted, for the audit trail (src/auth/audit.ts); `deleted` is their count. */
export type CleanupOutcome =
  | { ran: true; deleted: number; expired: readonly StoredAuthentication[] }
  | { ran: false; heldBy: string; until: number };

export interface AuthStore {
  /** `sqlite` or `postgres`, for logs. */
  readonly kind: string;
  create(a: NewAuthentication): Promise<StoredAuthentication>;
  /**
   * Creates `a` only when no record of its method exists yet, atomically across replicas
   * (the bootstrap token). Returns undefined when one already existed.
   */
  createIfMethodEmpty(a: NewAuthentication): Promise<StoredAuthentication | undefined>;
  getByHash(hashedToken: string): Promise<StoredAuthentication | undefined>;
  getById(id: string): Promise<StoredAuthentication | undefined>;
  /** Oldest first (creation time, then insertion order). */
  list(q: ListQuery): Promise<StoredAuthentication[]>;
  /** True when a record was deleted. */
  delete(id: string): Promise<boolean>;
  /** Sets `expiresAt` (and `updatedAt = now`); undefined when no such record. */
  setExpiry(id: string, expiresAt: number, now: number): Promise<StoredAuthentication | undefined>;
  /**
   * Deletes expired records of one method unless another cleanup of that method holds the lease;
   * at most one runs at a time across every process sharing the store.
   */
  cleanup(req: CleanupRequest): Promise<CleanupOutcome>;
  close(): Promise<void>;
}

/**
 * `store` with every method but `close` run through `around` (which calls `call()` once and
 * shapes its outcome); other properties read through. Whatever methods the interface gains, a
 * wrapper made this way passes them on.
 */
export function wrapMethods(store: AuthStore, around: (call: () => Promise<unknown>) => Promise<unknown>): AuthStore {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function' || prop === 'close') return value;
      let fn = wrapped.get(prop);
      if (fn === undefined) {
        const method = value as (...args: unknown[]) => Promise<unknown>;
        fn = (...args: unknown[]) => around(() => method.apply(target, args));
        wrapped.set(prop, fn);
      }
      return fn;
    },
  });
}
