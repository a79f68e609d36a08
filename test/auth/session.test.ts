/**
 * The session mechanism (src/auth/session.ts), the sealed login state (src/auth/login-state.ts)
 * and the CSRF rules (src/auth/csrf.ts) on their own, over a real SQLite store: login state sealed
 * in the cookie (bound to the state value, method, provider and expiry; tampered, foreign-key,
 * oversized cookies refused), the key each configuration derives, the issued record and its
 * cookies, the cross-origin and double-submit checks.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { clearCookie, cookieDomain } from '../../src/auth/cookies.js';
import { csrfProblem, csrfToken } from '../../src/auth/csrf.js';
import { MAX_SEALED_CHARS, loginStateKey, sealLoginState, unsealLoginState } from '../../src/auth/login-state.js';
import { AuthService } from '../../src/auth/service.js';
import { Sessions, withForwardedPrefix } from '../../src/auth/session.js';
import { openSqliteAuthStore } from '../../src/auth/store/sqlite.js';
import { CLIENT_TOKEN_COOKIE } from '../../src/auth/types.js';
import { loadConfig } from '../../src/config/load.js';
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

const KEY = Buffer.alloc(32, 7);

function setup(t: { teardown(fn: () => void | Promise<void>): void }, over: Partial<AuthenticationConfig['session']> = {}, stateKey = KEY) {
  const clock = fakeClock();
  const store = openSqliteAuthStore({ path: join(tempDir(t), 'auth.db') });
  const service = new AuthService({ store, clock: clock.clock, cacheTtlMs: 0 });
  t.teardown(() => service.close());
  const sessionConfig = session(over);
  const make = (key: Buffer) => new Sessions({ service, session: sessionConfig, clock: clock.clock, stateKey: key });
  return { clock, service, sessions: make(stateKey), make };
}

/** The `svc_client_state` value of a Set-Cookie line. */
function cookieValue(setCookie: string): string {
  return /^svc_client_state=([^;]*);/.exec(setCookie)![1]!;
}

const LABEL = 'handling OIDC callback';

t.test('login state: sealed in the cookie, bound to the state, method and provider; expires', async (t) => {
  const { sessions, clock } = setup(t);
  const a = sessions.beginLogin('METHOD_OIDC', 'google', { verifier: 'v1', nonce: 'n1' });
  t.match(a.state, /^[A-Za-z0-9_-]{43}$/);
  const sealedA = cookieValue(a.cookie);
  t.match(a.cookie, /^svc_client_state=[A-Za-z0-9_-]+; Path=\/; Domain=flags\.example\.com; Max-Age=600; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/);
  t.notOk(sealedA.includes(a.state), 'the state is not readable in the cookie');
  t.notOk(Buffer.from(sealedA, 'base64url').toString('latin1').includes('v1'), 'nor the verifier');
  const finish = (state: string | undefined, cookie: string | undefined, provider = 'google', method: 'METHOD_OIDC' | 'METHOD_CODE_HOST' = 'METHOD_OIDC') =>
    sessions.finishLogin({ method, provider, state, cookie, label: LABEL });

  t.throws(() => finish(a.state, undefined), { code: 16, message: 'handling OIDC callback: missing state parameter' });
  t.throws(() => finish(undefined, sealedA), { message: /missing state parameter/ });
  const b = sessions.beginLogin('METHOD_OIDC', 'google', { verifier: 'v2' });
  const sealedB = cookieValue(b.cookie);
  t.throws(() => finish(a.state, sealedB), { code: 16, message: 'handling OIDC callback: unexpected state parameter' }, 'state from another browser');
  t.throws(() => finish(a.state, a.state), { code: 16, message: 'handling OIDC callback: invalid login state, please log in again' }, 'the bare state is no cookie');
  t.throws(() => finish(b.state, sealedB, 'okta'), { message: /unexpected state/ }, 'another provider cannot end it');
  t.throws(() => finish(b.state, sealedB, '', 'METHOD_CODE_HOST'), { message: /unexpected state/ }, 'nor another method');
  t.same(finish(a.state, sealedA), { verifier: 'v1', nonce: 'n1' });
  t.same(finish(b.state, sealedB), { verifier: 'v2' }, 'refused attempts leave a login usable');

  const c = sessions.beginLogin('METHOD_OIDC', 'google', {});
  clock.advance(600_000);
  t.same(finish(c.state, cookieValue(c.cookie)), {}, 'usable up to state_lifetime');
  clock.advance(1);
  t.throws(() => finish(c.state, cookieValue(c.cookie)), { code: 16, message: 'handling OIDC callback: expired login state, please log in again' }, 'past state_lifetime');
});

t.test('a sealed login state: altered, sealed under another key, oversized or malformed cookies are refused', async (t) => {
  const { sessions, make } = setup(t);
  const begun = sessions.beginLogin('METHOD_CODE_HOST', '', { redirectUri: 'https://flags.example.com/auth/v1/method/code_host/callback' });
  const sealed = cookieValue(begun.cookie);
  const finish = (s: Sessions, cookie: string) => s.finishLogin({ method: 'METHOD_CODE_HOST', provider: '', state: begun.state, cookie, label: LABEL });
  const invalid = { code: 16, message: 'handling OIDC callback: invalid login state, please log in again' };

  const bytes = Buffer.from(sealed, 'base64url');
  for (const at of [0, 12, 20, bytes.length - 1]) {
    const altered = Buffer.from(bytes);
    altered[at] = altered[at]! ^ 1;
    t.throws(() => finish(sessions, altered.toString('base64url')), invalid, `byte ${at} flipped (IV, ciphertext, tag)`);
  }
  t.throws(() => finish(sessions, bytes.subarray(0, bytes.length - 1).toString('base64url')), invalid, 'truncated');
  t.throws(() => finish(sessions, Buffer.concat([bytes, Buffer.from([0])]).toString('base64url')), invalid, 'extended');
  t.throws(() => finish(sessions, `${sealed}=`), invalid, 'not base64url');
  t.throws(() => finish(sessions, 'AAAA'), invalid, 'too short');
  t.throws(() => finish(make(Buffer.alloc(32, 8)), sealed), invalid, 'another configuration (another key) cannot open it');
  t.same(finish(make(Buffer.alloc(32, 7)), sealed), { redirectUri: 'https://flags.example.com/auth/v1/method/code_host/callback' }, 'the same key can, in any Sessions');

  // Sealed correctly but made up: only someone holding the key could, and it still must match.
  const forged = sealLoginState(KEY, { state: 'other', method: 'METHOD_CODE_HOST', provider: '', expiresAt: T0 + 1, data: {} });
  t.throws(() => finish(sessions, forged), { message: /unexpected state parameter/ });

  // Size is checked before decoding: a 1 MB cookie is refused at once.
  const huge = 'A'.repeat(1_000_000);
  t.equal(unsealLoginState(KEY, huge), undefined);
  t.throws(() => finish(sessions, huge), invalid, '1 MB cookie');
  t.throws(() => finish(sessions, sealed + 'A'.repeat(MAX_SEALED_CHARS)), invalid, 'a valid cookie padded past the bound');
  t.throws(() => sessions.beginLogin('METHOD_CODE_HOST', '', { redirectUri: 'x'.repeat(4_000) }), /over 3072/, 'never sealed past the bound');
});

t.test('the sealing key: the same for the same secrets, another for other secrets; csrf.key wins', async (t) => {
  const dir = tempDir(t);
  let n = 0;
  const auth = (yaml: string): AuthenticationConfig => {
    const file = join(dir, `vexil-${n++}.yml`);
    writeFileSync(file, `authentication:\n  session:\n    domain: flags.example.com\n${yaml}`);
    return loadConfig({ file, cwd: dir, env: {} }).authentication;
  };
  const provider = (name: string, secret: string) => `        ${name}:
          issuer_url: https://idp.example.com
          client_id: c
          client_secret: ${secret}
          redirect_address: https://flags.example.com
`;
  const oidc = (...providers: string[]) => `  methods:\n    oidc:\n      enabled: true\n      providers:\n${providers.join('')}`;
  const hex = (a: AuthenticationConfig) => loginStateKey(a).toString('hex');

  const base = hex(auth(oidc(provider('google', 's1'), provider('okta', 's2'))));
  t.match(base, /^[0-9a-f]{64}$/);
  t.equal(hex(auth(oidc(provider('okta', 's2'), provider('google', 's1')))), base, 'provider order in the file does not matter');
  t.not(hex(auth(oidc(provider('google', 's1'), provider('okta', 's3')))), base, 'another client secret, another key');
  t.not(hex(auth(oidc(provider('google', 's2'), provider('okta', 's1')))), base, 'secrets swapped between providers, another key');
  const withCsrf = (secret: string) => auth(`    csrf:\n      key: shared-csrf-key\n${oidc(provider('google', secret))}`);
  t.equal(hex(withCsrf('s1')), hex(withCsrf('other')), 'csrf.key set: the client secrets do not matter');
  t.not(hex(withCsrf('s1')), hex(auth(oidc(provider('google', 's1')))));
  t.not(hex(auth('')), hex(auth('')), 'no session-compatible method: a random key (nothing to share)');
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

t.test('Domain only for a dotted host name: a bare host (single label, IP address) gets a host-only cookie', async (t) => {
  for (const domain of ['vexil', 'flags', 'localhost', '127.0.0.1', '10.0.0.5', '[::1]', '[fd00::5]']) {
    const { sessions } = setup(t, { domain });
    const issued = await sessions.issue('METHOD_OIDC', {});
    t.notMatch(issued.cookies[0], /Domain=/, `${domain}: the session cookie is host-only`);
    t.notMatch(issued.cookies[1], /Domain=/, `${domain}: the cleared state cookie too`);
    t.equal(clearCookie(CLIENT_TOKEN_COOKIE, domain), 'svc_client_token=; Path=/; Max-Age=0', `${domain}: cleared without Domain`);
  }
  for (const [domain, attribute] of [['flags.example.com', 'flags.example.com'], ['vexil.internal.', 'vexil.internal']] as const) {
    const { sessions } = setup(t, { domain });
    t.match((await sessions.issue('METHOD_OIDC', {})).cookies[0], `; Domain=${attribute}; `, `${domain}: Domain=${attribute}`);
    t.equal(cookieDomain(domain), attribute);
  }
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
  t.equal(withForwardedPrefix('\\evil.example', '/'), '/', 'a backslash: ignored (browsers read /\\host/ as //host/)');
  t.equal(withForwardedPrefix('//evil.example', '/'), '/evil.example/', 'outer slashes are trimmed as before');
  t.equal(withForwardedPrefix('a//b', '/'), '/', 'an empty segment: ignored');
  t.equal(withForwardedPrefix('a/../b', '/'), '/', 'a dot segment: ignored');
});
