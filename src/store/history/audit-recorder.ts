/**
 * What `vexil serve` subscribes to the audit trail (AuditTrail.onEvent, src/auth/audit.ts): each
 * audit event is kept in the history store, beside the served revisions. The write starts when the
 * event is recorded and is not awaited by anyone on the request path: the request that made the
 * change is answered whether or not the store took the event. A store that fails (PostgreSQL out of
 * reach, a full disk) costs the event's row, never a request: the failure is logged with the event's
 * id and type (the event itself is already in the log as its `audit` line).
 *
 * Scope: as the served history's (from-config.ts): `cluster` when replicas coordinate, else this
 * replica's instance id. Unlike revisions, every replica records its own audit events, followers
 * too: each event happened on one replica only and has an id of its own, so nothing is recorded
 * twice; an event handed to the store twice is one row (the store keys it by id).
 *
 * `settled()` waits for the writes under way, so a shutdown closes the store after them.
 */
import type { AuditEvent } from '../../auth/audit.js';
import type { StoreLogger } from '../types.js';
import type { HistoryRetention, HistoryStore } from './types.js';

export interface AuditRecorder {
  /** The AuditTrail listener: starts the write and returns at once. */
  readonly record: (event: AuditEvent) => void;
  /** Resolves when every write started so far has ended (written, or failed and logged). */
  settled(): Promise<void>;
}

export interface AuditRecorderOptions {
  readonly store: HistoryStore;
  /** CLUSTER_SCOPE when replicas coordinate, else this replica's instance id. */
  readonly scope: string;
  readonly retention: HistoryRetention;
  readonly logger: StoreLogger;
}

export function createAuditRecorder(opts: AuditRecorderOptions): AuditRecorder {
  const { store, scope, retention, logger } = opts;
  const pending = new Set<Promise<void>>();

  const record = (event: AuditEvent): void => {
    const write = (async () => {
      try {
        await store.recordAudit(scope, event, retention);
      } catch (err) {
        logger.error(
          { auditId: event.id, type: event.type, err: err instanceof Error ? err.message : String(err) },
          'keeping the audit event in the history store failed; the change stands',
        );
      }
    })();
    pending.add(write);
    void write.finally(() => pending.delete(write));
  };

  return {
    record,
    async settled() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}
