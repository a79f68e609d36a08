/**
 * The SQLite history store (src/store/history/sqlite.ts) on a real file: the shared behaviour
 * (suite.ts), the file shared with the authentication store (both migrate it, each its own tables),
 * what was recorded read back after reopening, and a file written by the version-1 store (before
 * the audit table, fixtures/history-store/v1.sqlite) upgraded without losing a row.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import tap from 'tap';
import { openSqliteAuthStore } from '../../../src/auth/store/sqlite.js';
import { openSqliteHistoryStore } from '../../../src/store/history/sqlite.js';
import { historySuite } from './suite.js';

const dir = mkdtempSync(join(tmpdir(), 'vexil-history-'));
tap.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

tap.test('the SQLite history store', (t) => historySuite(t, async () => openSqliteHistoryStore({ path: join(dir, `h${n++}.db`) })));

tap.test('the history shares the authentication database file and survives reopening', async (t) => {
  const path = join(dir, 'auth.db');
  const auth = openSqliteAuthStore({ path });
  const h = openSqliteHistoryStore({ path });
  await h.record('me', { kind: 'served', reference: 'main', revision: 'abc', at: 1_000 }, { maxAgeMs: 1e12, maxEntries: 10 });
  await auth.create({ id: 'id1', method: 'METHOD_TOKEN', hashedToken: 'h', metadata: {}, now: 1 });
  await h.close();
  await auth.close();
  const again = openSqliteHistoryStore({ path });
  const auth2 = openSqliteAuthStore({ path });
  t.teardown(async () => {
    await again.close();
    await auth2.close();
  });
  t.same((await again.list('me', { reference: 'main', limit: 5 })).map((e) => e.revision), ['abc']);
  t.equal((await auth2.getById('id1'))?.id, 'id1', 'the authentication records are untouched');
});

tap.test('a file written before the audit table: migrated in place, every row kept', async (t) => {
  const path = join(dir, 'v1.db');
  copyFileSync(new URL('../../../fixtures/history-store/v1.sqlite', import.meta.url), path);
  const h = openSqliteHistoryStore({ path });
  const auth = openSqliteAuthStore({ path });
  t.teardown(async () => {
    await h.close();
    await auth.close();
  });
  const rows = await h.list('replica-a', { reference: 'main', limit: 10 });
  t.same(
    rows.map((e) => [e.kind, e.revision, e.until, e.replacedBy]),
    [['served', 'c3', undefined, undefined], ['rejected', 'c2', undefined, undefined], ['served', 'c1', Date.parse('2026-11-27T10:02:00Z'), 'c3']],
    'the three entries, as version 1 wrote them',
  );
  t.match(rows[1]!.problems, [{ rule: 'yaml.syntax', line: 3 }]);
  t.equal(rows[2]!.author, 'Ada <ada@example.com>');
  t.equal((await h.servedAt('replica-a', 'main', Date.parse('2026-11-27T10:01:30Z')))?.revision, 'c1');
  t.equal((await auth.getById('token-1'))?.id, 'token-1', 'the authentication record is untouched');
  const event = {
    id: '11111111-1111-4111-8111-111111111111',
    type: 'io.vexil.auth.token.deleted' as const,
    time: '2026-11-28T00:00:00.000Z',
    subject: { authenticationId: 'token-1', method: 'METHOD_TOKEN', metadata: {} },
  };
  t.equal(await h.recordAudit('replica-a', event, { maxAgeMs: 1e12, maxEntries: 10 }), true, 'audit events are kept in the upgraded file');
  t.same((await h.listAudit('replica-a', { limit: 5 })).map((r) => r.event), [event]);
  t.equal(await h.record('replica-a', { kind: 'served', reference: 'main', revision: 'c4', at: Date.parse('2026-11-28T00:00:01Z') }, { maxAgeMs: 1e12, maxEntries: 10 }), true);
  t.equal((await h.list('replica-a', { reference: 'main', limit: 10 }))[1]!.replacedBy, 'c4', 'the open entry of version 1 is closed by the next one');
  const db = new Database(path, { readonly: true });
  t.teardown(() => db.close());
  t.same(db.prepare('SELECT version FROM history_schema_version').all(), [{ version: 2 }], 'one version row, now 2');
});

tap.test('a file from a newer vexil is refused, not downgraded', async (t) => {
  const path = join(dir, 'newer.db');
  await openSqliteHistoryStore({ path }).close();
  const db = new Database(path);
  db.prepare('UPDATE history_schema_version SET version = 99').run();
  db.close();
  t.throws(() => openSqliteHistoryStore({ path }), /schema version 99, newer than this vexil knows \(2\)/);
});
