/**
 * The embedded authentication store: one SQLite file in WAL mode with `synchronous=FULL`, so a
 * committed write survives the process being killed (and power loss). better-sqlite3 is
 * synchronous: a write has reached the file when the call returns, before any response is sent.
 *
 * Several processes may open the same file (SQLite locks it); cleanup takes a lease row inside an
 * IMMEDIATE transaction, so only one of them deletes at a time.
 */
import type Database from 'better-sqlite3';
import { openSqliteDatabase } from './sqlite-database.js';
import type { AuthStore, CleanupOutcome, CleanupRequest, ListQuery, NewAuthentication, StoredAuthentication } from './types.js';
import { lockName, parseMetadata, toMethod } from './rows.js';

/** Schema versions, applied in order; `PRAGMA user_version` records the last one applied. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE authentications (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     hashed_client_token TEXT NOT NULL UNIQUE,
     method TEXT NOT NULL,
     metadata TEXT NOT NULL,
     expires_at INTEGER,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE INDEX authentications_created ON authentications (created_at, seq);
   CREATE INDEX authentications_method_created ON authentications (method, created_at, seq);
   CREATE INDEX authentications_expiry ON authentications (method, expires_at) WHERE expires_at IS NOT NULL;
   CREATE TABLE operation_locks (
     name TEXT PRIMARY KEY,
     holder TEXT NOT NULL,
     acquired_at INTEGER NOT NULL,
     acquired_until INTEGER NOT NULL
   );`,
  // Who created each record; existing records keep NULL (no creator known).
  `ALTER TABLE authentications ADD COLUMN created_by TEXT;
   CREATE INDEX authentications_creator ON authentications (created_by);`,
];

interface Row {
  id: string;
  hashed_client_token: string;
  method: string;
  metadata: string;
  expires_at: number | null;
  created_at: number;
  updated_at: number;
  created_by: string | null;
}

const COLUMNS = 'id, hashed_client_token, method, metadata, expires_at, created_at, updated_at, created_by';

function fromRow(r: Row): StoredAuthentication {
  return {
    id: r.id,
    hashedToken: r.hashed_client_token,
    method: toMethod(r.method),
    metadata: parseMetadata(r.metadata),
    ...(r.expires_at !== null ? { expiresAt: Number(r.expires_at) } : {}),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    ...(r.created_by !== null ? { createdBy: r.created_by } : {}),
  };
}

export interface SqliteAuthStoreOptions {
  /** File path, or `:memory:` (nothing kept). */
  path: string;
}

export function openSqliteAuthStore(opts: SqliteAuthStoreOptions): AuthStore {
  const db = openSqliteDatabase(opts.path);
  try {
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }

  const insert = db.prepare(
    `INSERT INTO authentications (${COLUMNS}) VALUES (@id, @hashed, @method, @metadata, @expiresAt, @now, @now, @createdBy)`,
  );
  const byHash = db.prepare<[string], Row>(`SELECT ${COLUMNS} FROM authentications WHERE hashed_client_token = ?`);
  const byId = db.prepare<[string], Row>(`SELECT ${COLUMNS} FROM authentications WHERE id = ?`);
  const anyOfMethod = db.prepare<[string], { one: number }>('SELECT 1 AS one FROM authentications WHERE method = ? LIMIT 1');
  const listAll = db.prepare<[number, number], Row>(
    `SELECT ${COLUMNS} FROM authentications ORDER BY created_at, seq LIMIT ? OFFSET ?`,
  );
  const listMethod = db.prepare<[string, number, number], Row>(
    `SELECT ${COLUMNS} FROM authentications WHERE method = ? ORDER BY created_at, seq LIMIT ? OFFSET ?`,
  );
  // A principal's own view: the records it created and its own (see ListQuery.ownedBy).
  const OWNED = '(created_by = @createdBy OR id = @id)';
  const listOwned = db.prepare<[{ createdBy: string | null; id: string; limit: number; offset: number }], Row>(
    `SELECT ${COLUMNS} FROM authentications WHERE ${OWNED} ORDER BY created_at, seq LIMIT @limit OFFSET @offset`,
  );
  const listOwnedMethod = db.prepare<[{ createdBy: string | null; id: string; method: string; limit: number; offset: number }], Row>(
    `SELECT ${COLUMNS} FROM authentications WHERE method = @method AND ${OWNED} ORDER BY created_at, seq LIMIT @limit OFFSET @offset`,
  );
  const remove = db.prepare<[string]>('DELETE FROM authentications WHERE id = ?');
  const expire = db.prepare<[number, number, string]>('UPDATE authentications SET expires_at = ?, updated_at = ? WHERE id = ?');
  const readLock = db.prepare<[string], { holder: string; acquired_until: number }>(
    'SELECT holder, acquired_until FROM operation_locks WHERE name = ?',
  );
  const writeLock = db.prepare<[string, string, number, number]>(
    `INSERT INTO operation_locks (name, holder, acquired_at, acquired_until) VALUES (?, ?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, acquired_at = excluded.acquired_at, acquired_until = excluded.acquired_until`,
  );
  const deleteExpired = db.prepare<[string, number], Row>(
    `DELETE FROM authentications WHERE method = ? AND expires_at IS NOT NULL AND expires_at < ? RETURNING ${COLUMNS}`,
  );

  const params = (a: NewAuthentication) => ({
    id: a.id,
    hashed: a.hashedToken,
    method: a.method,
    metadata: JSON.stringify(a.metadata),
    expiresAt: a.expiresAt ?? null,
    now: a.now,
    createdBy: a.createdBy ?? null,
  });
  const created = (a: NewAuthentication): StoredAuthentication => ({
    id: a.id,
    hashedToken: a.hashedToken,
    method: a.method,
    metadata: { ...a.metadata },
    ...(a.expiresAt !== undefined ? { expiresAt: a.expiresAt } : {}),
    createdAt: a.now,
    updatedAt: a.now,
    ...(a.createdBy !== undefined ? { createdBy: a.createdBy } : {}),
  });

  const createIfEmpty = db.transaction((a: NewAuthentication): StoredAuthentication | undefined => {
    if (anyOfMethod.get(a.method)) return undefined;
    insert.run(params(a));
    return created(a);
  });

  const runCleanup = db.transaction((req: CleanupRequest): CleanupOutcome => {
    const name = lockName(req.method);
    const lock = readLock.get(name);
    if (lock && lock.holder !== req.holder && Number(lock.acquired_until) > req.now) {
      return { ran: false, heldBy: lock.holder, until: Number(lock.acquired_until) };
    }
    writeLock.run(name, req.holder, req.now, req.holdUntil);
    const expired = deleteExpired.all(req.method, req.expiredBefore).map(fromRow);
    return { ran: true, deleted: expired.length, expired };
  });

  let closed = false;
  return {
    kind: 'sqlite',
    async create(a) {
      insert.run(params(a));
      return created(a);
    },
    async createIfMethodEmpty(a) {
      return createIfEmpty.immediate(a);
    },
    async getByHash(hashed) {
      const r = byHash.get(hashed);
      return r ? fromRow(r) : undefined;
    },
    async getById(id) {
      const r = byId.get(id);
      return r ? fromRow(r) : undefined;
    },
    async list(q: ListQuery) {
      let rows: Row[];
      if (q.ownedBy !== undefined) {
        const owned = { createdBy: q.ownedBy.createdBy ?? null, id: q.ownedBy.id, limit: q.limit, offset: q.offset };
        rows = q.method === undefined ? listOwned.all(owned) : listOwnedMethod.all({ ...owned, method: q.method });
      } else {
        rows = q.method === undefined ? listAll.all(q.limit, q.offset) : listMethod.all(q.method, q.limit, q.offset);
      }
      return rows.map(fromRow);
    },
    async delete(id) {
      return remove.run(id).changes > 0;
    },
    async setExpiry(id, expiresAt, now) {
      if (expire.run(expiresAt, now, id).changes === 0) return undefined;
      const r = byId.get(id);
      return r ? fromRow(r) : undefined;
    },
    async cleanup(req) {
      return runCleanup.immediate(req);
    },
    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

function migrate(db: Database.Database): void {
  db.transaction(() => {
    const current = Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
    if (current > MIGRATIONS.length) {
      throw new Error(
        `the authentication database has schema version ${current}, newer than this vexil knows (${MIGRATIONS.length}); upgrade vexil`,
      );
    }
    for (let v = current; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
    if (current < MIGRATIONS.length) db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
  }).immediate();
}
