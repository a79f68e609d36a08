/**
 * The session mechanism (src/auth/session.ts) and the CSRF rules (src/auth/csrf.ts) on their own,
 * over a real SQLite store: login state bound to the cookie and single use, the issued record and
 * its cookies, the bound on pending logins, the cross-origin and double-submit checks.
 */
import { join } from 'node:path';
import t from 'tap';
import { csrfProblem, csrfToken } from '../../src/auth/csrf.js';
import { AuthService } from '../../src/auth/service.js';
import { MAX_PENDING_LOGINS, Sessions, withForwardedPrefix } from '../../src/auth/session.js';
import { openSqliteAuthStore } from '../../src/auth/store/sqlite.js';
import type { AuthenticationConfig } from '../../src/config/types.js';
import { T0, fakeClock, tempDir } from './support.js';

function session(over: Partial<AuthenticationConfig['session']> = {}): AuthenticationConfig['session'] {
  return {
    domain: 'flags.example.com',
    secure: true,
    token_lifetime: 24 * 3600_000,
    state_lifetime: 600_000,
    csrf: { secure: true, trusted_origins: [] },
    ...over,
  };
}

function setup(t: { teardown(fn: () => void | Promise<void>): void }, over: Partial<AuthenticationConfig['session']> = {}) {
  const clock = fakeClock();
  const store = openSqliteAuthStore({ path: join(tempDir(t), 'auth.db') });
  const service = new AuthService({ store, clock: clock.clock, cacheTtlMs: 0 });
  t.teardown(() => service.close());
  return { clock, service, sessions: new Sessions({ service, session: session(over), clock: clock.clock }) };
}

t.test('login state: bound to the cookie, single use, per method and provider, expires', async (t) => {
  const { sessions, clock } = setup(t);
  const a = sessions.beginLogin('METHOD_OIDC', 'google', { verifier: 'v1', nonce: 'n1' });
  t.match(a.state, /^[A-Za-z0-9_-]{43}$/);
  t.match(a.cookie, new RegExp(`^svc_client_state=${a.state}; Path=/; Domain=flags\\.example\\.com; Max-Age=600; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$`));
  const label = 'handling OIDC callback';
  const finish = (state: string | undefined, cookie: string | undefined, provider = 'google') =>
    sessions.finishLogin({ method: 'METHOD_OIDC', provider, state, cookie, label });

  t.throws(() => finish(a.state, undefined), { code: 16, message: 'handling OIDC callback: missing state parameter' });
  t.throws(() => finish(undefined, a.state), { message: /missing state parameter/ });
  const b = sessions.beginLogin('METHOD_OIDC', 'google', { verifier: 'v2' });
  t.throws(() => finish(a.state, b.state), { code: 16, message: 'handling OIDC callback: unexpected state parameter' }, 'state from another browser');
  t.same(finish(a.state, a.state), { verifier: 'v1', nonce: 'n1' });
  t.throws(() => finish(a.state, a.state), { code: 16, message: /unknown or expired/ }, 'single use');

  t.throws(() => finish(b.state, b.state, 'okta'), { message: /unexpected state/ }, 'another provider cannot end it');
  t.throws(() => finish(b.state, b.state), { message: /unknown or expired/ }, 'and it is spent after that attempt');

  const c = sessions.beginLogin('METHOD_OIDC', 'google', {});
  clock.advance(600_001);
  t.throws(() => finish(c.state, c.state), { message: /unknown or expired/ }, 'past state_lifetime');
});

t.test('pending logins are bounded: the oldest go first', async (t) => {
  const { sessions } = setup(t);
  const first = sessions.beginLogin('METHOD_CODE_HOST', '', {});
  for (let i = 0; i < MAX_PENDING_LOGINS + 5; i++) sessions.beginLogin('METHOD_CODE_HOST', '', {});
  t.equal(sessions.pendingCount, MAX_PENDING_LOGINS);
  t.throws(() => sessions.finishLogin({ method: 'METHOD_CODE_HOST', provider: '', state: first.state, cookie: first.state, label: 'x' }), {
    message: /unknown or expired/,
  });
});

t.test('issue: a record with the metadata and token_lifetime, the token cookie, the state cookie dropped', async (t) => {
  const { sessions, service } = setup(t);
  const issued = await sessions.issue('METHOD_OIDC', { 'io.svc.auth.oidc.email': 'a@example.com' });
  t.equal(issued.created.authentication.method, 'METHOD_OIDC');
  t.equal(issued.created.authentication.expiresAt, T0 + 24 * 3600_000);
  const found = await service.lookup(issued.created.clientToken);
  t.ok(found.ok);
  t.equal(issued.cookies.length, 2, 'no CSRF cookie without csrf.key');
  t.equal(
    issued.cookies[0],
    `svc_client_token=${issued.created.clientToken}; Path=/; Domain=flags.example.com; Max-Age=86400; Expires=${new Date(T0 + 86400_000).toUTCString()}; HttpOnly; Secure; SameSite=Lax`,
  );
  t.match(issued.cookies[1], /^svc_client_state=; Path=\/; Domain=flags\.example\.com; Max-Age=0; /);
});

t.test('issue on localhost without Secure; with csrf.key a readable CSRF cookie', async (t) => {
  const { sessions } = setup(t, { domain: 'localhost', secure: false, csrf: { key: 'k', secure: true, trusted_origins: [] } });
  const issued = await sessions.issue('METHOD_OIDC', {});
  t.notMatch(issued.cookies[0], /Domain=|Secure/);
  t.match(issued.cookies[0], /HttpOnly; SameSite=Lax$/);
  t.equal(issued.cookies[2], `svc_csrf_token=${csrfToken('k', issued.created.clientToken)}; Path=/; Max-Age=86400; Expires=${new Date(T0 + 86400_000).toUTCString()}; SameSite=Lax`);
});

t.test('CSRF: unsafe cookie requests must come from here (or a trusted origin), and carry the token with csrf.key', async (t) => {
  const cfg = { trusted_origins: ['https://ui.example.com'] };
  const ok = (method: string, headers: Record<string, string>, c: { key?: string; trusted_origins: string[] } = cfg) =>
    t.equal(csrfProblem(method, { host: 'flags.example.com', ...headers }, 'tok', c), undefined, `${method} ${JSON.stringify(headers)} passes`);
  const refused = (method: string, headers: Record<string, string>, re: RegExp, c: { key?: string; trusted_origins: string[] } = cfg) =>
    t.match(csrfProblem(method, { host: 'flags.example.com', ...headers }, 'tok', c), re, `${method} ${JSON.stringify(headers)} refused`);

  ok('GET', { 'sec-fetch-site': 'cross-site' });
  ok('HEAD', { origin: 'https://evil.example' });
  ok('OPTIONS', { origin: 'https://evil.example' });
  ok('POST', { 'sec-fetch-site': 'same-origin' });
  ok('POST', { 'sec-fetch-site': 'none' });
  refused('POST', { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, /Sec-Fetch-Site/);
  refused('PUT', { 'sec-fetch-site': 'same-site', origin: 'https://other.example.com' }, /Sec-Fetch-Site/);
  ok('DELETE', { 'sec-fetch-site': 'cross-site', origin: 'https://ui.example.com' });
  ok('POST', {});
  ok('POST', { origin: 'https://flags.example.com' });
  ok('POST', { origin: 'http://FLAGS.example.com' });
  refused('POST', { origin: 'https://flags.example.com:8443' }, /Origin does not match Host/);
  refused('POST', { origin: 'null' }, /Origin does not match Host/);
  refused('PATCH', { origin: 'https://evil.example' }, /Origin does not match Host/);
  t.match(csrfProblem('POST', undefined, 'tok', cfg), /headers unavailable/);

  const keyed = { key: 'secret', trusted_origins: [] };
  refused('POST', { 'sec-fetch-site': 'same-origin' }, /missing CSRF token/, keyed);
  refused('POST', { 'sec-fetch-site': 'same-origin', 'x-csrf-token': csrfToken('secret', 'other') }, /invalid CSRF token/, keyed);
  refused('POST', { 'sec-fetch-site': 'same-origin', 'x-csrf-token': csrfToken('other', 'tok') }, /invalid CSRF token/, keyed);
  ok('POST', { 'sec-fetch-site': 'same-origin', 'x-csrf-token': csrfToken('secret', 'tok') }, keyed);
  ok('GET', {}, keyed);
});

t.test('X-Forwarded-Prefix in front of a path', async (t) => {
  t.equal(withForwardedPrefix(undefined, '/'), '/');
  t.equal(withForwardedPrefix('', '/'), '/');
  t.equal(withForwardedPrefix('/flags/', '/'), '/flags/');
  t.equal(withForwardedPrefix(' flags ', '/auth/v1/method'), '/flags/auth/v1/method');
  t.equal(withForwardedPrefix('/'.repeat(1_000_000) + 'x' + '/'.repeat(1_000_000), '/'), '/x/', '1 MB of slashes completes');
});
