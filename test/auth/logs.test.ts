/**
 * Raw client tokens never reach the log (trace level, every line captured), except the bootstrap
 * token, written once as `client_token`; nor do JWTs, service-account tokens or the pod's own token,
 * nor an OIDC client secret, authorization code, state, session token or ID token, nor a code-host
 * client secret or access token.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { makeTestCertificates } from '../support/git-tls.js';
import { startCodeHostFake } from '../support/code-host-fake.js';
import { startJwtIssuer } from '../support/jwt-issuer.js';
import { CookieJar, oidcLogin, startOidcProvider } from '../support/oidc-provider.js';
import { bootstrapTokenFrom, createToken, fakeClock, request, startAuthServer, tempDir } from './support.js';

t.test('a full session at trace level: no created token in any log line', async (t) => {
  const s = await startAuthServer(t, {
    yaml: `
log:
  level: trace
authentication:
  required: true
  methods:
    token:
      enabled: true
`,
  });
  const boot = bootstrapTokenFrom(s.logs)!;
  const tokens: string[] = [];
  for (const body of [{ name: 'a' }, { name: 'b', namespaceKey: 'production' }, { name: 'c', expiresAt: '2030-01-01T00:10:00Z' }]) {
    tokens.push((await createToken(s.url, boot, body)).clientToken);
  }
  const [a, scoped, short] = tokens as [string, string, string];
  await request(`${s.url}/api/v1/namespaces`, { token: a });
  await request(`${s.url}/api/v1/namespaces`, { cookie: a });
  await request(`${s.url}/api/v1/namespaces/default/flags`, { token: scoped });
  await request(`${s.url}/evaluate/v1/variant`, { token: scoped, body: { namespaceKey: 'default', flagKey: 'color', entityId: 'e' } });
  await request(`${s.url}/evaluate/v1/variant`, { token: scoped, body: '{"namespaceKey": broken' });
  await request(`${s.url}/auth/v1/self`, { cookie: scoped });
  s.clock.advance(11 * 60_000);
  await request(`${s.url}/auth/v1/self`, { token: short });
  await request(`${s.url}/auth/v1/self/expire`, { token: a, method: 'PUT' });
  await request(`${s.url}/auth/v1/self`, { token: a });
  await request(`${s.url}/auth/v1/method/token`, { token: scoped, body: { name: 'nope' } });
  await request(`${s.url}/auth/v1/method/token`, { token: boot, body: { name: 'bad', expiresAt: 'soon' } });
  const list = await request(`${s.url}/auth/v1/tokens`, { token: boot });
  for (const rec of list.body.authentications as Array<{ id: string }>) {
    await request(`${s.url}/auth/v1/tokens/${rec.id}`, { token: boot });
  }
  await request(`${s.url}/auth/v1/tokens/${(list.body.authentications as Array<{ id: string }>)[1]!.id}`, { token: boot, method: 'DELETE' });
  await s.stop();

  const text = s.logs.text();
  t.ok(s.logs.lines.length > 20, `captured ${s.logs.lines.length} lines`);
  t.ok(text.includes('"level":"trace"') || text.includes('"level":"debug"') || text.includes('"msg":"request"'), 'request lines were logged');
  for (const [i, token] of tokens.entries()) t.notOk(text.includes(token), `token ${i} is not in the log`);
  t.equal(text.split(boot).length - 1, 1, 'the bootstrap token: exactly once');
  t.ok(
    s.logs.entries().some((e) => e.msg === 'request was not authenticated' && e.reason === 'authorization expired'),
    'refusals are logged with their reason',
  );
});

t.test('JWT and cluster methods at trace level: no JWT, signature, pod token or client token in any log line', async (t) => {
  const certs = await makeTestCertificates(t);
  const jwtIssuer = await startJwtIssuer(t);
  const cluster = await startJwtIssuer(t, { tls: { key: certs.key, cert: certs.cert }, requireBearer: 'pod-own-secret-token' });
  const dir = tempDir(t);
  writeFileSync(join(dir, 'pod-token'), 'pod-own-secret-token');
  const s = await startAuthServer(t, {
    dir,
    yaml: `
log:
  level: trace
authentication:
  required: true
  methods:
    jwt:
      enabled: true
      jwks_url: ${jwtIssuer.jwksUri}
      validate_claims:
        audiences: [vexil]
    cluster:
      enabled: true
      discovery_url: ${cluster.url}
      ca_path: ${certs.caPath}
      service_account_token_path: ${join(dir, 'pod-token')}
`,
  });
  const now = Math.floor(s.clock.now / 1000);
  const secrets: string[] = ['pod-own-secret-token'];
  const good = await jwtIssuer.sign({ aud: 'vexil' }, { now });
  const wrongAudience = await jwtIssuer.sign({ aud: 'other' }, { now });
  const expired = await jwtIssuer.sign({ aud: 'vexil' }, { now: now - 3600 });
  for (const jwt of [good, wrongAudience, expired]) {
    secrets.push(jwt, jwt.split('.')[2]!);
    await request(`${s.url}/evaluate/v1/variant`, { authorization: `JWT ${jwt}`, body: { namespaceKey: 'default', flagKey: 'color', entityId: 'e' } });
    await request(`${s.url}/auth/v1/self`, { authorization: `JWT ${jwt}` });
  }
  const sa = await cluster.signServiceAccount({ now });
  const expiredSa = await cluster.signServiceAccount({ now: now - 7200 });
  secrets.push(sa, sa.split('.')[2]!, expiredSa, expiredSa.split('.')[2]!);
  const exchanged = await request(`${s.url}/auth/v1/method/cluster/serviceaccount`, { body: { service_account_token: sa } });
  t.equal(exchanged.status, 200);
  const clientToken = (exchanged.body as { clientToken: string }).clientToken;
  secrets.push(clientToken);
  await request(`${s.url}/auth/v1/method/cluster/serviceaccount`, { body: { service_account_token: expiredSa } });
  await request(`${s.url}/auth/v1/self`, { token: clientToken });
  await s.stop();

  const text = s.logs.text();
  for (const [i, secret] of secrets.entries()) t.notOk(text.includes(secret), `secret ${i} is not in the log`);
  t.ok(s.logs.entries().some((e) => e.msg === 'JWT refused' && typeof e.reason === 'string'), 'JWT refusals are logged with their reason');
  t.ok(s.logs.entries().some((e) => e.msg === 'client token created' && e.method === 'METHOD_CLUSTER'), 'the exchange is logged');
});

t.test('OIDC at trace level: no client secret, code, state, session token or ID token in any log line', async (t) => {
  const secret = 'oidc-client-secret-for-log-scan';
  const redirectUri = 'http://vexil.test/auth/v1/method/oidc/idp/callback';
  const idp = await startOidcProvider({
    clientId: 'vexil',
    clientSecret: secret,
    redirectUri,
    requirePkce: true,
    accounts: { alice: { email: 'alice@example.test', email_verified: true }, mallory: { email: 'mallory@evil.test', email_verified: true } },
  });
  t.teardown(() => idp.close());
  const s = await startAuthServer(t, {
    yaml: `
authentication:
  required: true
  session: { domain: 127.0.0.1 }
  methods:
    oidc:
      enabled: true
      email_matches: ['@example\\.test$']
      providers:
        idp: { issuer_url: "${idp.issuer}", client_id: vexil, client_secret: ${secret}, redirect_address: "http://vexil.test", scopes: [email], use_pkce: true }
`,
    // The provider signs with the real time.
    clock: fakeClock(Date.now()),
  });
  const jar = new CookieJar();
  const ok = await oidcLogin(s.url, 'idp', redirectUri, jar);
  t.equal(ok.callback.status, 302, ok.body);
  const session = jar.cookies.get('svc_client_token')!;
  await fetch(`${s.url}/auth/v1/self`, { headers: { cookie: jar.header() } });
  idp.nextLogin = 'mallory';
  const refused = await oidcLogin(s.url, 'idp', redirectUri, new CookieJar());
  t.equal(refused.callback.status, 401, 'email not matching');
  idp.nextLogin = 'alice';
  const badNonce = await oidcLogin(s.url, 'idp', redirectUri, new CookieJar(), (u) => u.searchParams.set('nonce', 'other'));
  t.equal(badNonce.callback.status, 401, 'nonce mismatch');
  const replay = await fetch(`${s.url}${ok.redirected.pathname}${ok.redirected.search}`, { headers: { cookie: `svc_client_state=${ok.redirected.searchParams.get('state')}` } });
  t.equal(replay.status, 401, 'replayed callback');

  const text = s.logs.text();
  t.ok(s.logs.entries().some((e) => e.msg === 'oidc session created'), 'the log was captured');
  for (const [what, value] of [
    ['client secret', secret],
    ['session token', session],
    ['code', ok.redirected.searchParams.get('code')!],
    ['state', ok.redirected.searchParams.get('state')!],
    ['code of the refused login', refused.redirected.searchParams.get('code')!],
    ['code of the nonce mismatch', badNonce.redirected.searchParams.get('code')!],
    ['PKCE challenge', ok.authorizeUrl.searchParams.get('code_challenge')!],
    ['nonce', ok.authorizeUrl.searchParams.get('nonce')!],
  ] as const) {
    t.notOk(text.includes(value), `no ${what} in the log`);
  }
  t.notMatch(text, /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\./, 'no JWT (ID token, access token)');
});

t.test('code host at trace level: no client secret, access token, code, state, PKCE values or session token in any log line', async (t) => {
  const secret = 'code-host-client-secret-for-log-scan';
  const gh = await startCodeHostFake({
    clients: [{ clientId: 'vexil', clientSecret: secret }],
    users: [
      { login: 'alice', id: 1, email: 'alice@example.test', orgs: ['acme'], teams: [] },
      { login: 'mallory', id: 2, orgs: [], teams: [] },
    ],
  });
  t.teardown(() => gh.close());
  const s = await startAuthServer(t, {
    yaml: `
authentication:
  required: true
  session: { domain: 127.0.0.1 }
  methods:
    code_host:
      enabled: true
      client_id: vexil
      client_secret: ${secret}
      redirect_address: http://vexil.test
      server_url: ${gh.serverUrl}
      api_url: ${gh.apiUrl}
      scopes: [read:org, user:email]
      allowed_organizations: [acme]
`,
  });
  const carried: string[] = [];
  /** One browser login as `login`; `tamper` changes the callback URL. Returns the callback's status and jar. */
  const login = async (who: string, tamper?: (u: URL) => void) => {
    const jar = new CookieJar();
    const a = await fetch(`${s.url}/auth/v1/method/code_host/authorize`);
    jar.take(a);
    const at = new URL(((await a.json()) as { authorizeUrl: string }).authorizeUrl);
    carried.push(at.searchParams.get('code_challenge')!);
    at.searchParams.set('login', who);
    const back = new URL((await fetch(at, { redirect: 'manual' })).headers.get('location')!);
    carried.push(back.searchParams.get('code')!, back.searchParams.get('state')!);
    const callback = new URL(back.pathname + back.search, s.url);
    tamper?.(callback);
    const res = await fetch(callback, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.take(res);
    return { status: res.status, jar, callback };
  };
  const ok = await login('alice');
  t.equal(ok.status, 302);
  const session = ok.jar.cookies.get('svc_client_token')!;
  await fetch(`${s.url}/auth/v1/self`, { headers: { cookie: ok.jar.header() } });
  t.equal((await login('mallory')).status, 403, 'not in an allowed organization');
  t.equal((await login('alice', (u) => u.searchParams.set('code', 'wrong'))).status, 401, 'code refused');
  t.equal((await fetch(ok.callback, { redirect: 'manual' })).status, 401, 'replayed callback');

  const text = s.logs.text();
  t.ok(s.logs.entries().some((e) => e.msg === 'code host session created'), 'the log was captured');
  for (const [what, value] of [
    ['client secret', secret],
    ['session token', session],
    ...[...gh.tokens.keys()].map((token) => ['access token', token] as const),
    ...carried.map((value) => ['code, state or PKCE challenge', value] as const),
  ] as const) {
    t.notOk(text.includes(value), `no ${what} in the log`);
  }
});
