/** The SQLite AuthStore: the shared contract, plus what is specific to the file. */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { openSqliteAuthStore } from '../../src/auth/store/sqlite.js';
import { storeContract } from './store-contract.js';
import { tempDir } from './support.js';

t.test('contract', async (t) => {
  const dir = tempDir(t);
  let n = 0;
  // Each subtest gets its own file; within one, every open() is another connection to it.
  t.beforeEach(() => void n++);
  storeContract(t, async () => openSqliteAuthStore({ path: join(dir, `auth-${n}.db`) }));
});

t.test('WAL mode, full sync, the schema version recorded, parent folders created', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'nested', 'deeper', 'auth.db');
  const store = openSqliteAuthStore({ path });
  await store.close();
  t.ok(existsSync(path));
  t.equal(statSync(path).mode & 0o777, 0o600, 'owner-only file');
  t.equal(statSync(join(dir, 'nested', 'deeper')).mode & 0o777, 0o700, 'owner-only folder');
  const db = new Database(path, { readonly: true });
  t.teardown(() => db.close());
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  t.equal(db.pragma('user_version', { simple: true }), 1);
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>;
  t.same(tables.map((r) => r.name).filter((n) => !n.startsWith('sqlite_')), ['authentications', 'operation_locks']);
});

t.test('a database from a newer vexil is refused, not silently used', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'auth.db');
  const db = new Database(path);
  db.pragma('user_version = 99');
  db.close();
  t.throws(() => openSqliteAuthStore({ path }), /schema version 99, newer than this vexil knows \(1\)/);
});

t.test('a file that is not a database fails to open with the reason', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'auth.db');
  writeFileSync(path, 'this is not sqlite, just some text long enough to have a header '.repeat(10));
  t.throws(() => openSqliteAuthStore({ path }), /not a database/);
});
