/**
 * The served-revision history and the audit events in PostgreSQL: the database of
 * `authentication.storage.postgres` (replicas share it), its own tables (`history_events`,
 * `audit_events`, `history_schema_version`) and migrations under a transaction-scoped advisory
 * lock, as the authentication store does. An audit event is one row by its id (`ON CONFLICT DO
 * NOTHING`): replicas each record their own events, and one recorded twice is written once.
 *
 * Recorded once per cluster: `record` takes a transaction-scoped advisory lock per scope and
 * reference, reads the latest entry and writes only when it is not already the same event, so two
 * replicas recording the same swap (a leader handing over, replicas restarting) write one row.
 *
 * Bounds: connecting, waiting for a pooled connection and each statement are limited (the
 * `authentication.storage.postgres` timeouts); a failure rejects, nothing is retried here (the
 * store logs it and serves on).
 */
import pg from 'pg';
import { inTransaction, openPostgresPool, migratePostgres } from '../../auth/store/postgres-pool.js';
import { AUDIT_COLUMNS, auditRow, fromAuditRow, type RawAuditRow } from './audit-rows.js';
import { HISTORY_COLUMNS, cut, fromRow, problemsColumn, type RawHistoryRow } from './rows.js';
import type { HistoryStore } from './types.js';

/** Advisory lock keys: the migration's in the authentication store's bigint space ("vexil", then a purpose). */
const LOCK_MIGRATE = 0x7665_7869_6c00_0201n;
/** The record lock's first key (two-int space: then the hash of scope and reference); "vh" + a purpose. */
const LOCK_RECORD = 0x7668_0202;

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE history_events (
     seq BIGSERIAL PRIMARY KEY,
     scope TEXT NOT NULL,
     kind TEXT NOT NULL,
     reference TEXT NOT NULL,
     revision TEXT NOT NULL,
     author TEXT,
     message TEXT,
     committed_at TEXT,
     at TIMESTAMPTZ NOT NULL,
     until TIMESTAMPTZ,
     replaced_by TEXT,
     problems TEXT,
     problem_count INTEGER
   );
   CREATE INDEX history_events_reference_at ON history_events (scope, reference, at, seq);
   CREATE INDEX history_events_scope_seq ON history_events (scope, seq);`,
  // 2: audit events (src/auth/audit.ts); `id` unique, so an event recorded twice is one row.
  `CREATE TABLE audit_events (
     seq BIGSERIAL PRIMARY KEY,
     id TEXT NOT NULL UNIQUE,
     scope TEXT NOT NULL,
     type TEXT NOT NULL,
     at TIMESTAMPTZ NOT NULL,
     subject_id TEXT NOT NULL,
     actor_id TEXT,
     subject TEXT NOT NULL,
     actor TEXT,
     address TEXT,
     origin TEXT
   );
   CREATE INDEX audit_events_scope_at ON audit_events (scope, at, seq);
   CREATE INDEX audit_events_scope_seq ON audit_events (scope, seq);
   CREATE INDEX audit_events_subject ON audit_events (scope, subject_id, at, seq);
   CREATE INDEX audit_events_actor ON audit_events (scope, actor_id, at, seq);`,
];

export interface PostgresHistoryStoreOptions {
  readonly url: string;
  readonly maxConnections?: number;
  readonly connectTimeoutMs: number;
  readonly queryTimeoutMs: number;
  readonly poolWaitTimeoutMs: number;
}


// TIMESTAMPTZ columns read as epoch ms, so both stores decode the same way.
const SELECT = HISTORY_COLUMNS.replace(/\bat\b/, '(extract(epoch from at) * 1000)::float8 AS at').replace(
  /\buntil\b/,
  '(extract(epoch from until) * 1000)::float8 AS until',
);
const SELECT_AUDIT = AUDIT_COLUMNS.replace(/\bat\b/, '(extract(epoch from at) * 1000)::float8 AS at');

export async function openPostgresHistoryStore(opts: PostgresHistoryStoreOptions): Promise<HistoryStore> {
  const pool = await openPostgresPool({ ...opts, maxConnections: opts.maxConnections ?? 4 }, migrate);

  const OPEN = `(kind = 'served' AND until IS NULL)`;
  let closed = false;
  return {
    kind: 'postgres',
    async record(scope, e, retention) {
      return inTransaction(pool, async (c) => {
        await c.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [LOCK_RECORD, `${scope}\n${e.reference}`]);
        const latest = await c.query<RawHistoryRow>(
          `SELECT ${SELECT} FROM history_events WHERE scope = $1 AND reference = $2 AND kind = 'served' ORDER BY at DESC, seq DESC LIMIT 1`,
          [scope, e.reference],
        );
        const served = latest.rows[0] !== undefined ? fromRow(latest.rows[0]) : undefined;
        if (e.kind === 'served') {
          if (served !== undefined && served.revision === e.revision && served.until === undefined) return false;
          if (served !== undefined && served.until === undefined) {
            await c.query('UPDATE history_events SET until = $1, replaced_by = $2 WHERE seq = $3', [new Date(e.at), e.revision, served.seq]);
          }
        } else {
          const seen = await c.query(
            `SELECT 1 FROM history_events WHERE scope = $1 AND reference = $2 AND kind = 'rejected' AND revision = $3 AND at >= $4 LIMIT 1`,
            [scope, e.reference, e.revision, new Date(served?.at ?? 0)],
          );
          if ((seen.rowCount ?? 0) > 0) return false;
        }
        await c.query(
          `INSERT INTO history_events (scope, kind, reference, revision, author, message, committed_at, at, problems, problem_count)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [scope, e.kind, e.reference, e.revision, cut(e.author), cut(e.message), e.committedAt ?? null, new Date(e.at), problemsColumn(e), e.problemCount ?? null],
        );
        await c.query(`DELETE FROM history_events WHERE scope = $1 AND at < $2 AND NOT ${OPEN}`, [scope, new Date(e.at - retention.maxAgeMs)]);
        await c.query(
          `DELETE FROM history_events WHERE scope = $1 AND NOT ${OPEN} AND seq <= (
             SELECT seq FROM history_events WHERE scope = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2)`,
          [scope, retention.maxEntries],
        );
        return true;
      });
    },
    async list(scope, q) {
      const r = await pool.query<RawHistoryRow>(
        `SELECT ${SELECT} FROM history_events
         WHERE scope = $1 AND reference = $2
           AND ($3::timestamptz IS NULL OR at >= $3) AND ($4::timestamptz IS NULL OR at < $4)
           AND ($5::timestamptz IS NULL OR at < $5 OR (at = $5 AND seq < $6))
         ORDER BY at DESC, seq DESC LIMIT $7`,
        [
          scope,
          q.reference,
          q.since !== undefined ? new Date(q.since) : null,
          q.until !== undefined ? new Date(q.until) : null,
          q.after !== undefined ? new Date(q.after.at) : null,
          q.after?.seq ?? null,
          q.limit + 1,
        ],
      );
      return r.rows.map(fromRow);
    },
    async servedAt(scope, reference, at) {
      const r = await pool.query<RawHistoryRow>(
        `SELECT ${SELECT} FROM history_events
         WHERE scope = $1 AND reference = $2 AND kind = 'served' AND at <= $3 AND (until IS NULL OR until > $3)
         ORDER BY at DESC, seq DESC LIMIT 1`,
        [scope, reference, new Date(at)],
      );
      return r.rows[0] !== undefined ? fromRow(r.rows[0]) : undefined;
    },
    async recordAudit(scope, e, retention) {
      const row = auditRow(scope, e);
      return inTransaction(pool, async (c) => {
        const inserted = await c.query(
          `INSERT INTO audit_events (id, scope, type, at, subject_id, actor_id, subject, actor, address, origin)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
          [row.id, row.scope, row.type, new Date(row.at), row.subjectId, row.actorId, row.subject, row.actor, row.address, row.origin],
        );
        if ((inserted.rowCount ?? 0) === 0) return false;
        await c.query('DELETE FROM audit_events WHERE scope = $1 AND at < $2', [scope, new Date(row.at - retention.maxAgeMs)]);
        await c.query(
          `DELETE FROM audit_events WHERE scope = $1 AND seq <= (
             SELECT seq FROM audit_events WHERE scope = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2)`,
          [scope, retention.maxEntries],
        );
        return true;
      });
    },
    async listAudit(scope, q) {
      const r = await pool.query<RawAuditRow>(
        `SELECT ${SELECT_AUDIT} FROM audit_events
         WHERE scope = $1
           AND ($2::timestamptz IS NULL OR at >= $2) AND ($3::timestamptz IS NULL OR at < $3)
           AND ($4::text IS NULL OR type = $4)
           AND ($5::text IS NULL OR subject_id = $5 OR actor_id = $5)
           AND ($6::timestamptz IS NULL OR at < $6 OR (at = $6 AND seq < $7))
         ORDER BY at DESC, seq DESC LIMIT $8`,
        [
          scope,
          q.since !== undefined ? new Date(q.since) : null,
          q.until !== undefined ? new Date(q.until) : null,
          q.type ?? null,
          q.authenticationId ?? null,
          q.after !== undefined ? new Date(q.after.at) : null,
          q.after?.seq ?? null,
          q.limit + 1,
        ],
      );
      return r.rows.map(fromAuditRow);
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

function migrate(pool: pg.Pool): Promise<void> {
  return migratePostgres(pool, { versionTable: 'history_schema_version', what: 'the history tables', migrations: MIGRATIONS, lock: LOCK_MIGRATE });
}
