/**
 * Cleanup (interface §5.4, reference §2.15) with an injected clock: records whose expiresAt plus
 * grace_period has passed are deleted, per method; records without expiry never are. The loop
 * runs once at start, then every interval, and holds a lease so one replica cleans at a time.
 */
import { join } from 'node:path';
import t from 'tap';
import { AuditTrail } from '../../src/auth/audit.js';
import { runCleanup, startCleanup } from '../../src/auth/cleanup.js';
import { clientAddressReader } from '../../src/http/client-address.js';
import { openSqliteAuthStore } from '../../src/auth/store/sqlite.js';
import { bootstrapTokenFrom, captureLogs, createToken, fakeClock, request, startAuthServer, tempDir } from './support.js';
import { newAuth } from './store-contract.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

t.test('through the API: expired tokens stay (refused) during the grace period, then go', async (t) => {
  const s = await startAuthServer(t, {
    yaml: `
authentication:
  required: true
  methods:
    token:
      enabled: true
      cleanup:
        interval: 1h
        grace_period: 30m
`,
  });
  const boot = bootstrapTokenFrom(s.logs)!;
  const made = await createToken(s.url, boot, { name: 'short', expiresAt: new Date(s.clock.now + 10 * MIN).toISOString() });
  const id = String(made.authentication.id);
  const schedule = { method: 'METHOD_TOKEN' as const, interval: HOUR, gracePeriod: 30 * MIN };
  const store = s.runtime.service.store;
  const get = () => request(`${s.url}/auth/v1/tokens/${id}`, { token: boot });
  const deps = { clock: s.clock.clock, logger: s.logs.logger, audit: s.runtime.audit };

  s.clock.advance(11 * MIN);
  t.equal((await request(`${s.url}/auth/v1/self`, { token: made.clientToken })).status, 401, 'expired: refused');
  t.match(await runCleanup(store, schedule, deps), { ran: true, deleted: 0 });
  t.equal((await get()).status, 200, 'kept during the grace period (audit)');

  s.clock.advance(30 * MIN);
  t.match(await runCleanup(store, schedule, deps, 'another-replica'), { ran: false }, 'the lease is held for the interval');
  const out = await runCleanup(store, schedule, deps);
  t.match(out, { ran: true, deleted: 1, expired: [{ id, method: 'METHOD_TOKEN' }] });
  t.equal((await get()).status, 404, 'deleted once expiresAt + grace_period has passed');
  t.equal((await request(`${s.url}/auth/v1/self`, { token: boot })).status, 200, 'the bootstrap token (no expiry) stays');
  const logged = s.logs.entries().filter((e) => e.msg === 'cleanup process deleting authentications');
  t.equal(logged.length, 2, 'the skipped pass is not a cleanup');
  t.match(logged[1], { level: 'info', method: 'METHOD_TOKEN', deleted: 1, expired_before: new Date(s.clock.now - 30 * MIN).toISOString() });
  const audited = s.logs.entries().filter((e) => e.msg === 'audit' && (e.audit as { type: string }).type === 'io.vexil.auth.expired');
  t.equal(audited.length, 1, 'one audit event per deleted record');
  t.match(audited[0]!.audit, {
    type: 'io.vexil.auth.expired',
    origin: 'cleanup',
    time: new Date(s.clock.now).toISOString(),
    subject: { authenticationId: id, method: 'METHOD_TOKEN', metadata: { 'io.svc.auth.token.name': 'short' } },
  });
  t.notOk('actor' in (audited[0]!.audit as object) || 'address' in (audited[0]!.audit as object), 'nobody asked for it: no actor, no address');
});

t.test('startCleanup: a pass at once for each method, none after stop()', async (t) => {
  const dir = tempDir(t);
  const store = openSqliteAuthStore({ path: join(dir, 'auth.db') });
  t.teardown(() => store.close());
  const clock = fakeClock();
  const logs = captureLogs();
  await store.create(newAuth({ expiresAt: clock.now - 2 * HOUR }));
  await store.create(newAuth({ method: 'METHOD_OIDC', expiresAt: clock.now - 2 * HOUR }));
  await store.create(newAuth({ method: 'METHOD_OIDC', expiresAt: clock.now - 1 }));
  const cleaner = startCleanup(
    store,
    [
      { method: 'METHOD_TOKEN', interval: HOUR, gracePeriod: 30 * MIN },
      { method: 'METHOD_OIDC', interval: HOUR, gracePeriod: 30 * MIN },
    ],
    { clock: clock.clock, logger: logs.logger, audit: new AuditTrail(logs.logger, clock.clock, clientAddressReader([])) },
  );
  // The first passes start immediately; stop() waits for them.
  await cleaner.stop();
  const ran = logs.entries().filter((e) => e.msg === 'cleanup process deleting authentications');
  t.same(ran.map((e) => [e.method, e.deleted]).sort(), [['METHOD_OIDC', 1], ['METHOD_TOKEN', 1]]);
  t.equal((await store.list({ offset: 0, limit: 10 })).length, 1, 'the recently expired OIDC record is kept');
});

t.test('the server runs its first cleanup at start (cleanup enabled)', async (t) => {
  const s = await startAuthServer(t, { cleanup: true, yaml: 'authentication:\n  methods:\n    token:\n      enabled: true\n' });
  // The pass is started during startAuthentication; wait for its log line.
  for (let i = 0; i < 100 && !s.logs.entries().some((e) => e.msg === 'cleanup process deleting authentications'); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  t.ok(s.logs.entries().some((e) => e.msg === 'cleanup process deleting authentications' && e.method === 'METHOD_TOKEN'));
});
