/**
 * The SQLite history store (src/store/history/sqlite.ts) on a real file: the shared behaviour
 * (suite.ts), the file shared with the authentication store (both migrate it, each its own tables),
 * and what was recorded read back after reopening.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
