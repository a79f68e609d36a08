/**
 * The change notifications' queue in PostgreSQL: the database of `authentication.storage.postgres`
 * that replicas share, its own tables (`notification_queue`, `notification_schema_version`),
 * migrated under a transaction-scoped advisory lock as the other stores are.
 *
 * Exactly one delivery per event across replicas: (sink, event_id) is unique, so an event queued
 * twice is one row; `claim` takes the oldest free row with `FOR UPDATE SKIP LOCKED` and marks it
 * claimed until a lease ends, so two replicas never take the same row; the one that took it marks
 * it delivered. A replica that dies holding a claim leaves it to the others once the lease ends.
 *
 * Bounds: every statement under the `authentication.storage.postgres` timeouts (postgres-pool.ts);
 * the queue of a sink within its size, finished rows within KEEP_FINISHED per sink.
 */
import pg from 'pg';
import { inTransaction, openPostgresPool, migratePostgres } from '../../auth/store/postgres-pool.js';
import { KEEP_FINISHED, type NotificationQueueStore, type QueuedDelivery } from './types.js';

/** The migration's advisory lock in the authentication store's bigint space ("vexil", then a purpose). */
const LOCK_MIGRATE = 0x7665_7869_6c00_0301n;

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE notification_queue (
     seq BIGSERIAL PRIMARY KEY,
     sink TEXT NOT NULL,
     event_id TEXT NOT NULL,
     delivery_id TEXT NOT NULL,
     body TEXT NOT NULL,
     queued_at BIGINT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     state TEXT NOT NULL DEFAULT 'queued',
     claimed_by TEXT,
     claimed_until BIGINT,
     finished_at BIGINT,
     UNIQUE (sink, event_id)
   );
   CREATE INDEX notification_queue_sink_state ON notification_queue (sink, state, seq);`,
];

interface Row {
  seq: string;
  sink: string;
  event_id: string;
  delivery_id: string;
  body: string;
  attempts: number;
}

const fromRow = (r: Row): QueuedDelivery => ({ seq: Number(r.seq), sink: r.sink, eventId: r.event_id, deliveryId: r.delivery_id, body: r.body, attempts: Number(r.attempts) });

export interface PostgresNotificationQueueOptions {
  readonly url: string;
  readonly connectTimeoutMs: number;
  readonly queryTimeoutMs: number;
  readonly poolWaitTimeoutMs: number;
}

export async function openPostgresNotificationQueue(opts: PostgresNotificationQueueOptions): Promise<NotificationQueueStore> {
  const pool = await openPostgresPool({ ...opts, maxConnections: 2 }, migrate);
  let closed = false;
  return {
    kind: 'postgres',
    async enqueue(d, at, maxQueued) {
      return inTransaction(pool, async (c) => {
        const r = await c.query(
          `INSERT INTO notification_queue (sink, event_id, delivery_id, body, queued_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (sink, event_id) DO NOTHING`,
          [d.sink, d.eventId, d.deliveryId, d.body, at],
        );
        if ((r.rowCount ?? 0) === 0) return { queued: false, dropped: 0 };
        const dropped = await c.query(
          `UPDATE notification_queue SET state = 'dropped', finished_at = $3 WHERE seq IN (
             SELECT seq FROM notification_queue WHERE sink = $1 AND state = 'queued' AND claimed_by IS NULL ORDER BY seq DESC OFFSET $2
             FOR UPDATE SKIP LOCKED)`,
          [d.sink, maxQueued, at],
        );
        return { queued: true, dropped: dropped.rowCount ?? 0 };
      });
    },
    async claim(sink, owner, now, leaseMs) {
      const r = await pool.query<Row>(
        `UPDATE notification_queue SET claimed_by = $2, claimed_until = $4 WHERE seq = (
           SELECT seq FROM notification_queue WHERE sink = $1 AND state = 'queued' AND (claimed_until IS NULL OR claimed_until < $3)
           ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING seq, sink, event_id, delivery_id, body, attempts`,
        [sink, owner, now, now + leaseMs],
      );
      return r.rows[0] !== undefined ? fromRow(r.rows[0]) : undefined;
    },
    async attempted(seq, attempts) {
      await pool.query('UPDATE notification_queue SET attempts = $1 WHERE seq = $2', [attempts, seq]);
    },
    async finish(seq, state, at, attempts) {
      await inTransaction(pool, async (c) => {
        const r = await c.query<{ sink: string }>(
          'UPDATE notification_queue SET state = $1, finished_at = $2, attempts = $3, claimed_by = NULL, claimed_until = NULL WHERE seq = $4 RETURNING sink',
          [state, at, attempts, seq],
        );
        const sink = r.rows[0]?.sink;
        if (sink === undefined) return;
        await c.query(
          `DELETE FROM notification_queue WHERE sink = $1 AND state <> 'queued' AND seq <= (
             SELECT seq FROM notification_queue WHERE sink = $1 AND state <> 'queued' ORDER BY seq DESC LIMIT 1 OFFSET $2)`,
          [sink, KEEP_FINISHED],
        );
      });
    },
    async release(owner) {
      if (closed) return;
      await pool.query(`UPDATE notification_queue SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1 AND state = 'queued'`, [owner]);
    },
    async pending(sink) {
      const r = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM notification_queue WHERE sink = $1 AND state = 'queued'`, [sink]);
      return Number(r.rows[0]?.n ?? 0);
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

function migrate(pool: pg.Pool): Promise<void> {
  return migratePostgres(pool, { versionTable: 'notification_schema_version', what: 'the notification tables', migrations: MIGRATIONS, lock: LOCK_MIGRATE });
}
