/**
 * Code-host login end to end: vexil (real HTTP server, authentication required) and the code-host
 * fake (real HTTP server), a browser played by fetch with a cookie jar. Allowed and refused
 * organizations and teams, Enterprise URLs, Flipt's /github/ paths, wrong state, a refused or
 * failing code exchange, the session cookie accepted by protected routes, `/auth/v1/self`
 * showing the metadata, no secret in the logs; on SQLite and on PostgreSQL.
 */
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { reportMissing } from '../../support/requirements.js';
import { postgresUnavailableReason, startPostgres } from '../../support/throwaway-db.js';
import { CookieJar } from '../../support/cookie-jar.js';
import { startCodeHostFake, type CodeHostFake, type FakeUser } from '../../support/code-host-fake.js';
import { startServe, writeServeConfig } from '../process.js';
import { startAuthServer, tempDir, UNAUTHENTICATED, type AuthServer } from '../support.js';

const CLIENT_SECRET = 'code-host-client-secret-7f3a';
/** The public address vexil is configured with; the test rewrites it to the server's real one. */
const PUBLIC = 'http://flags.example.test';

interface Setup {
  server: AuthServer;
  fake: CodeHostFake;
  /** Every authorization code and state the browser carried back to vexil. */
  carried: string[];
}

interface SetupOptions {
  storage: string;
  users?: FakeUser[];
  basePath?: string;
  scopes?: string[];
  organizations?: string[];
  teams?: Record<string, string[]>;
  usePkce?: boolean;
  /** YAML lines under `authentication:` (two-space indented). */
  authExtra?: string;
}

async function setup(t: Test, opts: SetupOptions): Promise<Setup> {
  const fake = await startCodeHostFake({
    // Registered callbacks, checked by the fake at authorize and exchange as the code host does.
    clients: [
      {
        clientId: 'vexil-app',
        clientSecret: CLIENT_SECRET,
        redirectUris: [`${PUBLIC}/auth/v1/method/code_host/callback`, `${PUBLIC}/auth/v1/method/github/callback`],
      },
    ],
    ...(opts.users ? { users: opts.users } : {}),
    ...(opts.basePath ? { basePath: opts.basePath } : {}),
  });
  t.teardown(() => fake.close());
  const server = await startAuthServer(t, {
    yaml: `authentication:
  required: true
${opts.authExtra ?? ''}${opts.storage}
  session:
    domain: 127.0.0.1
  methods:
    code_host:
      enabled: true
      client_id: vexil-app
      client_secret: ${CLIENT_SECRET}
      redirect_address: ${PUBLIC}/
      server_url: ${fake.serverUrl}
      api_url: ${fake.apiUrl}
      scopes: ${JSON.stringify(opts.scopes ?? ['read:org', 'user:email'])}
      allowed_organizations: ${JSON.stringify(opts.organizations ?? [])}
      allowed_teams: ${JSON.stringify(opts.teams ?? {})}
${opts.usePkce === false ? '      use_pkce: false\n' : ''}`,
  });
  return { server, fake, carried: [] };
}

interface LoginResult {
  /** The callback's answer. */
  res: Response;
  body: unknown;
  jar: CookieJar;
  /** The authorize URL vexil answered with. */
  authorizeUrl: URL;
  /** The callback URL the code host redirected to (as the code host wrote it). */
  callbackUrl: URL;
}

/**
 * A browser logging in: the UI fetches the authorize JSON, the browser goes to the code host
 * (which approves at once, as `login`), and follows the redirect back to vexil's callback.
 * `tamper` may change the callback URL (state, code) before it is followed.
 */
async function browserLogin(
  s: { server: { url: string }; carried: string[] },
  opts: {
    base?: string;
    login?: string;
    jar?: CookieJar;
    accept?: string;
    /** Changes the request to the code host (what the user approves there). */
    atHost?: (u: URL) => void;
    tamper?: (u: URL, jar: CookieJar) => void;
  } = {},
): Promise<LoginResult> {
  const jar = opts.jar ?? new CookieJar();
  const base = opts.base ?? '/auth/v1/method/code_host';
  const a = await fetch(`${s.server.url}${base}/authorize`, { headers: jar.with() });
  if (a.status !== 200) throw new Error(`authorize answered ${a.status}: ${await a.text()}`);
  jar.store(a);
  const authorizeUrl = new URL(((await a.json()) as { authorizeUrl: string }).authorizeUrl);
  const atHost = new URL(authorizeUrl);
  if (opts.login !== undefined) atHost.searchParams.set('login', opts.login);
  opts.atHost?.(atHost);
  const approved = await fetch(atHost, { redirect: 'manual' });
  const callbackUrl = new URL(approved.headers.get('location')!);
  for (const name of ['code', 'state']) {
    const value = callbackUrl.searchParams.get(name);
    if (value) s.carried.push(value);
  }
  const follow = new URL(callbackUrl.pathname + callbackUrl.search, s.server.url);
  opts.tamper?.(follow, jar);
  const res = await fetch(follow, { redirect: 'manual', headers: jar.with({ accept: opts.accept ?? 'application/json' }) });
  jar.store(res);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // the redirect's text body
  }
  return { res, body, jar, authorizeUrl, callbackUrl };
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

function noSecretsLogged(t: Test, s: Setup, extra: string[] = []): void {
  const text = s.server.logs.text();
  t.notOk(text.includes(CLIENT_SECRET), 'the client secret is not logged');
  for (const token of s.fake.tokens.keys()) t.notOk(text.includes(token), 'no code-host access token is logged');
  for (const secret of extra) t.notOk(text.includes(secret), 'no client token is logged');
  t.ok(s.carried.length > 0);
  for (const value of s.carried) t.notOk(text.includes(value), 'no authorization code or state is logged');
}

function flows(t: Test, storage: () => string): void {
  t.test('an allowed organization and team: session cookie, protected routes, /auth/v1/self', async (t) => {
    const s = await setup(t, { storage: storage(), organizations: ['acme'], teams: { acme: ['flag-admins'] } });

    const listing = await getJson(`${s.server.url}/auth/v1/method`);
    t.same((listing.body as { methods: unknown[] }).methods[1], {
      method: 'METHOD_CODE_HOST',
      enabled: true,
      sessionCompatible: true,
      metadata: { authorize_url: '/auth/v1/method/code_host/authorize', callback_url: '/auth/v1/method/code_host/callback' },
    });

    const login = await browserLogin(s);
    t.equal(login.authorizeUrl.origin + login.authorizeUrl.pathname, `${s.fake.serverUrl}/login/oauth/authorize`);
    t.same(
      {
        client_id: login.authorizeUrl.searchParams.get('client_id'),
        redirect_uri: login.authorizeUrl.searchParams.get('redirect_uri'),
        scope: login.authorizeUrl.searchParams.get('scope'),
      },
      { client_id: 'vexil-app', redirect_uri: `${PUBLIC}/auth/v1/method/code_host/callback`, scope: 'read:org user:email' },
    );
    // PKCE: an S256 challenge in the URL, its verifier in the exchange (the fake checks they match).
    t.equal(login.authorizeUrl.searchParams.get('code_challenge_method'), 'S256');
    const challenge = login.authorizeUrl.searchParams.get('code_challenge')!;
    const verifier = new URLSearchParams(s.fake.requests.find((r) => r.path === '/login/oauth/access_token')!.body).get('code_verifier')!;
    t.equal(createHash('sha256').update(verifier).digest('base64url'), challenge);
    t.equal(login.res.status, 302, 'the callback redirects');
    t.equal(login.res.headers.get('location'), '/', 'to the UI root');
    const cookie = login.jar.get('svc_client_token');
    t.ok(cookie, 'the session cookie is set');
    t.match(cookie!.attributes, { path: '/', httponly: '', samesite: 'Lax' });
    t.notOk('domain' in cookie!.attributes, 'host-only: an IP address as session.domain sets no Domain');
    t.equal(Number(cookie!.attributes['max-age']), 24 * 3600, 'lives session.token_lifetime');
    t.notOk(login.jar.get('svc_client_state'), 'the state cookie is dropped');

    const self = await getJson(`${s.server.url}/auth/v1/self`, login.jar.with());
    t.equal(self.status, 200);
    t.match(self.body, {
      method: 'METHOD_CODE_HOST',
      expiresAt: '2030-01-02T00:00:00.000Z',
      metadata: {
        'io.svc.auth.code_host.login': 'alice',
        'io.svc.auth.code_host.id': '1001',
        'io.svc.auth.code_host.name': 'Alice Test',
        'io.svc.auth.code_host.email': 'alice@example.test',
        'io.svc.auth.code_host.organizations': '["acme"]',
        'io.svc.auth.code_host.teams': '{"acme":["flag-admins"]}',
        'io.svc.auth.email': 'alice@example.test',
        'io.svc.auth.name': 'Alice Test',
      },
    });
    const flags = await getJson(`${s.server.url}/api/v1/namespaces/default/flags`, login.jar.with());
    t.equal(flags.status, 200, 'a protected route accepts the session cookie');
    const anonymous = await getJson(`${s.server.url}/api/v1/namespaces/default/flags`);
    t.same(anonymous, { status: 401, body: UNAUTHENTICATED }, 'and refuses without it');

    // The code host was asked only what the login needs, with the token it issued.
    t.same(
      s.fake.requests.map((r) => `${r.method} ${r.path}`).sort(),
      [
        'GET /login/oauth/authorize',
        'GET /user',
        'GET /user/emails',
        'GET /user/orgs',
        'GET /user/teams',
        'POST /login/oauth/access_token',
      ].sort(),
    );
    noSecretsLogged(t, s, [cookie!.value]);

    // Logging out expires the record and drops the cookie; a second login gets a new session.
    const second = await browserLogin(s);
    t.not(second.authorizeUrl.searchParams.get('code_challenge'), challenge, 'a fresh verifier per login');
    const logout = await fetch(`${s.server.url}/auth/v1/self/expire`, { method: 'PUT', headers: login.jar.with() });
    t.equal(logout.status, 200);
    login.jar.store(logout);
    t.notOk(login.jar.get('svc_client_token'), 'logout drops the cookie');
    s.server.clock.advance(1); // expired "now": past it from the next millisecond on
    t.equal((await getJson(`${s.server.url}/auth/v1/self`, { cookie: `svc_client_token=${cookie!.value}` })).status, 401, 'the old session is over');
    t.equal((await getJson(`${s.server.url}/auth/v1/self`, second.jar.with())).status, 200, 'the other session is not');
    // A session lasts session.token_lifetime (24h by default).
    s.server.clock.advance(24 * 3600_000);
    t.same(await getJson(`${s.server.url}/api/v1/namespaces/default/flags`, second.jar.with()), { status: 401, body: UNAUTHENTICATED }, 'expired');
  });

  t.test('refused: not in an allowed organization, or not in an allowed team', async (t) => {
    const users: FakeUser[] = [
      { login: 'alice', id: 1, orgs: ['acme'], teams: [{ org: 'acme', slug: 'flag-admins' }] },
      { login: 'mallory', id: 2, orgs: ['elsewhere'], teams: [] },
      { login: 'intern', id: 3, orgs: ['acme'], teams: [{ org: 'acme', slug: 'interns' }] },
    ];
    const s = await setup(t, { storage: storage(), users, organizations: ['acme', 'widgets'], teams: { acme: ['flag-admins'] } });
    t.match(
      s.server.logs.entries().find((e) => (e.level === 40 || e.level === 'warn') && 'organizations' in e),
      { organizations: ['widgets'], msg: /have no allowed_teams entry, so none of their members can log in/ },
      'an allowed organization without teams is pointed out at start',
    );
    const outsider = await browserLogin(s, { login: 'mallory' });
    t.equal(outsider.res.status, 403);
    t.same(outsider.body, {
      code: 7,
      message: 'handling code host callback: code host user "mallory" is not in an allowed team of an allowed organization',
      details: [],
    });
    t.notOk(outsider.jar.get('svc_client_token'), 'no session');
    t.notOk(outsider.jar.get('svc_client_state'), 'the state cookie is dropped');
    const intern = await browserLogin(s, { login: 'intern' });
    t.equal(intern.res.status, 403);
    t.notOk(intern.jar.get('svc_client_token'));
    // A browser (navigating, preferring HTML) reads the refusal as a page.
    const browser = await browserLogin(s, { login: 'mallory', accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' });
    t.equal(browser.res.status, 403);
    t.equal(browser.res.headers.get('content-type'), 'text/html; charset=utf-8');
    t.equal(browser.res.headers.get('content-security-policy'), "default-src 'none'");
    t.match(browser.body, '<h1>403 Forbidden</h1><p>handling code host callback: code host user &quot;mallory&quot; is not in an allowed team of an allowed organization</p>');
    const tokens = await getJson(`${s.server.url}/auth/v1/tokens`, {});
    t.equal(tokens.status, 401);
    // A grant without read:org cannot show membership: refused, saying why.
    const narrow = await browserLogin(s, { atHost: (u) => u.searchParams.set('scope', 'user:email') });
    t.same({ status: narrow.res.status, body: narrow.body }, {
      status: 403,
      body: { code: 7, message: 'handling code host callback: the code host did not grant the read:org scope, needed to check organization membership', details: [] },
    });
    t.notOk(s.fake.requests.some((r) => r.path === '/user/orgs' && r.authorization === `Bearer ${[...s.fake.tokens.keys()].at(-1)}`), 'no membership call without the scope');
    // Membership is read at each login: once in the team, the intern gets in.
    users[2]!.teams!.push({ org: 'acme', slug: 'flag-admins' });
    const later = await browserLogin(s, { login: 'intern' });
    t.equal(later.res.status, 302);
    t.ok(later.jar.get('svc_client_token'));
    t.match(s.server.logs.entries().find((e) => e.msg === 'code host login refused'), { login: 'mallory', reason: /not in an allowed team/ });
    noSecretsLogged(t, s);
  });

  t.test('organizations only: any member; without an allow-list anyone', async (t) => {
    const users: FakeUser[] = [
      { login: 'alice', id: 1, orgs: ['Acme'], teams: [] },
      { login: 'mallory', id: 2, orgs: [], teams: [] },
    ];
    const s = await setup(t, { storage: storage(), users, organizations: ['acme', 'widgets'] });
    t.equal((await browserLogin(s, { login: 'alice' })).res.status, 302, 'organization names compare case-insensitively');
    const refused = await browserLogin(s, { login: 'mallory' });
    t.same(refused.body, {
      code: 7,
      message: 'handling code host callback: code host user "mallory" is not a member of an allowed organization',
      details: [],
    });

    const open = await setup(t, { storage: storage(), users, scopes: [], usePkce: false });
    const anyone = await browserLogin(open, { login: 'mallory' });
    t.equal(anyone.res.status, 302);
    const self = await getJson(`${open.server.url}/auth/v1/self`, anyone.jar.with());
    t.same((self.body as { metadata: unknown }).metadata, { 'io.svc.auth.code_host.id': '2', 'io.svc.auth.code_host.login': 'mallory' });
    t.same(
      open.fake.requests.map((r) => r.path).filter((p) => p.startsWith('/user')),
      ['/user'],
      'without read:org or user:email only /user is read',
    );
    t.notOk(anyone.authorizeUrl.searchParams.has('code_challenge'), 'use_pkce: false sends no challenge');
    t.notOk(new URLSearchParams(open.fake.requests.find((r) => r.path === '/login/oauth/access_token')!.body).has('code_verifier'));
  });

  t.test('state: tampered, missing cookie, replayed callback, foreign login', async (t) => {
    const s = await setup(t, { storage: storage() });
    const tampered = await browserLogin(s, { tamper: (u) => u.searchParams.set('state', 'forged') });
    t.same({ status: tampered.res.status, body: tampered.body }, {
      status: 401,
      body: { code: 16, message: 'handling code host callback: unexpected state parameter', details: [] },
    });
    const noCookie = await browserLogin(s, { tamper: (_u, jar) => jar.delete('svc_client_state') });
    t.same(noCookie.body, { code: 16, message: 'handling code host callback: missing state parameter', details: [] });

    // The same callback twice (a reload, or a stolen redirect): the state is single use.
    let replay: URL | undefined;
    const first = await browserLogin(s, { tamper: (u) => (replay = new URL(u)) });
    t.equal(first.res.status, 302);
    const jar = new CookieJar();
    const again = await fetch(replay!, { redirect: 'manual', headers: jar.with() });
    t.equal(again.status, 401, 'without the (dropped) state cookie');
    // Another browser's callback carries a state this browser's cookie does not hold.
    const mine = new CookieJar();
    const a = await fetch(`${s.server.url}/auth/v1/method/code_host/authorize`);
    mine.store(a);
    const theirs = await browserLogin(s, { tamper: (_u, jar) => jar.set(`svc_client_state=${mine.get('svc_client_state')!.value}`) });
    t.equal(theirs.res.status, 401);
    t.notOk(theirs.jar.get('svc_client_token'));
  });

  t.test('the code exchange refused or failing; the user denying access', async (t) => {
    const s = await setup(t, { storage: storage() });
    const badCode = await browserLogin(s, { tamper: (u) => u.searchParams.set('code', 'not-a-code') });
    t.same({ status: badCode.res.status, body: badCode.body }, {
      status: 401,
      body: { code: 16, message: 'handling code host callback: the code host refused the login (bad_verification_code)', details: [] },
    });
    s.fake.hook = (r) => (r.route === '/user/orgs' ? { status: 502, body: 'bad gateway' } : undefined);
    const down = await browserLogin(s);
    t.same({ status: down.res.status, body: down.body }, {
      status: 503,
      body: { code: 14, message: 'handling code host callback: the code host is unavailable, try again later', details: [] },
    });
    t.notOk(down.jar.get('svc_client_token'));
    t.match(s.server.logs.entries().find((e) => e.msg === 'code host login failed: the code host did not answer as expected'), {
      error: /code host GET \/user\/orgs: 127\.0\.0\.1:\d+ answered HTTP 502/,
    });
    s.fake.hook = undefined;
    const denied = await browserLogin(s, {
      tamper: (u) => {
        u.searchParams.delete('code');
        u.searchParams.set('error', 'access_denied');
      },
    });
    t.same(denied.body, { code: 16, message: 'handling code host callback: the code host refused the login (access_denied)', details: [] });
    const noCode = await browserLogin(s, { tamper: (u) => u.searchParams.delete('code') });
    t.same(noCode.body, { code: 16, message: 'handling code host callback: missing code parameter', details: [] });
    t.match(s.server.logs.text(), '/auth/v1/method/code_host/callback?code=REDACTED&state=REDACTED', 'refused callbacks are logged, redacted');
    noSecretsLogged(t, s);
  });

  t.test('GitHub Enterprise URLs, and Flipt\'s /github/ paths with their own callback address', async (t) => {
    const s = await setup(t, { storage: storage(), basePath: '/ghe', organizations: ['acme'] });
    const login = await browserLogin(s, { base: '/auth/v1/method/github' });
    t.equal(login.authorizeUrl.origin + login.authorizeUrl.pathname, `${s.fake.url}/ghe/login/oauth/authorize`);
    t.equal(login.callbackUrl.pathname, '/auth/v1/method/github/callback');
    t.equal(login.authorizeUrl.searchParams.get('redirect_uri'), `${PUBLIC}/auth/v1/method/github/callback`);
    t.equal(login.res.status, 302);
    t.same(
      [...new Set(s.fake.requests.map((r) => r.path))].sort(),
      ['/api/v3/user', '/api/v3/user/emails', '/api/v3/user/orgs', '/api/v3/user/teams', '/login/oauth/access_token', '/login/oauth/authorize'],
      'the API under /ghe/api/v3, the login under /ghe/login/oauth',
    );
    const exchange = s.fake.requests.find((r) => r.path === '/login/oauth/access_token')!;
    t.equal(new URLSearchParams(exchange.body).get('redirect_uri'), `${PUBLIC}/auth/v1/method/github/callback`, 'the same callback address in the exchange');
    const self = await getJson(`${s.server.url}/auth/v1/self`, login.jar.with());
    t.equal((self.body as { metadata: Record<string, string> }).metadata['io.svc.auth.code_host.login'], 'alice');
    noSecretsLogged(t, s, [login.jar.get('svc_client_token')!.value]);
  });
}

t.test('vexil serve (a real process): login through the code host; nothing secret on stdout or stderr', async (t) => {
  const fake = await startCodeHostFake({ clients: [{ clientId: 'vexil-app', clientSecret: CLIENT_SECRET }] });
  t.teardown(() => fake.close());
  const dir = tempDir(t);
  const file = writeServeConfig(
    dir,
    `data_dir: data
authentication:
  required: true
  session:
    domain: 127.0.0.1
  methods:
    code_host:
      enabled: true
      client_id: vexil-app
      client_secret: ${CLIENT_SECRET}
      redirect_address: ${PUBLIC}
      server_url: ${fake.serverUrl}
      api_url: ${fake.apiUrl}
      scopes: [read:org]
      allowed_organizations: [acme]
`,
  );
  const proc = await startServe(t, file, dir);
  const s = { server: { url: proc.url }, fake, carried: [] as string[] };
  const login = await browserLogin(s);
  t.equal(login.res.status, 302);
  const self = await getJson(`${proc.url}/auth/v1/self`, login.jar.with());
  t.equal((self.body as { metadata: Record<string, string> })?.metadata['io.svc.auth.code_host.login'], 'alice');
  await proc.waitForLog((e) => e.msg === 'code host session created');
  t.equal(await proc.stop(), 0);
  const output = proc.lines.join('\n') + proc.stderr();
  for (const secret of [CLIENT_SECRET, login.jar.get('svc_client_token')!.value, ...fake.tokens.keys(), ...s.carried]) {
    t.notOk(output.includes(secret), 'no secret in the output');
  }
});

t.test('SQLite', async (t) => {
  flows(t, () => '');
});

t.test('memberships re-read every recheck_interval while a session lives (one re-read per session), no extension', async (t) => {
  const users: FakeUser[] = [
    { login: 'alice', id: 1, orgs: ['acme'], teams: [{ org: 'acme', slug: 'flag-admins' }] },
    { login: 'bob', id: 2, orgs: ['acme'], teams: [{ org: 'acme', slug: 'flag-admins' }] },
  ];
  const s = await setup(t, { storage: '', users, organizations: ['acme'], teams: { acme: ['flag-admins'] } });
  const alice = await browserLogin(s, { login: 'alice' });
  const bob = await browserLogin(s, { login: 'bob' });
  const flags = (jar: CookieJar) => getJson(`${s.server.url}/api/v1/namespaces/default/flags`, jar.with());
  const reads = () => s.fake.requests.filter((r) => r.path === '/user/orgs' || r.path === '/user/teams').length;
  t.equal(reads(), 4, 'organizations and teams read once per login');

  // A 24 h session cannot be extended.
  const extend = await fetch(`${s.server.url}/auth/v1/self/expire?expiresAt=2099-01-01T00:00:00Z`, { method: 'PUT', headers: alice.jar.with() });
  t.equal(extend.status, 403);
  t.match(await extend.json(), { code: 7, message: /^permission denied: a credential's expiry can only be brought forward \(it expires at 2030-01-02T00:00:00\.000Z/ });
  const aliceAgain = await browserLogin(s, { login: 'alice' }); // the cookie was dropped by the refused logout
  t.equal(reads(), 6);

  // alice leaves the team at the code host.
  users[0]!.teams = [];
  s.server.clock.advance(5 * 60_000);
  t.equal((await flags(aliceAgain.jar)).status, 200, 'within recheck_interval (10m): not asked again');
  t.equal(reads(), 6, 'no API call');
  s.server.clock.advance(5 * 60_000);
  const many = await Promise.all(Array.from({ length: 5 }, () => flags(bob.jar)));
  t.same(many.map((r) => r.status), [200, 200, 200, 200, 200], 'bob is still in the team');
  t.equal(reads(), 8, 'five requests at once: one re-read of bob (organizations and teams)');
  t.same(await flags(aliceAgain.jar), { status: 401, body: UNAUTHENTICATED }, 'alice is refused after her re-read');
  t.equal(reads(), 10);
  t.equal((await flags(aliceAgain.jar)).status, 401, 'and stays refused');
  t.equal(reads(), 10, 'without asking again');
  t.ok(
    s.server.logs.entries().some((e) => e.msg === 'code host session refused after a membership re-check' && e.login === 'alice'),
    'the refusal is logged',
  );
  noSecretsLogged(t, s);
});

t.test('admins by code-host team: the others see their own sessions only', async (t) => {
  const users: FakeUser[] = [
    { login: 'alice', id: 1, orgs: ['acme'], teams: [{ org: 'acme', slug: 'flag-admins' }] },
    { login: 'bob', id: 2, orgs: ['acme'], teams: [{ org: 'acme', slug: 'devs' }] },
  ];
  const s = await setup(t, {
    storage: '',
    users,
    organizations: ['acme'],
    teams: { acme: ['flag-admins', 'devs'] },
    authExtra: '  admins:\n    code_host:\n      teams: { acme: [flag-admins] }\n',
  });
  const alice = await browserLogin(s, { login: 'alice' });
  const bob = await browserLogin(s, { login: 'bob' });
  const bobAgain = await browserLogin(s, { login: 'bob' });
  const list = async (jar: CookieJar) =>
    ((await getJson(`${s.server.url}/auth/v1/tokens`, jar.with())).body as { authentications: Array<{ id: string; metadata: Record<string, string> }> })
      .authentications;
  t.equal((await list(alice.jar)).length, 3, 'alice (team flag-admins) sees every session');
  const bobs = await list(bob.jar);
  t.same(bobs.map((a) => a.metadata['io.svc.auth.code_host.login']), ['bob', 'bob'], 'bob sees both of his sessions, not alice\'s');
  const aliceId = (await list(alice.jar)).find((a) => a.metadata['io.svc.auth.code_host.login'] === 'alice')!.id;
  const del = await fetch(`${s.server.url}/auth/v1/tokens/${aliceId}`, { method: 'DELETE', headers: bobAgain.jar.with() });
  t.equal(del.status, 403, 'bob cannot end alice\'s session');
  t.match(await del.json(), { code: 7, message: 'permission denied: only authentication.admins may read or delete authentications created by someone else' });
  t.equal((await getJson(`${s.server.url}/auth/v1/self`, alice.jar.with())).status, 200);
});

const unavailable = postgresUnavailableReason();
if (unavailable !== undefined) {
  reportMissing(t, 'PostgreSQL', unavailable);
} else {
  t.test('PostgreSQL', async (t) => {
    const pg = await startPostgres();
    t.teardown(() => pg.close());
    flows(t, () => `  storage:\n    type: postgres\n    postgres:\n      url: ${JSON.stringify(pg.url)}`);
  });
}
