/**
 * The PostgreSQL connection pool of vexil's data store (authentication records here, the
 * served-revision history in src/store/history/postgres.ts), and the one way both run a
 * transaction. Every wait is bounded: opening a connection (`connect_timeout`), waiting for one from
 * the pool (`pool_wait_timeout`), and each statement, client-side and as the server's
 * statement_timeout (`query_timeout`). An idle connection that breaks never crashes the process;
 * the next query opens another.
 */
import pg from 'pg';
import { isUnavailable } from './pg-failures.js';

export interface PostgresPoolOptions {
  /** `postgres://user:password@host:port/database?...` */
  readonly url: string;
  /** Pool size. */
  readonly maxConnections: number;
  /** Opening one connection, ms (`authentication.storage.postgres.connect_timeout`). */
  readonly connectTimeoutMs: number;
  /** One statement, ms: client-side, and the server's statement_timeout (`query_timeout`). */
  readonly queryTimeoutMs: number;
  /** Waiting for a connection from the pool, opening one included, ms (`pool_wait_timeout`). */
  readonly poolWaitTimeoutMs: number;
}

/** A pool on which `migrate` has run; closed again when it fails. */
export async function openPostgresPool(opts: PostgresPoolOptions, migrate: (pool: pg.Pool) => Promise<void>): Promise<pg.Pool> {
  const { connectTimeoutMs } = opts;
  // pg-pool's connectionTimeoutMillis bounds the wait for a client, opening one included; each
  // client's own bounds its connection attempt.
  class BoundedClient extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
    }
  }
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.maxConnections,
    connectionTimeoutMillis: opts.poolWaitTimeoutMs,
    query_timeout: opts.queryTimeoutMs,
    statement_timeout: opts.queryTimeoutMs,
    Client: BoundedClient,
  });
  pool.on('error', () => undefined);
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  return pool;
}

/** Runs `fn` in a transaction on one connection of `pool`: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (err) {
    // A connection that timed out or broke is discarded (the server rolls back on its own); one
    // whose statement was refused rolls back and goes back to the pool.
    if (isUnavailable(err)) {
      client.release(err as Error);
    } else {
      await client.query('ROLLBACK').then(
        () => client.release(),
        (e: Error) => client.release(e),
      );
    }
    throw err;
  }
}

/** What `migratePostgres` applies: the numbered steps of one store's tables and where their version is kept. */
export interface PostgresSchema {
  /** The table holding the one row with the applied version (`auth_schema_version`, ...). */
  readonly versionTable: string;
  /** The store's tables as messages name them (`the history tables`). */
  readonly what: string;
  /** Step N brings version N to N+1; applied in order, each once. */
  readonly migrations: readonly string[];
  /** The advisory lock held while migrating, so replicas starting together migrate once. */
  readonly lock: bigint;
}

/**
 * Brings a store's tables to the newest version this vexil knows, in one transaction under the
 * store's advisory lock; refuses a database a newer vexil migrated (its tables may not read as ours).
 */
export async function migratePostgres(pool: pg.Pool, schema: PostgresSchema): Promise<void> {
  const { versionTable, what, migrations } = schema;
  await inTransaction(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock($1)', [schema.lock.toString()]);
    await c.query(`CREATE TABLE IF NOT EXISTS ${versionTable} (version INTEGER NOT NULL)`);
    const r = await c.query<{ version: number }>(`SELECT version FROM ${versionTable}`);
    const current = r.rows[0]?.version ?? 0;
    if (current > migrations.length) {
      throw new Error(`${what}: schema version ${current}, newer than this vexil knows (${migrations.length}); upgrade vexil`);
    }
    for (let v = current; v < migrations.length; v++) await c.query(migrations[v]!);
    if (r.rows.length === 0) await c.query(`INSERT INTO ${versionTable} (version) VALUES ($1)`, [migrations.length]);
    else if (current < migrations.length) await c.query(`UPDATE ${versionTable} SET version = $1`, [migrations.length]);
  });
}
