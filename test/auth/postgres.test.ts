/**
 * PostgreSQL: the AuthStore contract, and two real `vexil serve` processes sharing one throwaway
 * PostgreSQL server (Debian `postgresql`, started on a loopback port in a temp folder).
 *
 * Without PostgreSQL the tests skip with the reason; under CI (any truthy CI) they fail instead, since CI
 * runs as root and scripts/test-setup.sh installs it there.
 */
import pg from 'pg';
import t from 'tap';
import { openPostgresAuthStore } from '../../src/auth/store/postgres.js';
import { reportMissing } from '../support/requirements.js';
import { postgresUnavailableReason, startPostgres } from '../support/throwaway-db.js';
import { startServe, writeServeConfig } from './process.js';
import { storeContract } from './store-contract.js';
import { request, tempDir } from './support.js';

/** The schema's defaults of authentication.storage.postgres.{connect,query,pool_wait}_timeout. */
const TIMEOUTS = { connectTimeoutMs: 5000, queryTimeoutMs: 5000, poolWaitTimeoutMs: 5000 };

const unavailable = postgresUnavailableReason();
if (unavailable !== undefined) {
  reportMissing(t, 'PostgreSQL', unavailable);
} else {
  const server = await startPostgres();
  t.teardown(() => server.close());
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  t.teardown(() => admin.end());
  let n = 0;
  const freshDatabase = async () => {
    const name = `vexil_${++n}`;
    await admin.query(`CREATE DATABASE ${name}`);
    return server.url.replace(/\/postgres$/, `/${name}`);
  };

  t.test('contract', async (t) => {
    let url = '';
    t.beforeEach(async () => {
      url = await freshDatabase();
    });
    storeContract(t, () => openPostgresAuthStore({ url, ...TIMEOUTS }));
  });

  t.test('schema: created once, versioned, refused when newer', async (t) => {
    const url = await freshDatabase();
    const stores = await Promise.all([1, 2, 3].map(() => openPostgresAuthStore({ url, ...TIMEOUTS })));
    await Promise.all(stores.map((s) => s.close()));
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    t.teardown(() => c.end());
    t.same((await c.query('SELECT version FROM auth_schema_version')).rows, [{ version: 2 }], 'replicas starting together migrate once');
    await c.query('UPDATE auth_schema_version SET version = 42');
    await t.rejects(openPostgresAuthStore({ url, ...TIMEOUTS }), /schema version 42, newer than this vexil knows \(2\)/);
  });

  t.test('a version-1 database is migrated in place: every record kept, none with a creator', async (t) => {
    const url = await freshDatabase();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    t.teardown(() => c.end());
    // The schema of vexil before records named their creator, with two records in it.
    await c.query(`CREATE TABLE auth_schema_version (version INTEGER NOT NULL);
      INSERT INTO auth_schema_version (version) VALUES (1);
      CREATE TABLE authentications (
        seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, hashed_client_token TEXT NOT NULL UNIQUE, method TEXT NOT NULL,
        metadata TEXT NOT NULL, expires_at TIMESTAMPTZ, created_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL);
      CREATE INDEX authentications_created ON authentications (created_at, seq);
      CREATE INDEX authentications_method_created ON authentications (method, created_at, seq);
      CREATE INDEX authentications_expiry ON authentications (method, expires_at) WHERE expires_at IS NOT NULL;
      CREATE TABLE operation_locks (name TEXT PRIMARY KEY, holder TEXT NOT NULL, acquired_at TIMESTAMPTZ NOT NULL, acquired_until TIMESTAMPTZ NOT NULL);
      INSERT INTO authentications (id, hashed_client_token, method, metadata, expires_at, created_at, updated_at) VALUES
        ('a1', 'h1', 'METHOD_TOKEN', '{"io.svc.auth.token.name":"boot"}', NULL, to_timestamp(1), to_timestamp(1)),
        ('a2', 'h2', 'METHOD_OIDC', '{"io.svc.auth.oidc.email":"x@example.com"}', to_timestamp(99), to_timestamp(2), to_timestamp(3));`);
    const stores = await Promise.all([1, 2].map(() => openPostgresAuthStore({ url, ...TIMEOUTS })));
    t.teardown(() => Promise.all(stores.map((s) => s.close())));
    const all = await stores[0]!.list({ offset: 0, limit: 10 });
    t.same(all, [
      { id: 'a1', hashedToken: 'h1', method: 'METHOD_TOKEN', metadata: { 'io.svc.auth.token.name': 'boot' }, createdAt: 1000, updatedAt: 1000 },
      { id: 'a2', hashedToken: 'h2', method: 'METHOD_OIDC', metadata: { 'io.svc.auth.oidc.email': 'x@example.com' }, expiresAt: 99000, createdAt: 2000, updatedAt: 3000 },
    ]);
    t.notOk(all.some((a) => 'createdBy' in a), 'no creator is known for records stored before');
    t.same((await c.query('SELECT version FROM auth_schema_version')).rows, [{ version: 2 }], 'two replicas opening it migrate once');
  });

  t.test('two vexil processes on one PostgreSQL', async (t) => {
    const url = await freshDatabase();
    const dir = tempDir(t);
    const yaml = (cacheTtl: string) => `
authentication:
  required: true
  cache_ttl: ${cacheTtl}
  storage:
    type: postgres
    postgres:
      url: ${JSON.stringify(url)}
  methods:
    token:
      enabled: true
      cleanup:
        interval: 1h
        grace_period: 1m
`;
    // Started together: they race for the bootstrap token and the first cleanup.
    const [a, b] = await Promise.all([
      startServe(t, writeServeConfig(dir, yaml('5s'), 'a.yml'), dir),
      startServe(t, writeServeConfig(dir, yaml('2s'), 'b.yml'), dir),
    ]);
    const c = await startServe(t, writeServeConfig(dir, yaml('0s'), 'c.yml'), dir);
    const all = [a, b, c];
    const firstPass = (e: Record<string, unknown>) =>
      e.msg === 'cleanup process deleting authentications' || e.msg === 'cleanup skipped: another replica holds the lease';
    await Promise.all(all.map((p) => p.waitForLog(firstPass)));

    const bootLines = all.flatMap((p) => p.entries().filter((e) => e.msg === 'access token created'));
    t.equal(bootLines.length, 1, 'one bootstrap token between the replicas');
    const boot = String(bootLines[0]!.client_token);
    const ran = all.flatMap((p) => p.entries().filter((e) => e.msg === 'cleanup process deleting authentications'));
    t.equal(ran.length, 1, 'only one replica ran the cleanup');
    t.equal(all.flatMap((p) => p.entries().filter((e) => e.msg === 'cleanup skipped: another replica holds the lease')).length, 2);
    t.ok(all.every((p) => p.entries().some((e) => e.msg === 'authentication store opened' && e.store === 'postgres' && !String(e.location).includes('@'))));

    const onA = await request(`${a.url}/auth/v1/method/token`, { token: boot, body: { name: 'from-a' } });
    t.equal(onA.status, 200);
    const token = onA.body.clientToken as string;
    const ns = (p: { url: string }) => request(`${p.url}/api/v1/namespaces`, { token });
    t.equal((await ns(b)).status, 200, 'created on A, works on B');
    t.equal((await ns(c)).status, 200, 'and on C');

    const del = await request(`${a.url}/auth/v1/tokens/${onA.body.authentication.id}`, { token: boot, method: 'DELETE' });
    t.equal(del.status, 200);
    t.equal((await ns(a)).status, 401, 'A refuses at once');
    t.equal((await ns(c)).status, 401, 'C (cache_ttl 0) refuses at once');
    // B (cache_ttl 2s) may still answer from its cache, but not beyond cache_ttl.
    let refusedOnB = false;
    for (let i = 0; i < 150 && !refusedOnB; i++) {
      refusedOnB = (await ns(b)).status === 401;
      if (!refusedOnB) await new Promise((r) => setTimeout(r, 100));
    }
    t.ok(refusedOnB, 'B refuses once its cache entry is older than cache_ttl');

    // Durable before the 200: A is killed right after answering; B reads the token.
    const last = await request(`${a.url}/auth/v1/method/token`, { token: boot, body: { name: 'last' } });
    await a.stop('SIGKILL');
    t.equal((await request(`${b.url}/auth/v1/self`, { token: last.body.clientToken })).status, 200, 'created on A before kill -9, works on B');

    const text = all.flatMap((p) => [...p.lines, p.stderr()]).join('\n');
    t.notOk(text.includes(token) || text.includes(last.body.clientToken), 'no created token in any replica output');
    t.equal(text.split(boot).length - 1, 1, 'the bootstrap token: logged once');
    t.notOk(text.includes(url), 'the database URL is not logged');
  });
}
