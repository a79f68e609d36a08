/**
 * Expiry (interface §3) with an injected clock, and the in-memory lookup cache
 * (authentication.cache_ttl): a delete or expiry through the same process applies at once;
 * through another process sharing the store, within cache_ttl (0 = at once).
 */
import t from 'tap';
import { UNAUTHENTICATED, bootstrapTokenFrom, createToken, fakeClock, request, startAuthServer, tempDir } from './support.js';

const required = (cacheTtl: string) => `
authentication:
  required: true
  cache_ttl: ${cacheTtl}
  methods:
    token:
      enabled: true
`;

t.test('a token past expiresAt fails at once, cached or not', async (t) => {
  for (const ttl of ['5s', '0s']) {
    const s = await startAuthServer(t, { yaml: required(ttl) });
    const boot = bootstrapTokenFrom(s.logs)!;
    const expiresAt = new Date(s.clock.now + 3_600_000).toISOString();
    const made = await createToken(s.url, boot, { name: 'hour', expiresAt });
    const url = `${s.url}/api/v1/namespaces`;

    t.equal((await request(url, { token: made.clientToken })).status, 200, `${ttl}: valid`);
    s.clock.advance(3_600_000);
    t.equal((await request(url, { token: made.clientToken })).status, 200, `${ttl}: valid at exactly expiresAt`);
    s.clock.advance(1);
    const res = await request(url, { token: made.clientToken });
    t.equal(res.status, 401, `${ttl}: 1 ms later it is refused`);
    t.same(res.body, UNAUTHENTICATED);
    t.ok(
      s.logs.entries().some((e) => e.msg === 'request was not authenticated' && e.reason === 'authorization expired'),
      'the reason is in the log',
    );
    const cookie = await request(`${s.url}/auth/v1/self`, { cookie: made.clientToken });
    t.equal(cookie.status, 401, 'as a cookie too');
    t.equal((await request(url, { token: boot })).status, 200, 'a token without expiry never expires on its own');
    s.clock.advance(100 * 365 * 86_400_000);
    t.equal((await request(url, { token: boot })).status, 200, '...even a century later');
    await s.stop();
  }
});

t.test('a token created already expired is refused', async (t) => {
  const s = await startAuthServer(t, { yaml: required('5s') });
  const boot = bootstrapTokenFrom(s.logs)!;
  const made = await createToken(s.url, boot, { name: 'past', expiresAt: '2000-01-01T00:00:00Z' });
  t.equal(made.authentication.expiresAt, '2000-01-01T00:00:00.000Z', 'past times are accepted, as in Flipt');
  t.equal((await request(`${s.url}/api/v1/namespaces`, { token: made.clientToken })).status, 401);
});

t.test('two processes on one store: delete on A is seen by B within cache_ttl', async (t) => {
  const dir = tempDir(t);
  const clock = fakeClock();
  const a = await startAuthServer(t, { dir, clock, yaml: required('5s') });
  const boot = bootstrapTokenFrom(a.logs)!;
  const b = await startAuthServer(t, { dir, clock, yaml: required('5s') });
  t.notOk(bootstrapTokenFrom(b.logs), 'B found the bootstrap token already there');

  const made = await createToken(a.url, boot, { name: 'shared' });
  const onB = (token: string) => request(`${b.url}/api/v1/namespaces`, { token });
  t.equal((await onB(made.clientToken)).status, 200, 'created on A, works on B (and is cached on B)');

  const del = await request(`${a.url}/auth/v1/tokens/${String(made.authentication.id)}`, { token: boot, method: 'DELETE' });
  t.equal(del.status, 200);
  t.equal((await request(`${a.url}/api/v1/namespaces`, { token: made.clientToken })).status, 401, 'A refuses at once');
  t.equal((await onB(made.clientToken)).status, 200, 'B still has it cached');
  clock.advance(4_999);
  t.equal((await onB(made.clientToken)).status, 200, 'B: still within cache_ttl');
  clock.advance(1);
  t.equal((await onB(made.clientToken)).status, 401, 'B refuses once cache_ttl has passed');

  // Expiry set on A: B sees the new expiresAt after cache_ttl, but an expiry time reached is checked everywhere.
  const other = await createToken(a.url, boot, { name: 'other' });
  t.equal((await onB(other.clientToken)).status, 200);
  await request(`${a.url}/auth/v1/self/expire`, { token: other.clientToken, method: 'PUT' });
  clock.advance(1);
  t.equal((await request(`${a.url}/api/v1/namespaces`, { token: other.clientToken })).status, 401, 'A: expired at once');
  clock.advance(5_000);
  t.equal((await onB(other.clientToken)).status, 401, 'B: after cache_ttl');
});

t.test('cache_ttl: 0 turns the cache off: B refuses at once', async (t) => {
  const dir = tempDir(t);
  const clock = fakeClock();
  const a = await startAuthServer(t, { dir, clock, yaml: required('5s') });
  const boot = bootstrapTokenFrom(a.logs)!;
  const b = await startAuthServer(t, { dir, clock, yaml: required('0s') });
  const made = await createToken(a.url, boot, { name: 'shared' });
  t.equal((await request(`${b.url}/api/v1/namespaces`, { token: made.clientToken })).status, 200);
  await request(`${a.url}/auth/v1/tokens/${String(made.authentication.id)}`, { token: boot, method: 'DELETE' });
  t.equal((await request(`${b.url}/api/v1/namespaces`, { token: made.clientToken })).status, 401);
});
