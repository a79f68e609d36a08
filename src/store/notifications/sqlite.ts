/**
 * The change notifications' queue in SQLite: the same database file as the authentication store and
 * the history (`authentication.storage.sqlite.path`, default `<data_dir>/auth.db`), its own tables
 * (`notification_queue`, `notification_schema_version`). WAL with full fsync on commit
 * (sqlite-database.ts): a queued delivery is in the file when `enqueue` returns and survives
 * `kill -9`; a delivered one is marked so before the next is taken, so a restart neither loses
 * what was queued nor sends again what was delivered.
 *
 * Bounds: `enqueue` drops the oldest unclaimed deliveries of a sink beyond its queue size; finished
 * rows beyond KEEP_FINISHED per sink are pruned when one finishes.
 */
import type Database from 'better-sqlite3';
import { openSqliteDatabase, migrateSqlite } from '../../auth/store/sqlite-database.js';
import { KEEP_FINISHED, type NotificationQueueStore, type QueuedDelivery } from './types.js';

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE notification_queue (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     sink TEXT NOT NULL,
     event_id TEXT NOT NULL,
     delivery_id TEXT NOT NULL,
     body TEXT NOT NULL,
     queued_at INTEGER NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     state TEXT NOT NULL DEFAULT 'queued',
     claimed_by TEXT,
     claimed_until INTEGER,
     finished_at INTEGER,
     UNIQUE (sink, event_id)
   );
   CREATE INDEX notification_queue_sink_state ON notification_queue (sink, state, seq);`,
];

interface Row {
  seq: number;
  sink: string;
  event_id: string;
  delivery_id: string;
  body: string;
  attempts: number;
}

const fromRow = (r: Row): QueuedDelivery => ({ seq: Number(r.seq), sink: r.sink, eventId: r.event_id, deliveryId: r.delivery_id, body: r.body, attempts: Number(r.attempts) });

export function openSqliteNotificationQueue(opts: { readonly path: string }): NotificationQueueStore {
  const db = openSqliteDatabase(opts.path);
  try {
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  const insert = db.prepare(
    `INSERT INTO notification_queue (sink, event_id, delivery_id, body, queued_at) VALUES (@sink, @eventId, @deliveryId, @body, @at)
     ON CONFLICT (sink, event_id) DO NOTHING`,
  );
  const overflow = db.prepare<[string, number], { seq: number }>(
    `SELECT seq FROM notification_queue WHERE sink = ? AND state = 'queued' AND claimed_by IS NULL ORDER BY seq DESC LIMIT -1 OFFSET ?`,
  );
  const drop = db.prepare<[number, number]>(`UPDATE notification_queue SET state = 'dropped', finished_at = ? WHERE seq = ?`);
  const next = db.prepare<[string, number], Row>(
    `SELECT seq, sink, event_id, delivery_id, body, attempts FROM notification_queue
     WHERE sink = ? AND state = 'queued' AND (claimed_until IS NULL OR claimed_until < ?) ORDER BY seq LIMIT 1`,
  );
  const take = db.prepare<[string, number, number]>('UPDATE notification_queue SET claimed_by = ?, claimed_until = ? WHERE seq = ?');
  const attempted = db.prepare<[number, number]>('UPDATE notification_queue SET attempts = ? WHERE seq = ?');
  const finish = db.prepare<[string, number, number, number]>(
    'UPDATE notification_queue SET state = ?, finished_at = ?, attempts = ?, claimed_by = NULL, claimed_until = NULL WHERE seq = ?',
  );
  const sinkOf = db.prepare<[number], { sink: string }>('SELECT sink FROM notification_queue WHERE seq = ?');
  const prune = db.prepare<[string, string, number]>(
    `DELETE FROM notification_queue WHERE sink = ? AND state <> 'queued' AND seq <= (
       SELECT seq FROM notification_queue WHERE sink = ? AND state <> 'queued' ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
  );
  const release = db.prepare<[string]>(`UPDATE notification_queue SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ? AND state = 'queued'`);
  const pending = db.prepare<[string], { n: number }>(`SELECT count(*) AS n FROM notification_queue WHERE sink = ? AND state = 'queued'`);

  const enqueueTx = db.transaction((d: Omit<QueuedDelivery, 'seq' | 'attempts'>, at: number, maxQueued: number) => {
    const r = insert.run({ sink: d.sink, eventId: d.eventId, deliveryId: d.deliveryId, body: d.body, at });
    if (r.changes === 0) return { queued: false, dropped: 0 };
    const over = overflow.all(d.sink, maxQueued);
    for (const o of over) drop.run(at, o.seq);
    return { queued: true, dropped: over.length };
  });
  const claimTx = db.transaction((sink: string, owner: string, now: number, leaseMs: number) => {
    const r = next.get(sink, now);
    if (r === undefined) return undefined;
    take.run(owner, now + leaseMs, r.seq);
    return fromRow(r);
  });
  const finishTx = db.transaction((seq: number, state: string, at: number, attempts: number) => {
    finish.run(state, at, attempts, seq);
    const s = sinkOf.get(seq);
    if (s !== undefined) prune.run(s.sink, s.sink, KEEP_FINISHED);
  });

  let closed = false;
  return {
    kind: 'sqlite',
    async enqueue(d, at, maxQueued) {
      return enqueueTx.immediate(d, at, maxQueued);
    },
    async claim(sink, owner, now, leaseMs) {
      return claimTx.immediate(sink, owner, now, leaseMs);
    },
    async attempted(seq, attempts) {
      attempted.run(attempts, seq);
    },
    async finish(seq, state, at, attempts) {
      finishTx.immediate(seq, state, at, attempts);
    },
    async release(owner) {
      if (!closed) release.run(owner);
    },
    async pending(sink) {
      return Number(pending.get(sink)?.n ?? 0);
    },
    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

function migrate(db: Database.Database): void {
  migrateSqlite(db, { versionTable: 'notification_schema_version', what: 'the notification tables', migrations: MIGRATIONS });
}
