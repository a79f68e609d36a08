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
