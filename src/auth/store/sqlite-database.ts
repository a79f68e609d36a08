/**
 * Opening a SQLite database file of vexil's data store (authentication records here, the
 * served-revision history in src/store/history/sqlite.ts): the folder owner-only, a new file
 * owner-only before its WAL and shared-memory files exist (SQLite gives them the file's mode), and
 * the settings both stores rely on (a 5 s busy timeout for other processes holding the lock, WAL,
 * full fsync on commit).
 *
 * Every Database and Statement made through it lives as long as the process. From Node.js 24.19
 * (and in 26), `node::ObjectWrap` registers an environment cleanup hook and its destructor removes
 * it, a step that aborts the process (`Assertion failed: (env) != nullptr` in
 * RemoveEnvironmentCleanupHook) when V8 collects such an object outside a JavaScript context, as an
 * idle-time garbage collection does. better-sqlite3 before 13 wraps its Database and Statement
 * objects that way; 13 (Node-API) does not, but needs Node.js 22 or later. So the objects are never
 * garbage: statements are prepared when a store opens, a fixed set per open and never per request,
 * and `pragma()` (which prepares a statement it then drops) is not used; what is kept is bounded by
 * the number of opens.
 */
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/** The databases and statements opened in this process (see the file comment). */
const KEPT: object[] = [];

/** Opens (creating when needed) the database at `path` (`:memory:` for one in memory). */
export function openSqliteDatabase(path: string): Database.Database {
  const onDisk = path !== ':memory:';
  if (onDisk) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const isNew = onDisk && !existsSync(path);
  const db = new Database(path);
  KEPT.push(db);
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    KEPT.push(statement);
    return statement;
  }) as typeof db.prepare;
  try {
    if (isNew) chmodSync(path, 0o600);
    db.prepare('PRAGMA busy_timeout = 5000').get();
    db.prepare('PRAGMA journal_mode = WAL').get();
    db.prepare('PRAGMA synchronous = FULL').run();
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** What `migrateSqlite` applies: the numbered steps of one store's tables and where their version is kept. */
export interface SqliteSchema {
  /** The table holding the one row with the applied version (`history_schema_version`, ...). */
  readonly versionTable: string;
  /** The store's tables as messages name them (`the history tables`). */
  readonly what: string;
  /** Step N brings version N to N+1; applied in order, each once. */
  readonly migrations: readonly string[];
}

/**
 * Brings a store's tables to the newest version this vexil knows, in one immediate transaction
 * (another process opening the same file waits); refuses a file a newer vexil migrated.
 */
export function migrateSqlite(db: Database.Database, schema: SqliteSchema): void {
  const { versionTable, what, migrations } = schema;
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS ${versionTable} (version INTEGER NOT NULL)`);
    const row = db.prepare<[], { version: number }>(`SELECT version FROM ${versionTable}`).get();
    const current = row?.version ?? 0;
    if (current > migrations.length) {
      throw new Error(`${what}: schema version ${current}, newer than this vexil knows (${migrations.length}); upgrade vexil`);
    }
    for (let v = current; v < migrations.length; v++) db.exec(migrations[v]!);
    if (row === undefined) db.prepare(`INSERT INTO ${versionTable} (version) VALUES (?)`).run(migrations.length);
    else if (current < migrations.length) db.prepare(`UPDATE ${versionTable} SET version = ?`).run(migrations.length);
  }).immediate();
}
