/**
 * Audit events (src/auth/audit.ts) from a real vexil: token creation and deletion, logout and a
 * shortened expiry through `/auth/v1`, the bootstrap token, an OIDC login against the real
 * oidc-provider and a cluster service-account exchange. Each is one `msg: "audit"` log line with the
 * documented shape, the client address read as `server.trusted_proxies` says, and never a token
 * (every captured line is scanned for every token handed out).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { AuditTrail, type AuditEvent } from '../../src/auth/audit.js';
import { clientAddressReader } from '../../src/http/client-address.js';
import { makeTestCertificates } from '../support/git-tls.js';
import { startJwtIssuer } from '../support/jwt-issuer.js';
import { CookieJar, oidcLogin, startOidcProvider } from '../support/oidc-provider.js';
import { bootstrapTokenFrom, captureLogs, createToken, fakeClock, request, startAuthServer, tempDir, type LogCapture } from './support.js';

const audits = (logs: LogCapture): AuditEvent[] => logs.entries().filter((e) => e.msg === 'audit').map((e) => e.audit as AuditEvent);

t.test('tokens through /auth/v1: created, deleted, shortened, logged out; address through a trusted proxy', async (t) => {
  const s = await startAuthServer(t, {
    yaml: `
server:
  trusted_proxies: [127.0.0.1, "10.0.0.0/8"]
authentication:
  required: true
  methods:
    token:
      enabled: true
`,
  });
  const boot = bootstrapTokenFrom(s.logs)!;
  const bootstrapEvent = audits(s.logs).find((e) => e.type === 'io.vexil.auth.token.created');
  t.match(bootstrapEvent, { origin: 'bootstrap', subject: { method: 'METHOD_TOKEN', metadata: { 'io.svc.auth.token.name': 'initial_bootstrap_token' } } });
  t.notOk(bootstrapEvent && 'address' in bootstrapEvent, 'no request asked for the bootstrap token: no address');
  const bootId = bootstrapEvent!.subject.authenticationId;

  // The peer (127.0.0.1) and 10.1.2.3 are trusted: the client is the right-most untrusted hop.
  const viaProxy = { 'x-forwarded-for': '6.6.6.6, 203.0.113.7, 10.1.2.3' };
  const made = await request(`${s.url}/auth/v1/method/token`, { token: boot, body: { name: 'ci', description: 'for CI' }, headers: viaProxy });
  t.equal(made.status, 200);
  const ci = made.body as { clientToken: string; authentication: { id: string } };
  const other = await createToken(s.url, boot, { name: 'other' });

  t.equal((await request(`${s.url}/auth/v1/tokens/${other.authentication.id as string}`, { token: boot, method: 'DELETE' })).status, 200);
  t.equal((await request(`${s.url}/auth/v1/tokens/no-such-id`, { token: boot, method: 'DELETE' })).status, 200, 'deleting nothing (a no-op)');
  const later = new Date(s.clock.now + 3600_000).toISOString();
  t.equal((await request(`${s.url}/auth/v1/self/expire?expiresAt=${later}`, { token: ci.clientToken, method: 'PUT' })).status, 200);
  t.equal((await request(`${s.url}/auth/v1/self/expire`, { token: ci.clientToken, method: 'PUT' })).status, 200);

  const events = audits(s.logs);
  t.same(
    events.map((e) => e.type),
    ['io.vexil.auth.token.created', 'io.vexil.auth.token.created', 'io.vexil.auth.token.created', 'io.vexil.auth.token.deleted', 'io.vexil.auth.expiry.shortened', 'io.vexil.auth.logout'],
    'one event per change, none for the no-op delete',
  );
  const [, created, , deleted, shortened, logout] = events as [AuditEvent, AuditEvent, AuditEvent, AuditEvent, AuditEvent, AuditEvent];
  t.match(created, {
    type: 'io.vexil.auth.token.created',
    time: new Date(s.clock.now).toISOString(),
    address: '203.0.113.7',
    actor: { authenticationId: bootId, method: 'METHOD_TOKEN' },
    subject: { authenticationId: ci.authentication.id, method: 'METHOD_TOKEN', metadata: { 'io.svc.auth.token.name': 'ci', 'io.svc.auth.token.description': 'for CI' } },
  });
  t.match(created.id, /^[0-9a-f-]{36}$/, 'an event id');
  t.notOk('origin' in created, 'asked for by a request: no origin');
  t.match(deleted, { address: '127.0.0.1', actor: { authenticationId: bootId }, subject: { authenticationId: other.authentication.id, metadata: { 'io.svc.auth.token.name': 'other' } } });
  t.match(shortened, { actor: { authenticationId: ci.authentication.id }, subject: { authenticationId: ci.authentication.id, expiresAt: later } });
  t.match(logout, { actor: { authenticationId: ci.authentication.id }, subject: { authenticationId: ci.authentication.id, expiresAt: new Date(s.clock.now).toISOString() } });

  // A token the holder presented is never written; nor is any token handed out.
  const text = s.logs.text();
  const auditLines = s.logs.lines.flatMap((l) => l.split('\n')).filter((l) => l.includes('"msg":"audit"'));
  t.equal(auditLines.length, 6);
  for (const token of [boot, ci.clientToken, other.clientToken]) {
    t.notOk(auditLines.some((l) => l.includes(token)), 'no token in an audit line');
  }
  t.notOk(text.includes(ci.clientToken) || text.includes(other.clientToken), 'no created token anywhere in the log');
  t.notOk(auditLines.some((l) => /hashed|Hash/.test(l)), 'no token hash either');
  const line = JSON.parse(auditLines[1]!) as Record<string, unknown>;
  t.match(line, { level: 'info', msg: 'audit', reqId: String }, 'an info line carrying the request id');
});

t.test('without trusted proxies, X-Forwarded-For is ignored', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  required: true\n  methods:\n    token:\n      enabled: true\n' });
  const boot = bootstrapTokenFrom(s.logs)!;
  await request(`${s.url}/auth/v1/method/token`, { token: boot, body: { name: 'x' }, headers: { 'x-forwarded-for': '203.0.113.7' } });
  t.match(audits(s.logs).at(-1), { type: 'io.vexil.auth.token.created', address: '127.0.0.1' });
});

t.test('a bad trusted_proxies entry is a located config error', async (t) => {
  await t.rejects(
    startAuthServer(t, { yaml: 'server:\n  trusted_proxies: [10.0.0.0/40, proxy.internal]\n' }),
    /server\.trusted_proxies\.0.*prefix length must be 0 to 32[\s\S]*server\.trusted_proxies\.1.*not an IP address/,
  );
});

t.test('an OIDC login and its logout against the real oidc-provider', async (t) => {
  const redirectUri = 'http://vexil.test/auth/v1/method/oidc/idp/callback';
  const idp = await startOidcProvider({
    clientId: 'vexil',
    clientSecret: 'oidc-secret',
    redirectUri,
    requirePkce: true,
    accounts: { alice: { email: 'alice@example.test', email_verified: true } },
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
      providers:
        idp: { issuer_url: "${idp.issuer}", client_id: vexil, client_secret: oidc-secret, redirect_address: "http://vexil.test", scopes: [email], use_pkce: true }
`,
    clock: fakeClock(Date.now()),
  });
  const jar = new CookieJar();
  const login = await oidcLogin(s.url, 'idp', redirectUri, jar);
  t.equal(login.callback.status, 302, login.body);
  const session = jar.cookies.get('svc_client_token')!;
  t.equal((await fetch(`${s.url}/auth/v1/self/expire`, { method: 'PUT', headers: { cookie: jar.header() } })).status, 200);

  const events = audits(s.logs);
  t.same(events.map((e) => e.type), ['io.vexil.auth.login', 'io.vexil.auth.logout']);
  t.match(events[0], {
    address: '127.0.0.1',
    subject: { method: 'METHOD_OIDC', metadata: { 'io.svc.auth.oidc.email': 'alice@example.test', 'io.svc.auth.oidc.provider': 'idp' } },
  });
  t.notOk('actor' in events[0]!, 'a login has no prior credential');
  t.equal(events[1]!.subject.authenticationId, events[0]!.subject.authenticationId, 'the logout names the session logged in');
  t.notOk(s.logs.text().includes(session), 'the session token is in no log line');
});

t.test('a cluster service-account exchange is a login', async (t) => {
  const certs = await makeTestCertificates(t);
  const cluster = await startJwtIssuer(t, { tls: { key: certs.key, cert: certs.cert }, requireBearer: 'pod-own-token' });
  const dir = tempDir(t);
  writeFileSync(join(dir, 'pod-token'), 'pod-own-token');
  const s = await startAuthServer(t, {
    dir,
    yaml: `
authentication:
  required: true
  methods:
    cluster:
      enabled: true
      discovery_url: ${cluster.url}
      ca_path: ${certs.caPath}
      service_account_token_path: ${join(dir, 'pod-token')}
`,
  });
  const sa = await cluster.signServiceAccount({ now: Math.floor(s.clock.now / 1000) });
  const exchanged = await request(`${s.url}/auth/v1/method/cluster/serviceaccount`, { body: { service_account_token: sa } });
  t.equal(exchanged.status, 200);
  const events = audits(s.logs);
  t.equal(events.length, 1);
  t.match(events[0], { type: 'io.vexil.auth.login', subject: { method: 'METHOD_CLUSTER', metadata: { 'io.svc.auth.cluster.namespace': String } } });
  const text = s.logs.text();
  t.notOk(text.includes(sa) || text.includes((exchanged.body as { clientToken: string }).clientToken), 'neither token is logged');
});

t.test('listeners receive each event; a throwing listener is logged, not fatal', async (t) => {
  const logs = captureLogs();
  const clock = fakeClock();
  const trail = new AuditTrail(logs.logger, clock.clock, clientAddressReader([]));
  const seen: string[] = [];
  trail.onEvent(() => {
    throw new Error('sink down');
  });
  trail.onEvent((e) => seen.push(e.type));
  const subject = { id: 'a1', method: 'METHOD_TOKEN' as const, metadata: { 'io.svc.auth.token.name': 'n' }, createdAt: clock.now, updatedAt: clock.now };
  const event = trail.record({ type: 'io.vexil.auth.token.deleted', subject });
  t.same(seen, ['io.vexil.auth.token.deleted']);
  t.ok(logs.entries().some((e) => e.msg === 'an audit event listener failed' && e.auditId === event.id));
  t.same(Object.keys(event).sort(), ['id', 'subject', 'time', 'type']);
});
