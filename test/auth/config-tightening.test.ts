/**
 * Tightened configuration applies to the sessions and tokens made before it
 * (src/auth/config-recheck.ts), and the start-up findings of src/auth/startup-checks.ts: warnings,
 * or refusals with `authentication.strict: true`. Records are made through the server's own
 * AuthService (as a login would make them) and presented to the real server.
 */
import t from 'tap';
import { request, startAuthServer, tempDir, UNAUTHENTICATED, type AuthServer } from './support.js';

const CODE_HOST = `    code_host:
      enabled: true
      client_id: cid
      client_secret: sec
      redirect_address: http://flags.example.test
      scopes: [read:org]
      server_url: http://127.0.0.1:9
      api_url: http://127.0.0.1:9
`;

const config = (opts: { oidc: boolean; organizations: string; teams: string }) => `
authentication:
  required: true
  session:
    domain: flags.example.test
  methods:
    token:
      enabled: true
${
  opts.oidc
    ? `    oidc:
      enabled: true
      providers:
        idp: { issuer_url: "http://127.0.0.1:9", client_id: vexil, client_secret: s, redirect_address: "http://flags.example.test" }
`
    : ''
}${CODE_HOST}      allowed_organizations: ${opts.organizations}
      allowed_teams: ${opts.teams}
`;

async function session(s: AuthServer, method: 'METHOD_OIDC' | 'METHOD_CODE_HOST' | 'METHOD_CLUSTER', metadata: Record<string, string>): Promise<string> {
  const created = await s.runtime.service.create({ method, metadata, expiresAt: s.clock.now + 24 * 3600_000 });
  return created.clientToken;
}

const status = async (s: AuthServer, token: string) => (await request(`${s.url}/api/v1/namespaces`, { token })).status;

const codeHost = (orgs?: string[], teams?: Record<string, string[]>) => ({
  'io.svc.auth.code_host.login': 'alice',
  'io.svc.auth.code_host.id': '1',
  ...(orgs !== undefined ? { 'io.svc.auth.code_host.organizations': JSON.stringify(orgs) } : {}),
  ...(teams !== undefined ? { 'io.svc.auth.code_host.teams': JSON.stringify(teams) } : {}),
});

t.test('a removed method or provider, an organization or team no longer allowed: refused at the next request', async (t) => {
  const dir = tempDir(t);
  const s = await startAuthServer(t, { dir, yaml: config({ oidc: true, organizations: '[acme, widgets]', teams: '{}' }) });
  const oidc = await session(s, 'METHOD_OIDC', { 'io.svc.auth.oidc.provider': 'idp', 'io.svc.auth.oidc.sub': 'u1' });
  const retired = await session(s, 'METHOD_OIDC', { 'io.svc.auth.oidc.provider': 'retired', 'io.svc.auth.oidc.sub': 'u2' });
  const cluster = await session(s, 'METHOD_CLUSTER', { 'io.svc.auth.cluster.namespace': 'payments', 'io.svc.auth.cluster.serviceaccount.name': 'api' });
  const admins = await session(s, 'METHOD_CODE_HOST', codeHost(['acme'], { acme: ['flag-admins'] }));
  const interns = await session(s, 'METHOD_CODE_HOST', codeHost(['acme'], { acme: ['interns'] }));
  const widgets = await session(s, 'METHOD_CODE_HOST', codeHost(['widgets'], { widgets: [] }));
  const unread = await session(s, 'METHOD_CODE_HOST', codeHost());

  t.equal(await status(s, oidc), 200);
  t.equal(await status(s, retired), 401, 'a session of a provider no longer configured');
  t.equal(await status(s, cluster), 401, 'a record of a method not enabled');
  t.equal(await status(s, admins), 200);
  t.equal(await status(s, interns), 200, 'no allowed_teams yet: any member of an allowed organization');
  t.equal(await status(s, widgets), 200);
  t.equal(await status(s, unread), 401, 'memberships never recorded, while allowed_organizations is set');
  const reasons = s.logs.entries().filter((e) => e.msg === 'request was not authenticated').map((e) => e.reason);
  t.ok(reasons.includes('oidc provider "retired" is no longer configured'));
  t.ok(reasons.includes('authentication method METHOD_CLUSTER is no longer enabled'));
  await s.stop();

  // The operator tightens: OIDC off, widgets no longer allowed, acme only for flag-admins.
  const tight = await startAuthServer(t, { dir, yaml: config({ oidc: false, organizations: '[acme]', teams: '{ acme: [flag-admins] }' }) });
  t.same((await request(`${tight.url}/api/v1/namespaces`, { token: oidc })).body, UNAUTHENTICATED, 'OIDC removed: its sessions are refused');
  t.equal(await status(tight, admins), 200, 'still allowed');
  t.equal(await status(tight, interns), 401, 'a team no longer allowed');
  t.equal(await status(tight, widgets), 401, 'an organization no longer allowed');
  const reasons2 = tight.logs.entries().filter((e) => e.msg === 'request was not authenticated').map((e) => e.reason);
  t.ok(reasons2.includes('authentication method METHOD_OIDC is no longer enabled'));
  t.ok(reasons2.includes('code host user "alice" is not in an allowed team of an allowed organization'));
});

t.test('start-up findings: warnings, refusals with strict', async (t) => {
  const open = `
authentication:
  required: false
  session:
    domain: flags.example.test
  methods:
    token:
      enabled: true
${CODE_HOST}`;
  const s = await startAuthServer(t, { yaml: open });
  const warned = new Map(s.logs.entries().filter((e) => e.level === 'warn' && typeof e.key === 'string').map((e) => [e.key, String(e.msg)]));
  t.match(warned.get('authentication.methods.code_host.allowed_organizations'), /^authentication\.methods\.code_host has no allowed_organizations: anyone with an account on http:\/\/127\.0\.0\.1:9 can log in and create tokens/);
  t.match(warned.get('authentication.admins'), /that is: anyone who can reach this server, without a credential \(authentication\.required is false\); every holder of a static token created without a namespace \(the bootstrap token among them\); anyone with an account on http:\/\/127\.0\.0\.1:9 \(allowed_organizations is empty\);/);
  const required = s.logs.entries().filter((e) => e.key === 'authentication.required').map((e) => String(e.msg));
  t.equal(required.length, 2);
  t.match(required[1], /^authentication\.methods code_host is enabled while authentication\.required is false: no request needs the credentials it hands out/);

  // strict: the same configuration does not start, and says every reason.
  const err = await startAuthServer(t, { yaml: open.replace('  required: false\n', '  required: false\n  strict: true\n') }).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  t.ok(err, 'refused');
  t.match(err?.message, /^authentication\.strict is true and: authentication\.methods\.code_host\.allowed_organizations: /);
  t.match(err?.message, /; authentication\.required: authentication\.methods\.token is enabled while authentication\.required is false/);
  t.match(err?.message, /; authentication\.required: authentication\.methods code_host is enabled while authentication\.required is false/);

  // strict with nothing to find starts (admins unset is only ever a warning).
  const fine = await startAuthServer(t, { yaml: 'authentication:\n  required: true\n  strict: true\n  methods:\n    token:\n      enabled: true\n' });
  t.ok(fine.logs.entries().some((e) => e.key === 'authentication.admins'));
});
