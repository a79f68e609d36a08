/**
 * The served-revision history and the audit events in SQLite: the same database file as the
 * authentication store (`authentication.storage.sqlite.path`, default `<data_dir>/auth.db`), its
 * own tables (`history_events`, `audit_events`, `history_schema_version`) and migrations. WAL with `synchronous=FULL`, as the
 * authentication store: better-sqlite3 is synchronous, so an event is in the file when `record`
 * returns, before the store logs the swap; it survives `kill -9`.
 *
 * Several processes may open the file: `record` runs in an IMMEDIATE transaction (the latest entry
 * is read, the previous one closed and the new one written under one lock).
 */
import type Database from 'better-sqlite3';
import { openSqliteDatabase, migrateSqlite } from '../../auth/store/sqlite-database.js';
import type { AuditEvent } from '../../auth/audit.js';
import { AUDIT_COLUMNS, auditRow, fromAuditRow, type RawAuditRow } from './audit-rows.js';
import { HISTORY_COLUMNS, cut, fromRow, problemsColumn, type RawHistoryRow } from './rows.js';
import type { HistoryRetention, HistoryStore, NewHistoryEvent } from './types.js';

/** Schema versions, applied in order; `history_schema_version` records the last one applied. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE history_events (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     scope TEXT NOT NULL,
     kind TEXT NOT NULL,
     reference TEXT NOT NULL,
     revision TEXT NOT NULL,
     author TEXT,
     message TEXT,
     committed_at TEXT,
     at INTEGER NOT NULL,
     until INTEGER,
     replaced_by TEXT,
     problems TEXT,
     problem_count INTEGER
   );
   CREATE INDEX history_events_reference_at ON history_events (scope, reference, at, seq);
   CREATE INDEX history_events_scope_seq ON history_events (scope, seq);`,
  // 2: audit events (src/auth/audit.ts); `id` unique, so an event recorded twice is one row.
  `CREATE TABLE audit_events (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     scope TEXT NOT NULL,
     type TEXT NOT NULL,
     at INTEGER NOT NULL,
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

export interface SqliteHistoryStoreOptions {
  /** File path, or `:memory:` (nothing kept). */
  readonly path: string;
}

export function openSqliteHistoryStore(opts: SqliteHistoryStoreOptions): HistoryStore {
  const db = openSqliteDatabase(opts.path);
  try {
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }

  const latestServed = db.prepare<[string, string], RawHistoryRow>(
    `SELECT ${HISTORY_COLUMNS} FROM history_events WHERE scope = ? AND reference = ? AND kind = 'served' ORDER BY at DESC, seq DESC LIMIT 1`,
  );
  const rejectedSince = db.prepare<[string, string, string, number], { one: number }>(
    `SELECT 1 AS one FROM history_events WHERE scope = ? AND reference = ? AND kind = 'rejected' AND revision = ? AND at >= ? LIMIT 1`,
  );
  const close = db.prepare<[number, string, number]>('UPDATE history_events SET until = ?, replaced_by = ? WHERE seq = ?');
  const insert = db.prepare(
    `INSERT INTO history_events (scope, kind, reference, revision, author, message, committed_at, at, problems, problem_count)
     VALUES (@scope, @kind, @reference, @revision, @author, @message, @committedAt, @at, @problems, @problemCount)`,
  );
  // The entry a reference serves now (served, not replaced) is never removed by retention.
  const OPEN = `(kind = 'served' AND until IS NULL)`;
  const pruneAge = db.prepare<[string, number]>(`DELETE FROM history_events WHERE scope = ? AND at < ? AND NOT ${OPEN}`);
  const pruneCount = db.prepare<[string, string, number]>(
    `DELETE FROM history_events WHERE scope = ? AND NOT ${OPEN} AND seq <= (
       SELECT seq FROM history_events WHERE scope = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
  );
  const list = db.prepare(
    `SELECT ${HISTORY_COLUMNS} FROM history_events
     WHERE scope = @scope AND reference = @reference
       AND (@since IS NULL OR at >= @since) AND (@until IS NULL OR at < @until)
       AND (@afterAt IS NULL OR at < @afterAt OR (at = @afterAt AND seq < @afterSeq))
     ORDER BY at DESC, seq DESC LIMIT @limit`,
  );
  const servedAt = db.prepare<[string, string, number, number], RawHistoryRow>(
    `SELECT ${HISTORY_COLUMNS} FROM history_events
     WHERE scope = ? AND reference = ? AND kind = 'served' AND at <= ? AND (until IS NULL OR until > ?)
     ORDER BY at DESC, seq DESC LIMIT 1`,
  );

  const recordTx = db.transaction((scope: string, e: NewHistoryEvent, retention: HistoryRetention): boolean => {
    const served = latestServed.get(scope, e.reference);
    if (e.kind === 'served') {
      if (served !== undefined && served.revision === e.revision && served.until === null) return false;
      if (served !== undefined && served.until === null) close.run(e.at, e.revision, Number(served.seq));
    } else if (rejectedSince.get(scope, e.reference, e.revision, served !== undefined ? Number(served.at) : 0) !== undefined) {
      return false;
    }
    insert.run({
      scope,
      kind: e.kind,
      reference: e.reference,
      revision: e.revision,
      author: cut(e.author),
      message: cut(e.message),
      committedAt: e.committedAt ?? null,
      at: e.at,
      problems: problemsColumn(e),
      problemCount: e.problemCount ?? null,
    });
    pruneAge.run(scope, e.at - retention.maxAgeMs);
    pruneCount.run(scope, scope, retention.maxEntries);
    return true;
  });

  const insertAudit = db.prepare(
    `INSERT INTO audit_events (id, scope, type, at, subject_id, actor_id, subject, actor, address, origin)
     VALUES (@id, @scope, @type, @at, @subjectId, @actorId, @subject, @actor, @address, @origin)
     ON CONFLICT (id) DO NOTHING`,
  );
  const pruneAuditAge = db.prepare<[string, number]>('DELETE FROM audit_events WHERE scope = ? AND at < ?');
  const pruneAuditCount = db.prepare<[string, string, number]>(
    `DELETE FROM audit_events WHERE scope = ? AND seq <= (
       SELECT seq FROM audit_events WHERE scope = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
  );
  // One statement per combination of filters, so each filter is a plain condition the planner can
  // take to an index (`x IS NULL OR` would hide the subject and actor indexes).
  const listAuditStatements = new Map<string, Database.Statement>();
  const listAudit = (byType: boolean, byId: boolean): Database.Statement => {
    const key = `${byType ? 't' : ''}${byId ? 'i' : ''}`;
    let st = listAuditStatements.get(key);
    if (st === undefined) {
      st = db.prepare(
        `SELECT ${AUDIT_COLUMNS} FROM audit_events
         WHERE scope = @scope
           AND (@since IS NULL OR at >= @since) AND (@until IS NULL OR at < @until)
           ${byType ? 'AND type = @type' : ''}
           ${byId ? 'AND (subject_id = @authenticationId OR actor_id = @authenticationId)' : ''}
           AND (@afterAt IS NULL OR at < @afterAt OR (at = @afterAt AND seq < @afterSeq))
         ORDER BY at DESC, seq DESC LIMIT @limit`,
      );
      listAuditStatements.set(key, st);
    }
    return st;
  };
  const recordAuditTx = db.transaction((scope: string, e: AuditEvent, retention: HistoryRetention): boolean => {
    const row = auditRow(scope, e);
    if (insertAudit.run(row).changes === 0) return false;
    pruneAuditAge.run(scope, row.at - retention.maxAgeMs);
    pruneAuditCount.run(scope, scope, retention.maxEntries);
    return true;
  });

  let closed = false;
  return {
    kind: 'sqlite',
    async record(scope, e, retention) {
      return recordTx.immediate(scope, e, retention);
    },
    async list(scope, q) {
      const rows = list.all({
        scope,
        reference: q.reference,
        since: q.since ?? null,
        until: q.until ?? null,
        afterAt: q.after?.at ?? null,
        afterSeq: q.after?.seq ?? null,
        limit: q.limit + 1,
      }) as RawHistoryRow[];
      return rows.map(fromRow);
    },
    async servedAt(scope, reference, at) {
      const r = servedAt.get(scope, reference, at, at);
      return r !== undefined ? fromRow(r) : undefined;
    },
    async recordAudit(scope, e, retention) {
      return recordAuditTx.immediate(scope, e, retention);
    },
    async listAudit(scope, q) {
      const rows = listAudit(q.type !== undefined, q.authenticationId !== undefined).all({
        scope,
        since: q.since ?? null,
        until: q.until ?? null,
        ...(q.type !== undefined ? { type: q.type } : {}),
        ...(q.authenticationId !== undefined ? { authenticationId: q.authenticationId } : {}),
        afterAt: q.after?.at ?? null,
        afterSeq: q.after?.seq ?? null,
        limit: q.limit + 1,
      }) as RawAuditRow[];
      return rows.map(fromAuditRow);
    },
    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

function migrate(db: Database.Database): void {
  migrateSqlite(db, { versionTable: 'history_schema_version', what: 'the history tables', migrations: MIGRATIONS });
}
