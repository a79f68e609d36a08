/**
 * OIDC end to end: vexil serving the OIDC method against a real `oidc-provider` on loopback, the
 * browser played by fetch with a cookie jar (test/support/oidc-provider.ts). `redirect_address`
 * is a public address in front of vexil (http://vexil.test): the provider redirects the "browser"
 * there, and the test forwards that callback to vexil as a reverse proxy would.
 */
import t from 'tap';
import { DISCOVERY_RETRY_MS } from '../../src/auth/methods/oidc.js';
import { freePort } from '../support/throwaway-db.js';
import { CookieJar, followToRedirect, startOidcProvider, type Account, type TestOidcProvider } from '../support/oidc-provider.js';
import { fakeClock, startAuthServer, type AuthServer } from './support.js';

const CLIENT_ID = 'vexil-client';
const CLIENT_SECRET = 'oidc-client-secret-4f9a1c';
const REDIRECT_ADDRESS = 'http://vexil.test';
const REDIRECT_URI = `${REDIRECT_ADDRESS}/auth/v1/method/oidc/test/callback`;
const ACCOUNTS: Record<string, Account> = {
  alice: { email: 'alice@example.test', email_verified: true, name: 'Alice', picture: 'https://pics.test/alice.png' },
  bob: { email: 'bob@example.test', email_verified: false, name: 'Bob' },
  carol: { email: 'carol@elsewhere.test', email_verified: true, name: 'Carol' },
  // No email_verified claim at all.
  dave: { email: 'dave@example.test', name: 'Dave' },
};

interface Setup {
  provider?: TestOidcProvider;
  server: AuthServer;
}

type T = { teardown(fn: () => void | Promise<void>): void };

async function setup(
  t: T,
  opts: { pkce?: boolean; emailMatches?: string[]; issuer?: string; extraYaml?: string; startProvider?: boolean; idTokenTtl?: number } = {},
): Promise<Setup> {
  const pkce = opts.pkce ?? true;
  let provider: TestOidcProvider | undefined;
  if (opts.startProvider !== false) {
    provider = await startOidcProvider({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUri: REDIRECT_URI,
      requirePkce: pkce,
      accounts: ACCOUNTS,
      ...(opts.idTokenTtl !== undefined ? { idTokenTtl: opts.idTokenTtl } : {}),
    });
    t.teardown(() => provider!.close());
  }
  const issuer = opts.issuer ?? provider!.issuer;
  const matches = (opts.emailMatches ?? []).map((m) => `        - '${m}'\n`).join('');
  const yaml = `authentication:
  required: true
  session:
    domain: 127.0.0.1
    state_lifetime: 24h
${opts.extraYaml ?? ''}  methods:
    oidc:
      enabled: true
      email_matches:${matches === '' ? ' []' : `\n${matches}`}
      providers:
        test:
          issuer_url: ${issuer}
          client_id: ${CLIENT_ID}
          client_secret: ${CLIENT_SECRET}
          redirect_address: ${REDIRECT_ADDRESS}/
          scopes: [email, profile]
          use_pkce: ${pkce}
`;
  // The provider signs with the real time: vexil's clock starts there and moves only when a test says.
  const server = await startAuthServer(t, { yaml, clock: fakeClock(Date.now()) });
  return { ...(provider ? { provider } : {}), server };
}

async function authorize(server: AuthServer, jar: CookieJar, provider = 'test'): Promise<{ res: Response; authorizeUrl?: URL; setCookies: string[] }> {
  const res = await fetch(`${server.url}/auth/v1/method/oidc/${provider}/authorize`, { headers: { cookie: jar.header() } });
  const setCookies = jar.take(res);
  if (res.status !== 200) return { res, setCookies };
  const body = (await res.json()) as { authorizeUrl: string };
  return { res, authorizeUrl: new URL(body.authorizeUrl), setCookies };
}

/** vexil's callback, reached the way the provider's redirect reaches it through the proxy. */
async function callback(server: AuthServer, redirected: URL, jar: CookieJar): Promise<{ res: Response; setCookies: string[]; text: string }> {
  const res = await fetch(`${server.url}${redirected.pathname}${redirected.search}`, { redirect: 'manual', headers: { cookie: jar.header() } });
  const setCookies = jar.take(res);
  return { res, setCookies, text: await res.text() };
}

async function login(server: AuthServer, jar: CookieJar, tamper?: (u: URL) => void) {
  const a = await authorize(server, jar);
  if (a.authorizeUrl === undefined) throw new Error(`authorize answered ${a.res.status}`);
  tamper?.(a.authorizeUrl);
  const redirected = await followToRedirect(a.authorizeUrl.href, REDIRECT_URI, jar);
  return { authorize: a, redirected, ...(await callback(server, redirected, jar)) };
}

async function self(server: AuthServer, jar: CookieJar) {
  const res = await fetch(`${server.url}/auth/v1/self`, { headers: { cookie: jar.header() } });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const SELF_REFUSED = { code: 16, message: 'request was not authenticated' };

t.test('login with PKCE: authorize URL, state cookie, callback, session cookie, then the API with the cookie', async (t) => {
  const { server, provider } = await setup(t);
  const jar = new CookieJar();
  const method = (await (await fetch(`${server.url}/auth/v1/method`)).json()) as { methods: Array<Record<string, any>> };
  t.same(method.methods.find((m) => m.method === 'METHOD_OIDC'), {
    method: 'METHOD_OIDC',
    enabled: true,
    sessionCompatible: true,
    metadata: { providers: { test: { authorize_url: '/auth/v1/method/oidc/test/authorize', callback_url: '/auth/v1/method/oidc/test/callback' } } },
  });

  const done = await login(server, jar);
  const url = done.authorize.authorizeUrl!;
  t.equal(url.origin, provider!.issuer);
  t.equal(url.searchParams.get('client_id'), CLIENT_ID);
  t.equal(url.searchParams.get('redirect_uri'), REDIRECT_URI, 'redirect_address without its trailing slash + the callback path');
  t.equal(url.searchParams.get('scope'), 'openid email profile');
  t.equal(url.searchParams.get('response_type'), 'code');
  t.equal(url.searchParams.get('code_challenge_method'), 'S256');
  t.match(url.searchParams.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/);
  t.match(url.searchParams.get('nonce'), /^[A-Za-z0-9_-]{20,}$/);
  const state = url.searchParams.get('state')!;
  t.match(state, /^[A-Za-z0-9_-]{43}$/);
  t.match(done.authorize.setCookies[0], /^svc_client_state=[A-Za-z0-9_-]+; Path=\/; Max-Age=86400; Expires=[^;]+; HttpOnly; SameSite=Lax$/);
  t.notOk(done.authorize.setCookies[0]!.includes(state), 'the cookie holds the state sealed, not the state itself');
  t.equal(done.authorize.res.headers.get('cache-control'), 'no-store');

  t.equal(done.res.status, 302, done.text);
  t.equal(done.res.headers.get('location'), '/');
  const tokenCookie = done.setCookies.find((c) => c.startsWith('svc_client_token='))!;
  t.match(tokenCookie, /^svc_client_token=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=86400; Expires=[^;]+; HttpOnly; SameSite=Lax$/);
  t.notMatch(tokenCookie, /Secure/, 'session.secure is false');
  t.ok(done.setCookies.some((c) => /^svc_client_state=; .*Max-Age=0/.test(c)), 'the state cookie is dropped');
  t.notOk(jar.cookies.has('svc_client_state'));

  const me = await self(server, jar);
  t.equal(me.status, 200);
  t.equal(me.body.method, 'METHOD_OIDC');
  t.same(me.body.metadata, {
    'io.svc.auth.oidc.email': 'alice@example.test',
    'io.svc.auth.oidc.email_verified': 'true',
    'io.svc.auth.oidc.name': 'Alice',
    'io.svc.auth.oidc.picture': 'https://pics.test/alice.png',
    'io.svc.auth.oidc.provider': 'test',
    'io.svc.auth.oidc.sub': 'alice',
  });
  t.equal(Date.parse(me.body.expiresAt) - Date.parse(me.body.createdAt), 24 * 3600_000, 'session.token_lifetime');

  const flags = await fetch(`${server.url}/api/v1/namespaces`, { headers: { cookie: jar.header() } });
  t.equal(flags.status, 200, 'the session cookie authenticates the API (authentication.required)');
  t.equal((await fetch(`${server.url}/api/v1/namespaces`)).status, 401, 'without it: 401');

  // Every login has its own verifier and nonce.
  const again = await login(server, jar);
  t.equal(again.res.status, 302);
  t.not(again.authorize.authorizeUrl!.searchParams.get('code_challenge'), url.searchParams.get('code_challenge'));
  t.not(again.authorize.authorizeUrl!.searchParams.get('nonce'), url.searchParams.get('nonce'));

  const unknown = await authorize(server, jar, 'nope');
  t.equal(unknown.res.status, 404);
  t.match(await unknown.res.json(), { code: 5, message: 'authorize: requested provider "nope": provider not found' });
});

t.test('login without PKCE', async (t) => {
  const { server } = await setup(t, { pkce: false });
  const jar = new CookieJar();
  const done = await login(server, jar);
  t.equal(done.authorize.authorizeUrl!.searchParams.get('code_challenge'), null);
  t.equal(done.res.status, 302, done.text);
  t.equal((await self(server, jar)).status, 200);
});

t.test('state: another value than the cookie, no cookie, a made-up cookie or a replayed callback are refused', async (t) => {
  const { server } = await setup(t);
  const jar = new CookieJar();
  const a = await authorize(server, jar);
  const redirected = await followToRedirect(a.authorizeUrl!.href, REDIRECT_URI, jar);

  const wrong = new URL(redirected);
  wrong.searchParams.set('state', 'x'.repeat(43));
  const w = await callback(server, wrong, jar);
  t.equal(w.res.status, 401);
  t.match(JSON.parse(w.text), { code: 16, message: 'handling OIDC callback: unexpected state parameter' });

  const noCookie = await fetch(`${server.url}${redirected.pathname}${redirected.search}`, { redirect: 'manual' });
  t.equal(noCookie.status, 401);
  t.match(await noCookie.json(), { message: 'handling OIDC callback: missing state parameter' });

  const sealed = jar.cookies.get('svc_client_state')!;
  jar.cookies.set('svc_client_state', redirected.searchParams.get('state')!);
  const bare = await callback(server, redirected, jar);
  t.equal(bare.res.status, 401, 'the state value itself is no state cookie');
  t.match(JSON.parse(bare.text), { message: 'handling OIDC callback: invalid login state, please log in again' });
  jar.cookies.set('svc_client_state', sealed);

  const ok = await callback(server, redirected, jar);
  t.equal(ok.res.status, 302, 'the state survives refused attempts that did not match it');
  t.notOk(jar.cookies.has('svc_client_state'), 'the callback dropped the state cookie');
  // A copy of the old cookie replayed with the same callback passes the state check (nothing is
  // kept per login), and the provider refuses the code it already redeemed.
  jar.cookies.set('svc_client_state', sealed);
  const replay = await callback(server, redirected, jar);
  t.equal(replay.res.status, 401, 'a callback ends one login only');
  t.match(JSON.parse(replay.text), { message: 'handling OIDC callback: the code exchange or the ID token check failed' });
  t.ok(replay.setCookies.some((c) => /^svc_client_state=; .*Max-Age=0/.test(c)), 'and the copy is dropped again');
});

t.test('a replayed code is refused (the provider redeems a code once)', async (t) => {
  const { server } = await setup(t);
  const jar = new CookieJar();
  const first = await login(server, jar);
  t.equal(first.res.status, 302);
  const code = first.redirected.searchParams.get('code')!;
  const a = await authorize(server, jar);
  const redirected = await followToRedirect(a.authorizeUrl!.href, REDIRECT_URI, jar);
  redirected.searchParams.set('code', code);
  const replay = await callback(server, redirected, jar);
  t.equal(replay.res.status, 401);
  t.match(JSON.parse(replay.text), { code: 16, message: 'handling OIDC callback: the code exchange or the ID token check failed' });
  t.notOk(replay.setCookies.some((c) => c.startsWith('svc_client_token=') && !c.startsWith('svc_client_token=;')));
});

t.test('nonce mismatch: an ID token for another nonce is refused', async (t) => {
  const { server } = await setup(t);
  const jar = new CookieJar();
  const done = await login(server, jar, (u) => u.searchParams.set('nonce', 'not-the-one-vexil-chose'));
  t.equal(done.res.status, 401, done.text);
  t.equal((await self(server, jar)).status, 401);
});

t.test('email_matches and email_verified', async (t) => {
  const { server, provider } = await setup(t, { emailMatches: ['^.*@example\\.test$'] });
  provider!.nextLogin = 'carol';
  let jar = new CookieJar();
  const carol = await login(server, jar);
  t.equal(carol.res.status, 401);
  t.match(JSON.parse(carol.text), { message: 'handling OIDC callback: email does not match email_matches' });

  provider!.nextLogin = 'bob';
  jar = new CookieJar();
  const bob = await login(server, jar);
  t.equal(bob.res.status, 401);
  t.match(JSON.parse(bob.text), { message: 'handling OIDC callback: email is not verified' });

  provider!.nextLogin = 'dave';
  jar = new CookieJar();
  const dave = await login(server, jar);
  t.equal(dave.res.status, 401, 'no email_verified claim: the email is not known to be verified');
  t.match(JSON.parse(dave.text), { message: 'handling OIDC callback: email is not verified' });

  provider!.nextLogin = 'alice';
  jar = new CookieJar();
  const alice = await login(server, jar);
  t.equal(alice.res.status, 302, alice.text);
  t.equal((await self(server, jar)).status, 200);
});

t.test('without email_matches a login without an email_verified claim is accepted (an explicit false is not)', async (t) => {
  const { server, provider } = await setup(t);
  provider!.nextLogin = 'dave';
  let jar = new CookieJar();
  const dave = await login(server, jar);
  t.equal(dave.res.status, 302, dave.text);
  const me = await self(server, jar);
  t.equal(me.status, 200, 'the session works on later requests too');
  t.notOk('io.svc.auth.oidc.email_verified' in me.body.metadata);

  provider!.nextLogin = 'bob';
  jar = new CookieJar();
  t.equal((await login(server, jar)).res.status, 401);
});

t.test('an expired ID token is refused (vexil checks expiry at its own clock)', async (t) => {
  const { server } = await setup(t, { idTokenTtl: 600 });
  const jar = new CookieJar();
  const a = await authorize(server, jar);
  const redirected = await followToRedirect(a.authorizeUrl!.href, REDIRECT_URI, jar);
  server.clock.advance(3600_000);
  const late = await callback(server, redirected, jar);
  t.equal(late.res.status, 401, late.text);
  const refusal = server.logs.entries().find((e) => e.msg === 'oidc login refused');
  t.match(refusal, { error: { code: 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED' } }, 'the log names the failed check');
});

t.test('provider down at start: vexil starts, authorize answers 503, then recovers', async (t) => {
  const port = await freePort();
  const { server } = await setup(t, { startProvider: false, issuer: `http://127.0.0.1:${port}` });
  const jar = new CookieJar();
  const down = await authorize(server, jar);
  t.equal(down.res.status, 503);
  t.match(await down.res.json(), { code: 14, message: 'oidc provider "test" is unavailable' });
  t.ok(server.logs.entries().some((e) => e.msg === 'oidc provider discovery failed'));
  const again = await authorize(server, jar);
  t.equal(again.res.status, 503, 'right after a failure: 503 without asking the provider');
  t.equal(server.logs.entries().filter((e) => e.msg === 'oidc provider discovery failed').length, 1, 'one failure logged, not one per request');

  server.clock.advance(DISCOVERY_RETRY_MS);
  const provider = await startOidcProvider({ port, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri: REDIRECT_URI, requirePkce: true, accounts: ACCOUNTS });
  t.teardown(() => provider.close());
  const done = await login(server, jar);
  t.equal(done.res.status, 302, done.text);
  t.equal((await self(server, jar)).status, 200);
});

t.test('nothing secret in the logs: client secret, codes, tokens, ID tokens', async (t) => {
  const { server, provider } = await setup(t, { emailMatches: ['^.*@example\\.test$'] });
  const jar = new CookieJar();
  const ok = await login(server, jar);
  t.equal(ok.res.status, 302);
  const token = jar.cookies.get('svc_client_token')!;
  provider!.nextLogin = 'carol';
  const refused = await login(server, new CookieJar());
  t.equal(refused.res.status, 401);
  const replay = await login(server, new CookieJar(), (u) => u.searchParams.set('nonce', 'x'));
  t.equal(replay.res.status, 401);
  const text = server.logs.text();
  for (const [what, secret] of [
    ['client secret', CLIENT_SECRET],
    ['session token', token],
    ['code', ok.redirected.searchParams.get('code')!],
    ['code (refused login)', refused.redirected.searchParams.get('code')!],
    ['state', ok.redirected.searchParams.get('state')!],
  ] as const) {
    t.notOk(text.includes(secret), `no ${what} in the log`);
  }
  t.notMatch(text, /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\./, 'no JWT (ID or access token) in the log');
  const scraped = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(scraped.status, 200, 'the metrics, read with the session token');
  const metrics = await scraped.text();
  t.notOk(metrics.includes(CLIENT_SECRET) || metrics.includes(token), 'nor in the metrics');
});

t.test('the provider answering with an error (user denied): 401, the state is spent, the state cookie dropped', async (t) => {
  const { server } = await setup(t);
  const jar = new CookieJar();
  const a = await authorize(server, jar);
  const state = a.authorizeUrl!.searchParams.get('state')!;
  const denied = new URL(REDIRECT_URI);
  denied.search = new URLSearchParams({ error: 'access_denied', error_description: 'user said no', state }).toString();
  const res = await callback(server, denied, jar);
  t.equal(res.res.status, 401);
  t.match(JSON.parse(res.text), { code: 16, message: 'handling OIDC callback: the provider refused the login (access_denied)' });
  t.ok(res.setCookies.some((c) => /^svc_client_state=; .*Max-Age=0/.test(c)));
  const unknown = await fetch(`${server.url}/auth/v1/method/oidc/nope/callback?code=x&state=y`);
  t.equal(unknown.status, 404);
});
