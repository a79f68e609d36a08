/**
 * A stream outlives the authentication check its request passed: the token may be deleted or
 * expire while the connection stays open. A stream opened with a checked credential keeps what
 * the request presented and runs the same decision again (the auth gate of src/auth/middleware.ts,
 * namespace scope included) before each event and heartbeat, and at the moment the credential stops
 * being accepted (its expiry; a JWT's expiry plus the leeway), never sooner than
 * EXPIRY_RECHECK_FLOOR_MS after the previous such re-check. A lookup is a cache hit in the auth
 * service (auth.cache_ttl) or the JWT method's verified-token cache, so this costs a hash and a
 * map lookup; a token deleted through this process is evicted from that cache at once, one deleted through
 * another replica or worker is seen within cache_ttl.
 */
import { authRequestOf, type AuthGate } from '../../auth/middleware.js';
import { acceptedUntil, type Authentication, type Clock } from '../../auth/types.js';
import type { AppContext } from '../../http/context.js';

export interface StreamAuthentication {
  /** Resolves with the authentication that still passes (undefined: none needed now); rejects when refused. */
  check(): Promise<Authentication | undefined>;
  /**
   * When the credential presented at the start stops being accepted (epoch ms on the auth clock):
   * its expiry, or a JWT's expiry plus the leeway.
   */
  readonly expiresAt: number | undefined;
  /** The auth service's clock, which expiry is measured against. */
  readonly clock: Clock;
}

/**
 * The re-check of a stream's request, or undefined when the request passed without presenting a
 * credential that was checked (an open server, `exclude.evaluation`): then there is nothing that
 * could be revoked.
 */
export function streamAuthentication(ctx: AppContext, gate: AuthGate | undefined, clock: Clock): StreamAuthentication | undefined {
  const initial = ctx.state.authentication;
  if (initial === undefined || gate === undefined) return undefined;
  // The stream paths take their namespace from the path: no gate reads a body for them.
  const request = authRequestOf(ctx);
  return {
    async check() {
      return await gate(request);
    },
    expiresAt: acceptedUntil(initial),
    clock,
  };
}

/** setTimeout's longest delay (about 24.8 days); a later expiry is looked at again then. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Least time between two re-checks made for the credential's expiry: one that still passes at the
 * moment the credential should stop being accepted (another process's or the auth clock's view of
 * time) is looked at again this much later, not in a loop.
 */
export const EXPIRY_RECHECK_FLOOR_MS = 1000;
