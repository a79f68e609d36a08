/**
 * Browser sessions over HTTP (issue 13 item 5), with sessions made by a real OIDC login against a
 * real `oidc-provider`: cross-site requests refused for cookie-authenticated unsafe requests and
 * Bearer requests unaffected, the double-submit token with csrf.key, logout clearing both cookies,
 * email_matches enforced per request, the config rules at start, the warning without a
 * session-compatible method; the session store on PostgreSQL as well as SQLite.
 */
import t, { type Test } from 'tap';
import { runCleanup } from '../../src/auth/cleanup.js';
import { csrfToken } from '../../src/auth/csrf.js';
import { loadConfig } from '../../src/config/load.js';
import { redactUrl } from '../../src/http/redact-url.js';
import { runCli } from '../cli/run-cli.js';
import { CookieJar, followToRedirect, startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';
import { reportMissing } from '../support/requirements.js';
import { postgresUnavailableReason, startPostgres } from '../support/throwaway-db.js';
import { writeServeConfig } from './process.js';
import { bootstrapTokenFrom, fakeClock, startAuthServer, tempDir, type AuthServer } from './support.js';

type T = { teardown(fn: () => void | Promise<void>): void };

const CLIENT_SECRET = 'sessions-oidc-secret-77c1';
const REDIRECT_URI = 'http://vexil.test/auth/v1/method/oidc/idp/callback';
const BOOTSTRAP = 'bootstrap-token-for-sessions-test';

async function provider(t: T): Promise<TestOidcProvider> {
  const p = await startOidcProvider({
    clientId: 'vexil',
    clientSecret: CLIENT_SECRET,
    redirectUri: REDIRECT_URI,
    requirePkce: true,
    accounts: {
      alice: { email: 'alice@example.test', email_verified: true, name: 'Alice' },
      // No email_verified claim.
      dave: { email: 'dave@example.test', name: 'Dave' },
    },
  });
  t.teardown(() => p.close());
  return p;
}

function yaml(issuer: string, opts: { session?: string; emailMatches?: string; storage?: string } = {}): string {
  return `authentication:
  required: true
${opts.storage ?? ''}  session:
    domain: 127.0.0.1
${opts.session ?? ''}  methods:
    token:
      enabled: true
      bootstrap: { token: ${BOOTSTRAP} }
    oidc:
      enabled: true
      email_matches: ${opts.emailMatches ?? '[]'}
      providers:
        idp:
          issuer_url: ${issuer}
          client_id: vexil
          client_secret: ${CLIENT_SECRET}
          redirect_address: http://vexil.test
          scopes: [email]
          use_pkce: true
`;
}

async function login(server: AuthServer, jar: CookieJar): Promise<void> {
  const res = await fetch(`${server.url}/auth/v1/method/oidc/idp/authorize`, { headers: { cookie: jar.header() } });
  jar.take(res);
  const { authorizeUrl } = (await res.json()) as { authorizeUrl: string };
  const redirected = await followToRedirect(authorizeUrl, REDIRECT_URI, jar);
  const cb = await fetch(`${server.url}${redirected.pathname}${redirected.search}`, { redirect: 'manual', headers: { cookie: jar.header() } });
  jar.take(cb);
  if (cb.status !== 302) throw new Error(`login failed: ${cb.status} ${await cb.text()}`);
}

const EVAL_BODY = JSON.stringify({ namespaceKey: 'default', flagKey: 'new-checkout', entityId: 'e1', context: {} });

async function evaluate(server: AuthServer, headers: Record<string, string>) {
  const res = await fetch(`${server.url}/evaluate/v1/boolean`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: EVAL_BODY });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

t.test('cross-site requests with the session cookie are refused; same-origin, trusted origins and Bearer pass', async (t) => {
  const p = await provider(t);
  const server = await startAuthServer(t, {
    yaml: yaml(p.issuer, { session: '    csrf:\n      trusted_origins: [https://console.example.test]\n' }),
    clock: fakeClock(Date.now()),
  });
  const jar = new CookieJar();
  await login(server, jar);
  const cookie = jar.header();
  const host = new URL(server.url).host;

  const crossSite = await evaluate(server, { cookie, 'sec-fetch-site': 'cross-site', origin: 'https://evil.test' });
  t.equal(crossSite.status, 403);
  t.same(crossSite.body, { code: 7, message: 'permission denied: cross-origin request detected from Sec-Fetch-Site header', details: [] });
  const sameSite = await evaluate(server, { cookie, 'sec-fetch-site': 'same-site', origin: 'https://other.127.0.0.1' });
  t.equal(sameSite.status, 403, 'a sibling site is another origin too');
  const oldBrowser = await evaluate(server, { cookie, origin: 'https://evil.test' });
  t.equal(oldBrowser.status, 403);
  t.match(oldBrowser.body, { message: /Origin does not match Host/ });

  t.equal((await evaluate(server, { cookie, 'sec-fetch-site': 'same-origin', origin: `http://${host}` })).status, 200, 'same origin');
  t.equal((await evaluate(server, { cookie, origin: `http://${host}` })).status, 200, 'Origin equal to Host');
  t.equal((await evaluate(server, { cookie })).status, 200, 'no Origin, no Fetch Metadata: not a browser');
  t.equal((await evaluate(server, { cookie, 'sec-fetch-site': 'cross-site', origin: 'https://console.example.test' })).status, 200, 'trusted origin');
  t.equal(
    (await evaluate(server, { authorization: `Bearer ${BOOTSTRAP}`, 'sec-fetch-site': 'cross-site', origin: 'https://evil.test' })).status,
    200,
    'Bearer requests are not affected',
  );

  // A Koa route too (not only the evaluation fast path): logging out from another site is refused.
  const expire = await fetch(`${server.url}/auth/v1/self/expire`, { method: 'PUT', headers: { cookie, 'sec-fetch-site': 'cross-site', origin: 'https://evil.test' } });
  t.equal(expire.status, 403);
  const read = await fetch(`${server.url}/api/v1/namespaces`, { headers: { cookie, 'sec-fetch-site': 'cross-site' } });
  t.equal(read.status, 200, 'GET is never checked');
  t.equal((await fetch(`${server.url}/auth/v1/self`, { headers: { cookie } })).status, 200, 'the session still works');
});

t.test('csrf.key: the readable svc_csrf_token cookie must come back in X-CSRF-Token', async (t) => {
  const p = await provider(t);
  const server = await startAuthServer(t, { yaml: yaml(p.issuer, { session: '    csrf:\n      key: csrf-signing-key\n' }), clock: fakeClock(Date.now()) });
  const jar = new CookieJar();
  await login(server, jar);
  const csrf = jar.cookies.get('svc_csrf_token');
  t.equal(csrf, csrfToken('csrf-signing-key', jar.cookies.get('svc_client_token')!));
  const cookie = jar.header();
  const missing = await evaluate(server, { cookie, 'sec-fetch-site': 'same-origin' });
  t.equal(missing.status, 403);
  t.match(missing.body, { code: 7, message: /missing CSRF token/ });
  t.equal((await evaluate(server, { cookie, 'sec-fetch-site': 'same-origin', 'x-csrf-token': 'forged' })).status, 403);
  t.equal((await evaluate(server, { cookie, 'sec-fetch-site': 'same-origin', 'x-csrf-token': csrf! })).status, 200);
  t.equal((await evaluate(server, { authorization: `Bearer ${BOOTSTRAP}` })).status, 200, 'Bearer needs no CSRF token');

  const logout = await fetch(`${server.url}/auth/v1/self/expire`, { method: 'PUT', headers: { cookie, 'sec-fetch-site': 'same-origin', 'x-csrf-token': csrf! } });
  t.equal(logout.status, 200);
  jar.take(logout);
  t.notOk(jar.cookies.has('svc_csrf_token'), 'logging out drops the CSRF cookie too');
  t.notOk(jar.cookies.has('svc_client_token'));
});

async function expireFlow(t: Test, server: AuthServer) {
  const jar = new CookieJar();
  await login(server, jar);
  const cookie = jar.header();
  const me = (await (await fetch(`${server.url}/auth/v1/self`, { headers: { cookie } })).json()) as { id: string; method: string };
  t.equal(me.method, 'METHOD_OIDC');
  const listed = (await (await fetch(`${server.url}/auth/v1/tokens?method=METHOD_OIDC`, { headers: { authorization: `Bearer ${BOOTSTRAP}` } })).json()) as {
    authentications: Array<{ id: string }>;
  };
  t.ok(listed.authentications.some((a) => a.id === me.id), 'the session record is stored and listed');
  const res = await fetch(`${server.url}/auth/v1/self/expire`, { method: 'PUT', headers: { cookie, 'sec-fetch-site': 'same-origin' } });
  t.equal(res.status, 200);
  const cleared = res.headers.getSetCookie();
  // session.domain 127.0.0.1 is an IP address: the cookies are host-only, set and cleared without Domain.
  t.ok(cleared.includes('svc_client_token=; Path=/; Max-Age=0'), 'svc_client_token cleared');
  t.ok(cleared.includes('svc_client_state=; Path=/; Max-Age=0'), 'svc_client_state cleared');
  t.ok(cleared.includes('svc_csrf_token=; Path=/; Max-Age=0'), 'svc_csrf_token cleared');
  server.clock.advance(1); // expired "now": past it from the next millisecond on
  const after = await fetch(`${server.url}/auth/v1/self`, { headers: { cookie } });
  t.equal(after.status, 401, 'the expired session no longer authenticates');
}

t.test('PUT /auth/v1/self/expire ends an OIDC session and clears both cookies (SQLite)', async (t) => {
  const p = await provider(t);
  const server = await startAuthServer(t, { yaml: yaml(p.issuer), clock: fakeClock(Date.now()) });
  await expireFlow(t, server);
});

const pgUnavailable = postgresUnavailableReason();
t.test('the same on PostgreSQL', async (t) => {
  if (pgUnavailable !== undefined) {
    reportMissing(t, 'PostgreSQL', pgUnavailable);
    return;
  }
  const pg = await startPostgres();
  t.teardown(() => pg.close());
  const p = await provider(t);
  const server = await startAuthServer(t, {
    yaml: yaml(p.issuer, { storage: `  storage:\n    type: postgres\n    postgres:\n      url: ${pg.url}\n` }),
    clock: fakeClock(Date.now()),
  });
  t.match(server.runtime.location, /^postgres:\/\//);
  await expireFlow(t, server);
});

t.test('email_matches holds on every request: a session stops working when its email no longer matches', async (t) => {
  const p = await provider(t);
  const dir = tempDir(t);
  const first = await startAuthServer(t, { dir, yaml: yaml(p.issuer), clock: fakeClock(Date.now()) });
  const jar = new CookieJar();
  await login(first, jar);
  t.equal((await fetch(`${first.url}/auth/v1/self`, { headers: { cookie: jar.header() } })).status, 200);
  await first.stop();
  const second = await startAuthServer(t, { dir, yaml: yaml(p.issuer, { emailMatches: "['^.*@corp\\.test$']" }), clock: fakeClock(Date.now()) });
  const refused = await fetch(`${second.url}/api/v1/namespaces`, { headers: { cookie: jar.header() } });
  t.equal(refused.status, 401);
});

t.test('email_matches on every request also needs a verified email: a session made without the claim stops working', async (t) => {
  const p = await provider(t);
  const dir = tempDir(t);
  const first = await startAuthServer(t, { dir, yaml: yaml(p.issuer), clock: fakeClock(Date.now()) });
  const jars = { alice: new CookieJar(), dave: new CookieJar() };
  for (const who of ['alice', 'dave'] as const) {
    p.nextLogin = who;
    await login(first, jars[who]);
    t.equal((await fetch(`${first.url}/auth/v1/self`, { headers: { cookie: jars[who].header() } })).status, 200, `${who}: logged in without email_matches`);
  }
  await first.stop();
  const second = await startAuthServer(t, { dir, yaml: yaml(p.issuer, { emailMatches: "['^.*@example\\.test$']" }), clock: fakeClock(Date.now()) });
  const status = async (who: 'alice' | 'dave') => (await fetch(`${second.url}/api/v1/namespaces`, { headers: { cookie: jars[who].header() } })).status;
  t.equal(await status('alice'), 200, 'a verified email that matches');
  t.equal(await status('dave'), 401, 'an email that matches but was never verified');
});

t.test('config rules at start', async (t) => {
  const dir = tempDir(t);
  const noDomain = writeServeConfig(
    dir,
    'authentication:\n  methods:\n    oidc:\n      enabled: true\n      providers:\n        idp: { issuer_url: "http://127.0.0.1:1", client_id: c, client_secret: oidc-secret-not-echoed, redirect_address: "http://x" }\n',
  );
  const run = await runCli(['serve', '--config', noDomain], { cwd: dir });
  t.equal(run.code, 1);
  t.match(run.stderr, 'authentication.session.domain: required when a session-compatible method is enabled (oidc)');
  t.notMatch(run.stdout + run.stderr, 'oidc-secret-not-echoed');

  t.throws(
    () =>
      loadConfig({
        env: {
          VEXIL_AUTHENTICATION_SESSION_DOMAIN: 'flags.test',
          VEXIL_AUTHENTICATION_METHODS_OIDC_ENABLED: 'true',
          VEXIL_AUTHENTICATION_METHODS_OIDC_EMAIL_MATCHES: '^.*@corp\\.test$',
          VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS_IDP_ISSUER_URL: 'http://127.0.0.1:1',
          VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS_IDP_CLIENT_ID: 'c',
          VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS_IDP_CLIENT_SECRET: 's',
          VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS_IDP_REDIRECT_ADDRESS: 'http://x',
          VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS_IDP_SCOPES: 'profile',
        },
      }),
    /authentication\.methods\.oidc\.providers\.idp\.scopes: must contain email when email_matches is not empty/,
  );
  for (const [given, bare] of [
    ['https://flags.example.test:8443', 'flags.example.test'],
    ['http://localhost:8080/', 'localhost'],
    ['flags.example.test', 'flags.example.test'],
  ]) {
    t.equal(loadConfig({ env: { VEXIL_AUTHENTICATION_SESSION_DOMAIN: given! } }).authentication.session.domain, bare, `${given} → ${bare}`);
  }
  const defaults = loadConfig({ env: {} }).authentication.session.csrf;
  t.same(defaults, { secure: true, trusted_origins: [] });
});

t.test('required without a session-compatible method: one warning that the UI needs a static token', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  required: true\n  methods:\n    token:\n      enabled: true\n' });
  const warnings = s.logs.entries().filter((e) => e.level === 40 || e.level === 'warn');
  t.equal(warnings.filter((e) => String(e.msg).includes('the UI then needs a static client token')).length, 1);
  t.equal(bootstrapTokenFrom(s.logs) !== undefined, true);
});

t.test('request log lines carry no OAuth code or state (redaction in linear time)', async (t) => {
  t.equal(redactUrl('/auth/v1/method/oidc/idp/callback?code=abc&state=def&iss=x'), '/auth/v1/method/oidc/idp/callback?code=REDACTED&state=REDACTED&iss=x');
  t.equal(redactUrl('/api/v1/namespaces'), '/api/v1/namespaces');
  t.equal(redactUrl('/x?Code=1&codes=2&=3&code'), '/x?Code=REDACTED&codes=2&=3&code');
  const big = `/x?${'a=1&'.repeat(250_000)}code=secret`;
  t.equal(redactUrl(big).endsWith('code=REDACTED'), true, '1 MB of parameters completes');
});

t.test('the callback redirect ignores an X-Forwarded-Prefix that is not a plain path (no Location a browser reads as another host)', async (t) => {
  const p = await provider(t);
  const server = await startAuthServer(t, { yaml: yaml(p.issuer), clock: fakeClock(Date.now()) });
  for (const prefix of ['\\evil.example', '/a\\b/', '/x/../y']) {
    const jar = new CookieJar();
    const res = await fetch(`${server.url}/auth/v1/method/oidc/idp/authorize`);
    jar.take(res);
    const { authorizeUrl } = (await res.json()) as { authorizeUrl: string };
    const redirected = await followToRedirect(authorizeUrl, REDIRECT_URI, jar);
    const cb = await fetch(`${server.url}${redirected.pathname}${redirected.search}`, {
      redirect: 'manual',
      headers: { cookie: jar.header(), 'x-forwarded-prefix': prefix },
    });
    t.equal(cb.status, 302, JSON.stringify(prefix));
    t.equal(cb.headers.get('location'), '/', `${JSON.stringify(prefix)}: Location is the UI root without it`);
  }
});

t.test('OIDC sessions go through the cleanup of their method; the callback redirect keeps X-Forwarded-Prefix', async (t) => {
  const p = await provider(t);
  const server = await startAuthServer(t, { yaml: yaml(p.issuer), clock: fakeClock(Date.now()) });
  const jar = new CookieJar();
  const res = await fetch(`${server.url}/auth/v1/method/oidc/idp/authorize`);
  jar.take(res);
  const { authorizeUrl } = (await res.json()) as { authorizeUrl: string };
  const redirected = await followToRedirect(authorizeUrl, REDIRECT_URI, jar);
  const cb = await fetch(`${server.url}${redirected.pathname}${redirected.search}`, {
    redirect: 'manual',
    headers: { cookie: jar.header(), 'x-forwarded-prefix': '/flags/' },
  });
  t.equal(cb.status, 302);
  t.equal(cb.headers.get('location'), '/flags/');
  jar.take(cb);

  const store = server.runtime.service.store;
  const schedule = { method: 'METHOD_OIDC' as const, interval: 3600_000, gracePeriod: 1800_000 };
  const deps = { clock: server.clock.clock, logger: server.logs.logger, audit: server.runtime.audit };
  server.clock.advance(24 * 3600_000 + 1800_000 - 1000);
  t.match(await runCleanup(store, schedule, deps), { ran: true, deleted: 0 }, 'expired, but within the grace period');
  t.equal((await fetch(`${server.url}/auth/v1/self`, { headers: { cookie: jar.header() } })).status, 401, 'already refused though');
  server.clock.advance(3600_000);
  t.match(await runCleanup(store, schedule, deps), { ran: true, deleted: 1 }, 'deleted after it');
});
