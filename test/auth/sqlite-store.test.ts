/** The SQLite AuthStore: the shared contract, plus what is specific to the file. */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { openSqliteAuthStore } from '../../src/auth/store/sqlite.js';
import { storeContract, V1_SQLITE_SCHEMA } from './store-contract.js';
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
  t.equal(db.pragma('user_version', { simple: true }), 2);
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>;
  t.same(tables.map((r) => r.name).filter((n) => !n.startsWith('sqlite_')), ['authentications', 'operation_locks']);
});

t.test('a database from a newer vexil is refused, not silently used', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'auth.db');
  const db = new Database(path);
  db.pragma('user_version = 99');
  db.close();
  t.throws(() => openSqliteAuthStore({ path }), /schema version 99, newer than this vexil knows \(2\)/);
});

t.test('a file that is not a database fails to open with the reason', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'auth.db');
  writeFileSync(path, 'this is not sqlite, just some text long enough to have a header '.repeat(10));
  t.throws(() => openSqliteAuthStore({ path }), /not a database/);
});

t.test('a version-1 database is migrated in place: every record kept, none with a creator', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'auth.db');
  const old = new Database(path);
  old.exec(V1_SQLITE_SCHEMA);
  old.exec(`INSERT INTO authentications (id, hashed_client_token, method, metadata, expires_at, created_at, updated_at)
    VALUES ('a1', 'h1', 'METHOD_TOKEN', '{"io.svc.auth.token.name":"boot"}', NULL, 1, 1),
           ('a2', 'h2', 'METHOD_OIDC', '{"io.svc.auth.oidc.email":"x@example.com"}', 99, 2, 3);`);
  old.close();
  const store = openSqliteAuthStore({ path });
  t.teardown(() => store.close());
  const all = await store.list({ offset: 0, limit: 10 });
  t.same(all, [
    { id: 'a1', hashedToken: 'h1', method: 'METHOD_TOKEN', metadata: { 'io.svc.auth.token.name': 'boot' }, createdAt: 1, updatedAt: 1 },
    { id: 'a2', hashedToken: 'h2', method: 'METHOD_OIDC', metadata: { 'io.svc.auth.oidc.email': 'x@example.com' }, expiresAt: 99, createdAt: 2, updatedAt: 3 },
  ]);
  t.notOk(all.some((a) => 'createdBy' in a), 'no creator is known for records stored before');
  t.same(await store.list({ offset: 0, limit: 10, ownedBy: { createdBy: 'anyone', id: 'other' } }), [], 'so nobody owns them');
  const db = new Database(path, { readonly: true });
  t.teardown(() => db.close());
  t.equal(db.pragma('user_version', { simple: true }), 2);
});
