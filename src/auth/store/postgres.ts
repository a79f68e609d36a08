/**
 * The shared authentication store for several replicas: PostgreSQL through `pg`. Each write is a
 * single committed statement (or transaction) before the promise resolves.
 *
 * Concurrency between replicas:
 * - schema migration and the bootstrap token run under a transaction-scoped advisory lock, so
 *   replicas starting together neither race on DDL nor create two bootstrap tokens;
 * - cleanup takes `pg_try_advisory_xact_lock` (one cleanup at a time) and a lease row (one
 *   cleanup per interval, whichever replica gets there first).
 *
 * Bounds: opening a connection, waiting for one from the pool (opening included) and each
 * statement (client-side, and `statement_timeout` on the server) are limited, so a database that
 * hangs holds a request for a bounded time; a connection whose statement failed that way is
 * discarded, not returned to the pool. A failure meaning "the database is unavailable" rejects
 * with StoreUnavailableError (pg-failures.ts); nothing is retried here.
 */
import pg from 'pg';
import type { Method } from '../types.js';
import { withUnavailableErrors } from './pg-failures.js';
import { inTransaction, openPostgresPool, migratePostgres } from './postgres-pool.js';
import { lockName, parseMetadata, toMethod } from './rows.js';
import type { AuthStore, CleanupOutcome, ListQuery, NewAuthentication, StoredAuthentication } from './types.js';

/** Advisory lock keys (arbitrary constants; "vexil" in ASCII, then a purpose). */
const LOCK_MIGRATE = 0x7665_7869_6c00_0001n;
const LOCK_BOOTSTRAP = 0x7665_7869_6c00_0002n;
const LOCK_CLEANUP_BASE = 0x7665_7869_6c00_0100n;

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE authentications (
     seq BIGSERIAL PRIMARY KEY,
     id TEXT NOT NULL UNIQUE,
     hashed_client_token TEXT NOT NULL UNIQUE,
     method TEXT NOT NULL,
     metadata TEXT NOT NULL,
     expires_at TIMESTAMPTZ,
     created_at TIMESTAMPTZ NOT NULL,
     updated_at TIMESTAMPTZ NOT NULL
   );
   CREATE INDEX authentications_created ON authentications (created_at, seq);
   CREATE INDEX authentications_method_created ON authentications (method, created_at, seq);
   CREATE INDEX authentications_expiry ON authentications (method, expires_at) WHERE expires_at IS NOT NULL;
   CREATE TABLE operation_locks (
     name TEXT PRIMARY KEY,
     holder TEXT NOT NULL,
     acquired_at TIMESTAMPTZ NOT NULL,
     acquired_until TIMESTAMPTZ NOT NULL
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
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  created_by: string | null;
}

const COLUMNS = 'id, hashed_client_token, method, metadata, expires_at, created_at, updated_at, created_by';

function fromRow(r: Row): StoredAuthentication {
  return {
    id: r.id,
    hashedToken: r.hashed_client_token,
    method: toMethod(r.method),
    metadata: parseMetadata(r.metadata),
    ...(r.expires_at !== null ? { expiresAt: r.expires_at.getTime() } : {}),
    createdAt: r.created_at.getTime(),
    updatedAt: r.updated_at.getTime(),
    ...(r.created_by !== null ? { createdBy: r.created_by } : {}),
  };
}

const date = (ms: number | undefined) => (ms === undefined ? null : new Date(ms));

export interface PostgresAuthStoreOptions {
  /** `postgres://user:password@host:port/database?...` */
  url: string;
  /** Pool size (default 10). */
  maxConnections?: number;
  /** Opening one connection, ms (`authentication.storage.postgres.connect_timeout`). */
  connectTimeoutMs: number;
  /** One statement, ms: client-side, and the server's statement_timeout (`query_timeout`). */
  queryTimeoutMs: number;
  /** Waiting for a connection from the pool, opening one included, ms (`pool_wait_timeout`). */
  poolWaitTimeoutMs: number;
}


export async function openPostgresAuthStore(opts: PostgresAuthStoreOptions): Promise<AuthStore> {
  const pool = await openPostgresPool({ ...opts, maxConnections: opts.maxConnections ?? 10 }, migrate);

  const insertSql = `INSERT INTO authentications (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $6, $7)`;
  const insertParams = (a: NewAuthentication) => [
    a.id,
    a.hashedToken,
    a.method,
    JSON.stringify(a.metadata),
    date(a.expiresAt),
    new Date(a.now),
    a.createdBy ?? null,
  ];
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
  const one = async (sql: string, params: unknown[]) => {
    const r = await pool.query<Row>(sql, params);
    return r.rows[0] ? fromRow(r.rows[0]) : undefined;
  };

  let closed = false;
  return withUnavailableErrors({
    kind: 'postgres',
    async create(a) {
      await pool.query(insertSql, insertParams(a));
      return created(a);
    },
    async createIfMethodEmpty(a) {
      return inTransaction(pool, async (c) => {
        await c.query('SELECT pg_advisory_xact_lock($1)', [LOCK_BOOTSTRAP.toString()]);
        const exists = await c.query('SELECT 1 FROM authentications WHERE method = $1 LIMIT 1', [a.method]);
        if (exists.rowCount !== 0) return undefined;
        await c.query(insertSql, insertParams(a));
        return created(a);
      });
    },
    getByHash: (hashed) => one(`SELECT ${COLUMNS} FROM authentications WHERE hashed_client_token = $1`, [hashed]),
    getById: (id) => one(`SELECT ${COLUMNS} FROM authentications WHERE id = $1`, [id]),
    async list(q: ListQuery) {
      if (q.ownedBy !== undefined) {
        // A principal's own view: the records it created and its own.
        const params: unknown[] = [q.ownedBy.createdBy ?? null, q.ownedBy.id, q.limit, q.offset];
        if (q.method !== undefined) params.push(q.method);
        const r = await pool.query<Row>(
          `SELECT ${COLUMNS} FROM authentications WHERE (created_by = $1 OR id = $2)${q.method !== undefined ? ' AND method = $5' : ''}
           ORDER BY created_at, seq LIMIT $3 OFFSET $4`,
          params,
        );
        return r.rows.map(fromRow);
      }
      const r =
        q.method === undefined
          ? await pool.query<Row>(`SELECT ${COLUMNS} FROM authentications ORDER BY created_at, seq LIMIT $1 OFFSET $2`, [q.limit, q.offset])
          : await pool.query<Row>(
              `SELECT ${COLUMNS} FROM authentications WHERE method = $1 ORDER BY created_at, seq LIMIT $2 OFFSET $3`,
              [q.method, q.limit, q.offset],
            );
      return r.rows.map(fromRow);
    },
    async delete(id) {
      const r = await pool.query('DELETE FROM authentications WHERE id = $1', [id]);
      return (r.rowCount ?? 0) > 0;
    },
    setExpiry: (id, expiresAt, now) =>
      one(`UPDATE authentications SET expires_at = $1, updated_at = $2 WHERE id = $3 RETURNING ${COLUMNS}`, [
        new Date(expiresAt),
        new Date(now),
        id,
      ]),
    async cleanup(req) {
      return inTransaction(pool, async (c): Promise<CleanupOutcome> => {
        const name = lockName(req.method);
        const got = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [cleanupLockKey(req.method).toString()]);
        if (!got.rows[0]?.ok) return { ran: false, heldBy: '(another replica, running now)', until: req.now };
        const lock = await c.query<{ holder: string; acquired_until: Date }>(
          'SELECT holder, acquired_until FROM operation_locks WHERE name = $1',
          [name],
        );
        const held = lock.rows[0];
        if (held && held.holder !== req.holder && held.acquired_until.getTime() > req.now) {
          return { ran: false, heldBy: held.holder, until: held.acquired_until.getTime() };
        }
        await c.query(
          `INSERT INTO operation_locks (name, holder, acquired_at, acquired_until) VALUES ($1, $2, $3, $4)
           ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, acquired_at = EXCLUDED.acquired_at, acquired_until = EXCLUDED.acquired_until`,
          [name, req.holder, new Date(req.now), new Date(req.holdUntil)],
        );
        const del = await c.query<Row>(
          `DELETE FROM authentications WHERE method = $1 AND expires_at IS NOT NULL AND expires_at < $2 RETURNING ${COLUMNS}`,
          [req.method, new Date(req.expiredBefore)],
        );
        const expired = del.rows.map(fromRow);
        return { ran: true, deleted: expired.length, expired };
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  });
}

function cleanupLockKey(method: Method): bigint {
  const index = ['METHOD_TOKEN', 'METHOD_OIDC', 'METHOD_CLUSTER', 'METHOD_CODE_HOST', 'METHOD_JWT'].indexOf(method);
  return LOCK_CLEANUP_BASE + BigInt(index);
}

function migrate(pool: pg.Pool): Promise<void> {
  return migratePostgres(pool, { versionTable: 'auth_schema_version', what: 'the authentication database', migrations: MIGRATIONS, lock: LOCK_MIGRATE });
}
