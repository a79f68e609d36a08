/**
 * Whether the authentication store is answering, as this process last saw it: every store call
 * goes through `wrap`, a StoreUnavailableError marks the store unavailable (logged once per
 * outage, at warn) and becomes the one 503 refusal (src/errors.ts `authStoreUnavailable`), a
 * success of a call started during the outage marks it available again (logged at info). A call
 * that started before the outage began and succeeded after it does not end the outage.
 * Also counts the tokens accepted from the cache during an outage (AuthService decides those).
 * /ready and /metrics read `status()`.
 */
import type { Logger } from 'pino';
import { VexilError, authStoreUnavailable } from '../errors.js';
import { StoreUnavailableError, wrapMethods, type AuthStore } from './store/types.js';
import type { Clock } from './types.js';

/** Retry-After (seconds) of the 503: a database restart or failover is seconds, not minutes. */
export const AUTH_STORE_RETRY_AFTER_SECONDS = 5;

export interface StoreStatus {
  readonly available: boolean;
  /** When this outage was first seen (ms); only while unavailable. */
  readonly since?: number;
  /** Tokens accepted from the lookup cache while the store was unavailable (since start). */
  readonly graceAccepted: number;
}

/** True for the refusal `wrap` throws when the store is unavailable. */
export function isStoreUnavailable(err: unknown): boolean {
  return err instanceof VexilError && err.cause instanceof StoreUnavailableError;
}

export class StoreHealth {
  private since: number | undefined;
  /** Bumped when an outage begins: a call that started before it cannot end it. */
  private outages = 0;
  private accepted = 0;

  constructor(
    private readonly clock: Clock,
    private readonly logger?: Logger,
    /** What the warning says about the cache, e.g. "tokens found within 5m are accepted". */
    private readonly graceNote = '',
  ) {}

  get available(): boolean {
    return this.since === undefined;
  }

  status(): StoreStatus {
    return this.since === undefined
      ? { available: true, graceAccepted: this.accepted }
      : { available: false, since: this.since, graceAccepted: this.accepted };
  }

  /** A token accepted from the cache because the store could not be asked. */
  countGraceAcceptance(): void {
    this.accepted++;
  }

  /** `store` with each call (close excepted) reporting here; an unavailable store's rejection becomes the 503. */
  wrap(store: AuthStore): AuthStore {
    return wrapMethods(store, (call) => {
      const outage = this.outages;
      return call().then(
        (result) => {
          if (outage === this.outages) this.up();
          return result;
        },
        (err: unknown) => {
          if (!(err instanceof StoreUnavailableError)) throw err;
          this.down(err);
          throw authStoreUnavailable(AUTH_STORE_RETRY_AFTER_SECONDS, err);
        },
      );
    });
  }

  private down(err: StoreUnavailableError): void {
    if (this.since !== undefined) return;
    this.since = this.clock();
    this.outages++;
    this.logger?.warn(
      { err: err.cause },
      `authentication store unavailable: requests that need it answer 503 until it is back${this.graceNote === '' ? '' : `; ${this.graceNote}`}`,
    );
  }

  private up(): void {
    if (this.since === undefined) return;
    const downForMs = Math.max(0, this.clock() - this.since);
    this.since = undefined;
    this.logger?.info({ downForMs }, 'authentication store available again');
  }
}
