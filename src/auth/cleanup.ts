/**
 * Deleting expired authentications (interface §5.4, reference §2.15): one loop per enabled method
 * that stores records. Each pass asks the store to delete records whose `expiresAt` is more than
 * `grace_period` ago; the store runs it only when no other replica holds the method's cleanup
 * lease, and then holds it for `interval`. Records without expiry are never deleted. Each deleted
 * record is an `io.vexil.auth.expired` audit event (src/auth/audit.ts), written by the one replica
 * that ran the pass.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AUDIT_TYPES, type AuditTrail } from './audit.js';
import type { AuthStore, CleanupOutcome } from './store/types.js';
import type { Clock, Method } from './types.js';

export interface CleanupSchedule {
  method: Method;
  /** ms */
  interval: number;
  /** ms */
  gracePeriod: number;
}

/** This process, as it appears in the lock table. */
export const CLEANUP_HOLDER = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;

/** setTimeout fires at once for anything longer (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface CleanupDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly audit: AuditTrail;
}

/** One pass for one method, at the clock's current time. */
export async function runCleanup(store: AuthStore, schedule: CleanupSchedule, deps: CleanupDeps, holder = CLEANUP_HOLDER): Promise<CleanupOutcome> {
  const { clock, logger } = deps;
  const now = clock();
  const expiredBefore = now - schedule.gracePeriod;
  const outcome = await store.cleanup({ method: schedule.method, expiredBefore, holdUntil: now + schedule.interval, now, holder });
  if (outcome.ran) {
    logger.info(
      { method: schedule.method, expired_before: new Date(expiredBefore).toISOString(), deleted: outcome.deleted },
      'cleanup process deleting authentications',
    );
    for (const record of outcome.expired) deps.audit.record({ type: AUDIT_TYPES.expired, subject: record, origin: 'cleanup' });
  } else {
    logger.debug({ method: schedule.method, heldBy: outcome.heldBy }, 'cleanup skipped: another replica holds the lease');
  }
  return outcome;
}

export interface Cleaner {
  /** Resolves when the pass under way (if any) has finished; no pass starts afterwards. */
  stop(): Promise<void>;
}

/** Runs a pass for each schedule at once, then every `interval` (timers do not keep the process alive). */
export function startCleanup(store: AuthStore, schedules: readonly CleanupSchedule[], deps: CleanupDeps): Cleaner {
  const { logger } = deps;
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<unknown>>();
  let stopped = false;

  const pass = (s: CleanupSchedule) => {
    if (stopped) return;
    const p = runCleanup(store, s, deps)
      .catch((err: unknown) => logger.error({ err, method: s.method }, 'authentication cleanup failed'))
      .finally(() => {
        running.delete(p);
        if (stopped) return;
        const t = setTimeout(() => {
          timers.delete(t);
          pass(s);
        }, Math.min(s.interval, MAX_TIMER_MS));
        t.unref();
        timers.add(t);
      });
    running.add(p);
  };
  for (const s of schedules) pass(s);

  return {
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await Promise.all([...running]);
    },
  };
}
