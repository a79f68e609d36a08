/**
 * The bootstrap token (interface §5.3, reference §2.3): random or a fixed value, an optional
 * expiration, logged once as `client_token`, never recreated once any token record exists.
 */
import t from 'tap';
import { T0, bootstrapTokenFrom, captureLogs, createToken, request, startAuthServer, tempDir } from './support.js';

const TOKEN_ON = `
authentication:
  required: true
  methods:
    token:
      enabled: true
`;

t.test('random: 32 bytes base64url, logged once at info as client_token, and it works', async (t) => {
  const s = await startAuthServer(t, { yaml: TOKEN_ON });
  const lines = s.logs.entries().filter((e) => e.msg === 'access token created');
  t.equal(lines.length, 1);
  t.equal(lines[0]!.level, 'info');
  const token = String(lines[0]!.client_token);
  t.match(token, /^[A-Za-z0-9_-]{43}$/);
  t.equal(Buffer.from(token, 'base64url').length, 32);
  t.equal(s.logs.text().split(token).length - 1, 1, 'the raw token appears exactly once in the whole log');

  const self = await request(`${s.url}/auth/v1/self`, { token });
  t.equal(self.status, 200);
  t.same(self.body.metadata, {
    'io.svc.auth.token.description': 'Initial token created when bootstrapping authentication',
    'io.svc.auth.token.name': 'initial_bootstrap_token',
  });
  t.notOk('expiresAt' in self.body, 'no expiry by default');
});

t.test('bootstrap.token sets the value (and it is still logged once); bootstrap.expiration sets expiresAt', async (t) => {
  const s = await startAuthServer(t, {
    yaml: `${TOKEN_ON}      bootstrap:\n        token: "s3cr3t!"\n        expiration: 24h\n`,
  });
  t.equal(bootstrapTokenFrom(s.logs), 's3cr3t!');
  const self = await request(`${s.url}/auth/v1/self`, { token: 's3cr3t!' });
  t.equal(self.status, 200);
  t.equal(self.body.expiresAt, new Date(T0 + 24 * 3_600_000).toISOString());
  s.clock.advance(24 * 3_600_000 + 1);
  t.equal((await request(`${s.url}/auth/v1/self`, { token: 's3cr3t!' })).status, 401, 'expires like any token');
});

t.test('not recreated on restart, nor when any token record exists (even an expired one)', async (t) => {
  const dir = tempDir(t);
  const first = await startAuthServer(t, { dir, yaml: `${TOKEN_ON}      bootstrap:\n        expiration: 1h\n` });
  const boot = bootstrapTokenFrom(first.logs)!;
  t.ok(boot);
  await first.stop();

  // Restart, an hour later: the bootstrap token has expired, but it still exists.
  const clock = first.clock;
  clock.advance(2 * 3_600_000);
  const second = await startAuthServer(t, { dir, clock, yaml: `${TOKEN_ON}      bootstrap:\n        token: another\n` });
  t.notOk(second.logs.entries().some((e) => e.msg === 'access token created'), 'nothing created, nothing logged');
  t.equal((await request(`${second.url}/auth/v1/self`, { token: 'another' })).status, 401, 'the configured value was not used');
  t.equal((await request(`${second.url}/auth/v1/self`, { token: boot })).status, 401, 'the first one is expired');
});

t.test('not created when the token method is disabled', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  required: true\n  methods:\n    token:\n      enabled: false\n      bootstrap:\n        token: x\n' });
  t.notOk(bootstrapTokenFrom(s.logs));
  t.equal((await request(`${s.url}/api/v1/namespaces`, { token: 'x' })).status, 401);
});

t.test('deleting every token does not bring a bootstrap token back until restart, then it does', async (t) => {
  const dir = tempDir(t);
  const logs = captureLogs();
  const s = await startAuthServer(t, { dir, logs, yaml: TOKEN_ON });
  const boot = bootstrapTokenFrom(logs)!;
  const other = await createToken(s.url, boot, { name: 'other' });
  const list = await request(`${s.url}/auth/v1/tokens`, { token: boot });
  for (const a of list.body.authentications as Array<{ id: string }>) {
    await request(`${s.url}/auth/v1/tokens/${a.id}`, { token: other.clientToken, method: 'DELETE' });
  }
  t.equal((await request(`${s.url}/api/v1/namespaces`, { token: boot })).status, 401);
  await s.stop();
  const again = await startAuthServer(t, { dir, yaml: TOKEN_ON });
  const fresh = bootstrapTokenFrom(again.logs);
  t.ok(fresh, 'an empty store gets a new bootstrap token at the next start');
  t.not(fresh, boot);
});
