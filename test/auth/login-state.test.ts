/**
 * Logins across processes (src/auth/login-state.ts): the login state travels sealed in the
 * `svc_client_state` cookie, so a login begun on one vexil process ends on another one with the same
 * configuration (node:cluster workers, replicas behind a load balancer). Two real vexil servers
 * share one token store (the same SQLite file, or one throwaway PostgreSQL server) and one real
 * `oidc-provider`; the browser (fetch with a cookie jar) asks one for the authorize URL and brings
 * the provider's callback to the other, with and without PKCE. A server with another configuration
 * (another key) refuses the cookie.
 */
import t, { type Test } from 'tap';
import { reportMissing } from '../support/requirements.js';
import { postgresUnavailableReason, startPostgres } from '../support/throwaway-db.js';
import { CookieJar, followToRedirect, startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';
import { fakeClock, startAuthServer, tempDir, type AuthServer } from './support.js';

const CLIENT_ID = 'vexil-client';
const CLIENT_SECRET = 'oidc-client-secret-77e0b2';
const REDIRECT_ADDRESS = 'http://vexil.test';
const REDIRECT_URI = `${REDIRECT_ADDRESS}/auth/v1/method/oidc/test/callback`;

function config(issuer: string, opts: { pkce: boolean; storage: string; csrfKey?: string }): string {
  return `authentication:
  required: true
${opts.storage}  session:
    domain: 127.0.0.1
${opts.csrfKey !== undefined ? `    csrf:\n      key: ${opts.csrfKey}\n` : ''}  methods:
    oidc:
      enabled: true
      providers:
        test:
          issuer_url: ${issuer}
          client_id: ${CLIENT_ID}
          client_secret: ${CLIENT_SECRET}
          redirect_address: ${REDIRECT_ADDRESS}
          scopes: [email, profile]
          use_pkce: ${opts.pkce}
`;
}

async function provider(t: Test, pkce: boolean): Promise<TestOidcProvider> {
  const p = await startOidcProvider({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUri: REDIRECT_URI,
    requirePkce: pkce,
    accounts: { alice: { email: 'alice@example.test', email_verified: true, name: 'Alice' } },
  });
  t.teardown(() => p.close());
  return p;
}

/** Two vexil servers of one configuration over one token store (the second one a replica of the first). */
async function replicas(t: Test, yaml: string, storage: 'sqlite' | 'postgres'): Promise<[AuthServer, AuthServer]> {
  // The provider signs with the real time: each server's clock starts there.
  const first = await startAuthServer(t, { yaml, clock: fakeClock(Date.now()) });
  // SQLite: the same folder, so the same data/auth.db; PostgreSQL: the same URL from another folder.
  const second = await startAuthServer(t, { yaml, clock: fakeClock(Date.now()), dir: storage === 'sqlite' ? first.dir : tempDir(t) });
  return [first, second];
}

/** Authorize on `begin`, the provider's redirects, then the callback on `end`. */
async function loginAcross(begin: AuthServer, end: AuthServer, jar: CookieJar) {
  const res = await fetch(`${begin.url}/auth/v1/method/oidc/test/authorize`, { headers: { cookie: jar.header() } });
  jar.take(res);
  if (res.status !== 200) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
  const authorizeUrl = new URL(((await res.json()) as { authorizeUrl: string }).authorizeUrl);
  const redirected = await followToRedirect(authorizeUrl.href, REDIRECT_URI, jar);
  const callback = await fetch(`${end.url}${redirected.pathname}${redirected.search}`, { redirect: 'manual', headers: { cookie: jar.header() } });
  const setCookies = jar.take(callback);
  return { authorizeUrl, redirected, callback, setCookies, body: await callback.text() };
}

async function self(server: AuthServer, jar: CookieJar) {
  const res = await fetch(`${server.url}/auth/v1/self`, { headers: { cookie: jar.header() } });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

function flows(t: Test, storage: 'sqlite' | 'postgres', storageYaml: () => string): void {
  for (const pkce of [true, false]) {
    // Without PKCE the servers also set csrf.key: the key then comes from it, not from the client secret.
    const csrfKey = pkce ? undefined : 'shared-csrf-key-5d1e';
    t.test(`authorize on one process, callback on another (${pkce ? 'PKCE' : 'no PKCE, csrf.key'})`, async (t) => {
      const idp = await provider(t, pkce);
      const [a, b] = await replicas(t, config(idp.issuer, { pkce, storage: storageYaml(), ...(csrfKey !== undefined ? { csrfKey } : {}) }), storage);

      const jar = new CookieJar();
      const ab = await loginAcross(a, b, jar);
      t.equal(ab.authorizeUrl.searchParams.has('code_challenge'), pkce);
      t.equal(ab.callback.status, 302, ab.body);
      t.equal(ab.callback.headers.get('location'), '/');
      t.ok(jar.cookies.has('svc_client_token'), 'the second process issued the session');
      t.notOk(jar.cookies.has('svc_client_state'), 'and dropped the state cookie');
      const onA = await self(a, jar);
      t.equal(onA.status, 200, 'the session is valid on the first process too (shared store)');
      t.equal(onA.body.metadata['io.svc.auth.oidc.email'], 'alice@example.test');

      const back = await loginAcross(b, a, new CookieJar());
      t.equal(back.callback.status, 302, `and the other way round: ${back.body}`);

      // Another login's cookie (begun on the first process) with this callback: the states differ.
      const replayJar = new CookieJar();
      const first = await loginAcross(a, b, replayJar);
      t.equal(first.callback.status, 302);
      const other = await fetch(`${a.url}/auth/v1/method/oidc/test/authorize`);
      const otherCookie = /^svc_client_state=([^;]+)/.exec(other.headers.getSetCookie()[0]!)![1]!;
      const mixed = await fetch(`${b.url}${first.redirected.pathname}${first.redirected.search}`, {
        redirect: 'manual',
        headers: { cookie: `svc_client_state=${otherCookie}` },
      });
      t.equal(mixed.status, 401);
      t.match(await mixed.json(), { message: 'handling OIDC callback: unexpected state parameter' });
    });
  }

  t.test('a replayed callback with a copy of its cookie, on another process, fails at the provider', async (t) => {
    const idp = await provider(t, true);
    const [a, b] = await replicas(t, config(idp.issuer, { pkce: true, storage: storageYaml() }), storage);
    const jar = new CookieJar();
    const res = await fetch(`${a.url}/auth/v1/method/oidc/test/authorize`);
    jar.take(res);
    const sealed = jar.cookies.get('svc_client_state')!;
    const authorizeUrl = new URL(((await res.json()) as { authorizeUrl: string }).authorizeUrl);
    const redirected = await followToRedirect(authorizeUrl.href, REDIRECT_URI, jar);
    const callbackPath = `${redirected.pathname}${redirected.search}`;
    const ok = await fetch(`${a.url}${callbackPath}`, { redirect: 'manual', headers: { cookie: `svc_client_state=${sealed}` } });
    t.equal(ok.status, 302, await ok.text());
    const replay = await fetch(`${b.url}${callbackPath}`, { redirect: 'manual', headers: { cookie: `svc_client_state=${sealed}` } });
    t.equal(replay.status, 401);
    t.match(await replay.json(), { code: 16, message: 'handling OIDC callback: the code exchange or the ID token check failed' });
    t.notOk(replay.headers.getSetCookie().some((c) => /^svc_client_token=[^;]/.test(c)), 'no session');
  });

  t.test('a process with another configuration (another key) refuses the cookie', async (t) => {
    const idp = await provider(t, true);
    const [a] = await replicas(t, config(idp.issuer, { pkce: true, storage: storageYaml() }), storage);
    // Same provider and client, same store; only csrf.key differs, so the sealing key does.
    const other = await startAuthServer(t, {
      yaml: config(idp.issuer, { pkce: true, storage: storageYaml(), csrfKey: 'another-csrf-key' }),
      clock: fakeClock(Date.now()),
      ...(storage === 'sqlite' ? { dir: a.dir } : {}),
    });
    const jar = new CookieJar();
    const refused = await loginAcross(a, other, jar);
    t.equal(refused.callback.status, 401);
    t.same(JSON.parse(refused.body), { code: 16, message: 'handling OIDC callback: invalid login state, please log in again', details: [] });
    t.notOk(jar.cookies.has('svc_client_token'));
    t.equal((await self(other, jar)).status, 401);
  });
}

t.test('SQLite: two servers on one auth.db', async (t) => {
  flows(t, 'sqlite', () => '');
});

const unavailable = postgresUnavailableReason();
if (unavailable !== undefined) {
  reportMissing(t, 'PostgreSQL', unavailable);
} else {
  t.test('PostgreSQL: two servers on one database', async (t) => {
    const pg = await startPostgres();
    t.teardown(() => pg.close());
    flows(t, 'postgres', () => `  storage:\n    type: postgres\n    postgres:\n      url: ${JSON.stringify(pg.url)}\n`);
  });
}
