/** The authentication storage keys, cache_ttl and data_dir in the real config loader. */
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { startAuthServer, tempDir } from './support.js';

t.test('defaults', async (t) => {
  const c = loadConfig({ env: {} });
  t.equal(c.authentication.cache_ttl, 5000);
  t.same(c.authentication.storage, {
    type: 'sqlite',
    sqlite: {},
    postgres: { connect_timeout: 5000, query_timeout: 5000, pool_wait_timeout: 5000, outage_grace: 300_000 },
  });
  t.equal(c.data_dir, undefined, 'computed at start (see data-dir.ts)');
});

t.test('environment overrides and validation', async (t) => {
  const c = loadConfig({
    env: {
      VEXIL_DATA_DIR: '/var/lib/vexil',
      VEXIL_AUTHENTICATION_CACHE_TTL: '0s',
      VEXIL_AUTHENTICATION_STORAGE_TYPE: 'postgres',
      VEXIL_AUTHENTICATION_STORAGE_POSTGRES_URL: 'postgres://u:p@db/flags',
      VEXIL_AUTHENTICATION_STORAGE_SQLITE_PATH: '/x/auth.db',
      VEXIL_AUTHENTICATION_STORAGE_POSTGRES_QUERY_TIMEOUT: '2s',
      VEXIL_AUTHENTICATION_STORAGE_POSTGRES_OUTAGE_GRACE: '0s',
    },
  });
  t.equal(c.data_dir, '/var/lib/vexil');
  t.equal(c.authentication.cache_ttl, 0);
  t.same(c.authentication.storage, {
    type: 'postgres',
    sqlite: { path: '/x/auth.db' },
    postgres: { url: 'postgres://u:p@db/flags', connect_timeout: 5000, query_timeout: 2000, pool_wait_timeout: 5000, outage_grace: 0 },
  });
  t.throws(() => loadConfig({ env: { VEXIL_AUTHENTICATION_STORAGE_TYPE: 'mysql' } }), /authentication\.storage\.type: must be one of sqlite, postgres/);
  t.throws(() => loadConfig({ env: { VEXIL_AUTHENTICATION_CACHE_TTL: 'soon' } }), /authentication\.cache_ttl/);
});

t.test('the SQLite file: storage.sqlite.path, else <data_dir>/auth.db (relative to the working folder)', async (t) => {
  const dir = tempDir(t);
  const a = await startAuthServer(t, { dir, yaml: 'authentication:\n  methods:\n    token:\n      enabled: true\n' });
  t.equal(a.runtime.location, join(dir, 'data', 'auth.db'));
  await a.stop();
  const b = await startAuthServer(t, {
    dir,
    yaml: 'authentication:\n  storage:\n    sqlite:\n      path: elsewhere/tokens.db\n  methods:\n    token:\n      enabled: true\n',
  });
  t.equal(b.runtime.location, join(dir, 'elsewhere', 'tokens.db'));
  await b.stop();
  const c = await startAuthServer(t, { dir, yaml: '' });
  t.equal(c.runtime.location, 'none (authentication not in use)', 'no file when nothing uses authentication');
});
