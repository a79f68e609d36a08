/**
 * Audit events kept in the history store, through a real `vexil serve` process, its real HTTP API
 * and the real oidc-provider: the bootstrap token, tokens created and deleted through `/auth/v1`,
 * an OIDC login and its logout are read back at `/meta/audit` (newest first, filtered, paged), then
 * again after `kill -9` and a restart (the SQLite file keeps them). `/meta/audit` asks for the same
 * credential as `/meta/history`, and a bad parameter is a 400 naming it. No token handed out (nor
 * its SHA-256) appears in `/meta/audit`'s answers or in the data file's audit rows (scanned). Then
 * two replicas coordinated through PostgreSQL and sharing it as their data store: each keeps the
 * events that happened on it, the follower too, in the cluster's audit trail, which both answer.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import tap from 'tap';
import { startServe, writeServeConfig, type ServeProcess } from '../auth/process.js';
import { createToken, request, tempDir } from '../auth/support.js';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { CookieJar, oidcLogin, startOidcProvider } from '../support/oidc-provider.js';
import { isCI, reportMissing } from '../support/requirements.js';
import { writeServeConfig as writeGitServeConfig } from '../support/serve-config.js';
import { postgresUnavailableReason, startPostgres } from '../support/throwaway-db.js';
import { waitFor } from './replicas.js';

interface Party {
  authenticationId: string;
  method: string;
  metadata: Record<string, string>;
  expiresAt: string | null;
}
interface Event {
  id: string;
  type: string;
  time: string;
  actor: Party | null;
  subject: Party;
  address: string | null;
  origin: string | null;
  replica?: string;
}
interface Page {
  events: Event[];
  nextPageToken: string;
}

tap.test('token create and delete, an OIDC login and logout: at /meta/audit, and again after kill -9 and a restart', async (t) => {
  const redirectUri = 'http://vexil.test/auth/v1/method/oidc/idp/callback';
  const idp = await startOidcProvider({
    clientId: 'vexil',
    clientSecret: 'oidc-secret',
    redirectUri,
    requirePkce: true,
    accounts: { alice: { email: 'alice@example.test', email_verified: true } },
  });
  t.teardown(() => idp.close());
  const dir = tempDir(t, 'vexil-audit-');
  const config = writeServeConfig(
    dir,
    `data_dir: data
authentication:
  required: true
  session: { domain: 127.0.0.1 }
  methods:
    token:
      enabled: true
    oidc:
      enabled: true
      providers:
        idp: { issuer_url: "${idp.issuer}", client_id: vexil, client_secret: oidc-secret, redirect_address: "http://vexil.test", scopes: [email], use_pkce: true }
`,
  );
  const a = await startServe(t, config, dir);
  const boot = String((await a.waitForLog((e) => e.msg === 'access token created')).client_token);
  const audit = async (s: ServeProcess, query = '', token = boot) => {
    const res = await fetch(`${s.url}/meta/audit${query === '' ? '' : `?${query}`}`, { headers: { authorization: `Bearer ${token}` } });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Page & { code?: number; message?: string; details?: Array<{ parameter: string }> } };
  };

  const ci = await createToken(a.url, boot, { name: 'ci', description: 'for CI' });
  const gone = await createToken(a.url, boot, { name: 'gone' });
  const scoped = await createToken(a.url, boot, { name: 'prod-only', namespaceKey: 'production' });
  t.equal((await request(`${a.url}/auth/v1/tokens/${gone.authentication.id as string}`, { token: boot, method: 'DELETE' })).status, 200);
  const jar = new CookieJar();
  const login = await oidcLogin(a.url, 'idp', redirectUri, jar);
  t.equal(login.callback.status, 302, login.body);
  const session = jar.cookies.get('svc_client_token')!;
  t.ok(session, 'a session token');
  t.equal((await fetch(`${a.url}/auth/v1/self/expire`, { method: 'PUT', headers: { cookie: jar.header() } })).status, 200, 'logged out');

  const expected = [
    ['io.vexil.auth.logout', 'METHOD_OIDC'],
    ['io.vexil.auth.login', 'METHOD_OIDC'],
    ['io.vexil.auth.token.deleted', 'METHOD_TOKEN'],
    ['io.vexil.auth.token.created', 'METHOD_TOKEN'],
    ['io.vexil.auth.token.created', 'METHOD_TOKEN'],
    ['io.vexil.auth.token.created', 'METHOD_TOKEN'],
    ['io.vexil.auth.token.created', 'METHOD_TOKEN'],
  ];
  const first = await audit(a);
  t.equal(first.status, 200, first.text);
  t.same(first.body.events.map((e) => [e.type, e.subject.method]), expected, 'every change, newest first, the bootstrap token too');
  t.equal(first.body.nextPageToken, '');
  const [logout, loginEvent, deleted, , , created, bootstrap] = first.body.events as [Event, Event, Event, Event, Event, Event, Event];
  const bootId = bootstrap.subject.authenticationId;
  t.match(bootstrap, { origin: 'bootstrap', actor: null, address: null, subject: { metadata: { 'io.svc.auth.token.name': 'initial_bootstrap_token' } } });
  t.match(created, {
    actor: { authenticationId: bootId, method: 'METHOD_TOKEN' },
    subject: { authenticationId: ci.authentication.id, metadata: { 'io.svc.auth.token.name': 'ci', 'io.svc.auth.token.description': 'for CI' } },
    address: '127.0.0.1',
    origin: null,
  });
  t.match(deleted, { actor: { authenticationId: bootId }, subject: { authenticationId: gone.authentication.id } });
  t.match(loginEvent, { actor: null, address: '127.0.0.1', subject: { metadata: { 'io.svc.auth.oidc.email': 'alice@example.test', 'io.svc.auth.oidc.provider': 'idp' } } });
  t.equal(logout.subject.authenticationId, loginEvent.subject.authenticationId, 'the logout names the session logged in');
  t.match(loginEvent.replica, /.+/, 'replicas that do not coordinate say which one recorded it');
  const logged = a.entries().filter((e) => e.msg === 'audit').map((e) => (e.audit as { id: string }).id);
  t.same(first.body.events.map((e) => e.id).reverse(), logged, 'the same events, by id, as the log lines');

  // Filters and paging.
  t.same((await audit(a, 'type=io.vexil.auth.login')).body.events.map((e) => e.id), [loginEvent.id], 'by type');
  t.same((await audit(a, `authenticationId=${bootId}`)).body.events.map((e) => e.type), [
    'io.vexil.auth.token.deleted',
    'io.vexil.auth.token.created',
    'io.vexil.auth.token.created',
    'io.vexil.auth.token.created',
    'io.vexil.auth.token.created',
  ], 'by authentication id: what it did and what was done to it');
  const seen: string[] = [];
  let query = 'limit=3';
  for (let i = 0; i < 5; i++) {
    const p = (await audit(a, query)).body;
    seen.push(...p.events.map((e) => e.id));
    if (p.nextPageToken === '') break;
    query = `limit=3&pageToken=${p.nextPageToken}`;
  }
  t.same(seen, first.body.events.map((e) => e.id), 'three pages of 3, 3 and 1: every event once, in order');
  const window = (await audit(a, `since=${encodeURIComponent(loginEvent.time)}&until=${encodeURIComponent(logout.time)}`)).body.events.map((e) => e.id);
  // Two requests apart, so (almost surely) two different milliseconds; the store tests pin the edges exactly.
  if (loginEvent.time !== logout.time) t.same(window, [loginEvent.id], 'since inclusive, until exclusive');

  // The same credential as /meta/history: none → 401, a namespace-scoped token → 403.
  t.equal((await fetch(`${a.url}/meta/audit`)).status, 401, 'no token: 401');
  t.equal((await audit(a, '', scoped.clientToken)).status, 403, 'a namespace-scoped token: 403');
  t.equal((await fetch(`${a.url}/meta/history`, { headers: { authorization: `Bearer ${scoped.clientToken}` } })).status, 403, 'as at /meta/history');

  // Bad input: 400s naming the parameter.
  for (const [q, parameter] of [
    ['since=yesterday', 'since'],
    ['until=2026-13-40T99:00:00Z', 'until'],
    ['since=2026-11-27T10:00:00Z&until=2026-11-26T10:00:00Z', 'until'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['pageToken=not-a-token', 'pageToken'],
    [`pageToken=${'A'.repeat(5000)}`, 'pageToken'],
    ['type=io.vexil.revision.served', 'type'],
    [`authenticationId=${'x'.repeat(500)}`, 'authenticationId'],
  ] as const) {
    const res = await audit(a, q);
    t.equal(res.status, 400, `${q.slice(0, 40)}: 400`);
    t.equal(res.body.code, 3);
    t.match(res.body.message, new RegExp(`^${parameter} `), `names ${parameter}`);
    t.same(res.body.details, [{ parameter }]);
  }

  // kill -9 right after the last answer, then a restart on the same data file.
  t.equal(await a.stop('SIGKILL'), null, 'killed');
  const b = await startServe(t, config, dir);
  const again = await audit(b);
  t.equal(again.status, 200);
  t.same(again.body.events, first.body.events, 'every event survives the restart, as it was');
  const created2 = await createToken(b.url, boot, { name: 'after-restart' });
  const latest = (await audit(b, 'limit=1')).body.events[0]!;
  t.match(latest, { type: 'io.vexil.auth.token.created', subject: { authenticationId: created2.authentication.id } }, 'recording goes on after the restart');
  const answers = [first.text, again.text, (await audit(b)).text];
  // The audit log lines of both runs are scanned too.
  answers.push(JSON.stringify([...a.entries(), ...b.entries()].filter((e) => e.msg === 'audit')));
  t.equal(await b.stop('SIGTERM'), 0, 'clean stop');

  // No token, nor its digest, in what /meta/audit answered or in the file's audit rows.
  const db = new Database(join(dir, 'data', 'auth.db'), { readonly: true });
  const rows = db.prepare('SELECT * FROM audit_events').all();
  const records = JSON.stringify(db.prepare('SELECT * FROM authentications').all());
  db.close();
  const ciDigest = createHash('sha256').update(ci.clientToken).digest('base64url');
  t.ok(records.includes(ciDigest), 'control: the scan looks for the digest as the authentication table holds it');
  t.equal(rows.length, 8, 'eight rows in the file');
  const stored = JSON.stringify(rows);
  for (const token of [boot, ci.clientToken, gone.clientToken, scoped.clientToken, created2.clientToken, session]) {
    const digest = createHash('sha256').update(token).digest();
    for (const secret of [token, digest.toString('base64url'), digest.toString('hex'), digest.toString('base64')]) {
      t.notOk(answers.some((text) => text.includes(secret)), 'not in a /meta/audit answer nor an audit log line');
      t.notOk(stored.includes(secret), 'not in an audit row');
    }
  }
  t.notMatch(stored, /hash/i, 'no hash column or field');
});

/** A request on a connection of its own, so the primary hands it to either worker. */
function onNewConnection(url: string, path: string, token: string, method = 'GET', body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method, agent: false, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

tap.test('server.workers: 2 on one SQLite file: whichever worker answers, /meta/audit shows the events of both', async (t) => {
  const dir = tempDir(t, 'vexil-audit-workers-');
  const config = writeServeConfig(dir, 'data_dir: data\nauthentication:\n  required: true\n  methods:\n    token:\n      enabled: true\n');
  writeFileSync(config, readFileSync(config, 'utf8').replace('  http_port: 0\n', '  http_port: 0\n  workers: 2\n').replace('  encoding: json\n', '  encoding: json\n  requests: all\n'));
  const s = await startServe(t, config, dir);
  const boot = String((await s.waitForLog((e) => e.msg === 'access token created')).client_token);
  await s.waitForLog((e) => e.msg === 'worker listening' && s.entries().filter((x) => x.msg === 'worker listening').length === 2);
  const names: string[] = [];
  for (let i = 0; i < 8; i++) {
    const res = await onNewConnection(s.url, '/auth/v1/method/token', boot, 'POST', JSON.stringify({ name: `t${i}` }));
    t.equal(res.status, 200);
    names.push(`t${i}`);
  }
  const creators = new Set(s.entries().filter((e) => e.msg === 'audit').map((e) => e.pid));
  t.equal(creators.size, 2, 'both workers recorded events');
  const answers = new Set<string>();
  const by = new Set<unknown>();
  for (let i = 0; i < 8; i++) {
    const res = await onNewConnection(s.url, '/meta/audit', boot);
    t.equal(res.status, 200);
    const body = JSON.parse(res.body) as Page;
    t.same(body.events.map((e) => e.subject.metadata['io.svc.auth.token.name']), [...names].reverse().concat('initial_bootstrap_token'), 'all the events');
    answers.add(res.body);
  }
  for (const e of s.entries()) if (e.msg === 'request' && e.url === '/meta/audit') by.add(e.pid);
  t.equal(by.size, 2, 'both workers answered /meta/audit');
  t.equal(answers.size, 1, 'with the same trail');
});

tap.test('with authentication.admins set, only admins read the audit trail', async (t) => {
  const dir = tempDir(t, 'vexil-audit-admins-');
  const config = writeServeConfig(dir, 'data_dir: data\nauthentication:\n  required: true\n  admins:\n    tokens: [initial_bootstrap_token]\n  methods:\n    token:\n      enabled: true\n');
  const s = await startServe(t, config, dir);
  const boot = String((await s.waitForLog((e) => e.msg === 'access token created')).client_token);
  const made = await fetch(`${s.url}/auth/v1/method/token`, { method: 'POST', headers: { authorization: `Bearer ${boot}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'reader' }) });
  t.equal(made.status, 200);
  const reader = ((await made.json()) as { clientToken: string }).clientToken;
  const asReader = await fetch(`${s.url}/meta/audit`, { headers: { authorization: `Bearer ${reader}` } });
  t.equal(asReader.status, 403, 'a token that is not an admin: 403');
  const body = (await asReader.json()) as { code: number; message: string };
  t.equal(body.code, 7);
  t.match(body.message, /authentication\.admins/);
  t.equal((await fetch(`${s.url}/meta/history?reference=main`, { headers: { authorization: `Bearer ${reader}` } })).status !== 403, true, 'the served history stays readable to it');
  const asAdmin = await fetch(`${s.url}/meta/audit`, { headers: { authorization: `Bearer ${boot}` } });
  t.equal(asAdmin.status, 200, 'the admin reads it');
  t.ok(((await asAdmin.json()) as Page).events.length >= 2, 'the bootstrap token and the reader');
});

const pgReason = postgresUnavailableReason() ?? gitUnavailableReason();
tap.test('two replicas coordinated through PostgreSQL: each keeps its own events in the cluster trail, both answer it', { skip: pgReason !== undefined && !isCI() ? pgReason : false }, async (t) => {
  if (pgReason !== undefined) reportMissing(t, 'postgres', pgReason);
  const pg = await startPostgres({ database: 'vexil_audit_cluster' });
  t.teardown(() => pg.close());
  const git = await startGitFixture(t);
  await git.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const replicas: ServeProcess[] = [];
  for (const name of ['a', 'b']) {
    const { dir, config } = writeGitServeConfig(t, `vexil-audit-${name}-`, () => [
      `storage: { type: git, git: { repository: ${JSON.stringify(git.url)}, poll_interval: 1h, cache_dir: cache } }`,
      `cluster: { coordination: { type: postgres, postgres: { url: ${JSON.stringify(pg.url)} } } }`,
      `authentication: { required: true, methods: { token: { enabled: true } }, storage: { type: postgres, postgres: { url: ${JSON.stringify(pg.url)} } } }`,
    ]);
    replicas.push(await startServe(t, config, dir));
  }
  const [a, b] = replicas as [ServeProcess, ServeProcess];
  const boot = String((await a.waitForLog((e) => e.msg === 'access token created')).client_token);
  const role = async (r: ServeProcess) => ((await request(`${r.url}/meta/snapshots`, { token: boot })).body as { coordination?: { role: string } }).coordination?.role;
  await waitFor('one leader, one follower', async () => [await role(a), await role(b)].sort().join() === 'follower,leader');
  const onA = await createToken(a.url, boot, { name: 'made-on-a' });
  const onB = await createToken(b.url, boot, { name: 'made-on-b' });
  t.equal((await request(`${b.url}/auth/v1/tokens/${onA.authentication.id as string}`, { token: boot, method: 'DELETE' })).status, 200);

  // The write is not awaited by the request (PostgreSQL answers a moment after the 200): wait for it.
  const trail = async (r: ServeProcess) => (await request(`${r.url}/meta/audit`, { token: boot })).body as Page;
  await waitFor('four events on both replicas', async () => (await trail(a)).events.length >= 4 && (await trail(b)).events.length >= 4, 10_000);
  const answers = await Promise.all(replicas.map(trail));
  for (const body of answers) {
    t.same(
      body.events.map((e) => [e.type, e.subject.metadata['io.svc.auth.token.name']]),
      [
        ['io.vexil.auth.token.deleted', 'made-on-a'],
        ['io.vexil.auth.token.created', 'made-on-b'],
        ['io.vexil.auth.token.created', 'made-on-a'],
        ['io.vexil.auth.token.created', 'initial_bootstrap_token'],
      ],
      'the events of both replicas, each once',
    );
    t.notOk(body.events.some((e) => e.replica !== undefined), 'cluster events name no replica');
  }
  t.same(answers[0], answers[1], 'both replicas answer the same trail');
  t.equal(answers[0]!.events[1]!.subject.authenticationId, onB.authentication.id);
});
