/**
 * The pure parts of token administration: who is an admin under `authentication.admins`
 * (src/auth/admins.ts), the principal a record stands for (src/auth/principal.ts), and who the
 * start-up warning names when admins is unset (src/auth/startup-checks.ts), for every method.
 */
import t from 'tap';
import { createAdminPolicy } from '../../src/auth/admins.js';
import { principalOf } from '../../src/auth/principal.js';
import { startupFindings, unscopedPrincipals } from '../../src/auth/startup-checks.js';
import type { Authentication, Method } from '../../src/auth/types.js';
import type { AuthenticationAdmins } from '../../src/config/types.js';
import { loadConfig } from '../../src/config/load.js';

const record = (method: Method, metadata: Record<string, string>, id = 'rec-1'): Authentication => ({
  id,
  method,
  createdAt: 0,
  updatedAt: 0,
  metadata,
});

const ADMINS: AuthenticationAdmins = {
  tokens: ['tok-id-1', 'ops'],
  oidc: { emails: ['Lead@Example.com'], claims: { sub: ['0042'] } },
  code_host: { logins: ['OctoCat'], organizations: ['Platform'], teams: { acme: ['flag-admins'] } },
  cluster: { service_accounts: ['ops/deployer', 'platform/*'] },
  jwt: { claims: { role: ['admin'], iss: ['https://idp.example.com'], 'io.svc.auth.team': ['sre'] } },
};

t.test('admins: each method matches its own entries, nothing else', async (t) => {
  const p = createAdminPolicy(ADMINS);
  t.ok(p.configured);
  const cases: Array<[string, Authentication | undefined, boolean]> = [
    ['token by id', record('METHOD_TOKEN', { 'io.svc.auth.token.name': 'x' }, 'tok-id-1'), true],
    ['token by name', record('METHOD_TOKEN', { 'io.svc.auth.token.name': 'ops' }), true],
    ['other token', record('METHOD_TOKEN', { 'io.svc.auth.token.name': 'dev' }), false],
    ['oidc email, any case', record('METHOD_OIDC', { 'io.svc.auth.oidc.email': 'lead@example.COM' }), true],
    ['oidc claim', record('METHOD_OIDC', { 'io.svc.auth.oidc.sub': '0042' }), true],
    ['oidc other', record('METHOD_OIDC', { 'io.svc.auth.oidc.email': 'dev@example.com', 'io.svc.auth.oidc.sub': '7' }), false],
    ['code host login', record('METHOD_CODE_HOST', { 'io.svc.auth.code_host.login': 'octocat' }), true],
    ['code host organization', record('METHOD_CODE_HOST', { 'io.svc.auth.code_host.organizations': '["platform","x"]' }), true],
    ['code host team', record('METHOD_CODE_HOST', { 'io.svc.auth.code_host.organizations': '["acme"]', 'io.svc.auth.code_host.teams': '{"Acme":["Flag-Admins"]}' }), true],
    ['code host other team', record('METHOD_CODE_HOST', { 'io.svc.auth.code_host.organizations': '["acme"]', 'io.svc.auth.code_host.teams': '{"acme":["devs"]}' }), false],
    ['code host damaged metadata', record('METHOD_CODE_HOST', { 'io.svc.auth.code_host.organizations': '{', 'io.svc.auth.code_host.teams': '[' }), false],
    ['cluster account', record('METHOD_CLUSTER', { 'io.svc.auth.cluster.namespace': 'ops', 'io.svc.auth.cluster.serviceaccount.name': 'deployer' }), true],
    ['cluster namespace/*', record('METHOD_CLUSTER', { 'io.svc.auth.cluster.namespace': 'platform', 'io.svc.auth.cluster.serviceaccount.name': 'any' }), true],
    ['cluster other', record('METHOD_CLUSTER', { 'io.svc.auth.cluster.namespace': 'ops', 'io.svc.auth.cluster.serviceaccount.name': 'web' }), false],
    ['jwt role', record('METHOD_JWT', { 'io.svc.auth.jwt.role': 'admin' }, ''), true],
    ['jwt iss', record('METHOD_JWT', { 'io.svc.auth.jwt.issuer': 'https://idp.example.com' }, ''), true],
    ['jwt full claim', record('METHOD_JWT', { 'io.svc.auth.team': 'sre' }, ''), true],
    ['jwt other', record('METHOD_JWT', { 'io.svc.auth.jwt.role': 'viewer', 'io.svc.auth.jwt.issuer': 'https://other' }, ''), false],
    ['no credential', undefined, false],
  ];
  for (const [name, a, expected] of cases) t.equal(p.isAdmin(a), expected, name);
  t.ok(p.reservedName('ops'));
  t.notOk(p.reservedName('dev'));

  const open = createAdminPolicy(undefined);
  t.notOk(open.configured);
  t.ok(open.isAdmin(undefined) && open.isAdmin(record('METHOD_TOKEN', {})), 'unset: everyone');
  t.notOk(open.reservedName('ops'));
});

t.test('principals: one per person or workload, not per session', async (t) => {
  const oidc1 = record('METHOD_OIDC', { 'io.svc.auth.oidc.provider': 'google', 'io.svc.auth.oidc.sub': '42' }, 's1');
  const oidc2 = record('METHOD_OIDC', { 'io.svc.auth.oidc.provider': 'google', 'io.svc.auth.oidc.sub': '42' }, 's2');
  t.equal(principalOf(oidc1), principalOf(oidc2), 'two sessions of one OIDC user');
  t.not(principalOf(oidc1), principalOf(record('METHOD_OIDC', { 'io.svc.auth.oidc.provider': 'okta', 'io.svc.auth.oidc.sub': '42' })), 'per provider');
  t.equal(principalOf(record('METHOD_TOKEN', {}, 'abc')), '["token","abc"]');
  t.equal(
    principalOf(record('METHOD_CODE_HOST', { 'io.svc.auth.code_host.id': '7', 'io.svc.auth.code_host.login': 'a' })),
    principalOf(record('METHOD_CODE_HOST', { 'io.svc.auth.code_host.id': '7', 'io.svc.auth.code_host.login': 'renamed' })),
    'code host: by id, whatever the login',
  );
  t.equal(
    principalOf(record('METHOD_CLUSTER', { 'io.svc.auth.cluster.namespace': 'ns', 'io.svc.auth.cluster.serviceaccount.name': 'sa', 'io.svc.auth.cluster.pod.name': 'p1' })),
    principalOf(record('METHOD_CLUSTER', { 'io.svc.auth.cluster.namespace': 'ns', 'io.svc.auth.cluster.serviceaccount.name': 'sa', 'io.svc.auth.cluster.pod.name': 'p2' })),
    'cluster: by service account, whatever the pod',
  );
  t.not(
    principalOf(record('METHOD_CLUSTER', { 'io.svc.auth.cluster.namespace': 'a/b', 'io.svc.auth.cluster.serviceaccount.name': 'c' })),
    principalOf(record('METHOD_CLUSTER', { 'io.svc.auth.cluster.namespace': 'a', 'io.svc.auth.cluster.serviceaccount.name': 'b/c' })),
    'unambiguous',
  );
  t.equal(principalOf(record('METHOD_JWT', { 'io.svc.auth.jwt.issuer': 'i' }, '')), undefined, 'a JWT without user claims names nobody');
  t.ok(principalOf(record('METHOD_JWT', { 'io.svc.auth.jwt.issuer': 'i', 'io.svc.auth.jwt.sub': 's' }, '')));
});

t.test('the start-up warning names who administers every token, method by method', async (t) => {
  const auth = loadConfig({ env: {} }).authentication;
  const all = {
    ...auth,
    required: true,
    methods: {
      ...auth.methods,
      token: { ...auth.methods.token, enabled: true },
      oidc: { ...auth.methods.oidc, enabled: true, email_matches: ['^.*@example\\.com$'], providers: {
          google: { issuer_url: 'https://accounts.google.com', client_id: 'c', client_secret: 's', redirect_address: 'https://flags.example.com', scopes: ['email'], use_pkce: true },
        },
      },
      code_host: { ...auth.methods.code_host, enabled: true, allowed_organizations: ['acme'] },
      cluster: { ...auth.methods.cluster, enabled: true, audiences: ['vexil'] },
      jwt: { ...auth.methods.jwt, enabled: true, jwks_url: 'https://idp.example.com/jwks', validate_claims: { audiences: [], issuer: 'https://idp.example.com' } },
    },
  };
  t.same(unscopedPrincipals(all), [
    'every holder of a static token created without a namespace (the bootstrap token among them)',
    'every user who logs in through the OIDC provider "google" whose email matches one of "^.*@example\\\\.com$"',
    'every member of the organization(s) "acme" on https://github.com',
    'every pod of the cluster at https://kubernetes.default.svc.cluster.local holding a service-account token minted for the audience(s) "vexil"',
    'every holder of a JWT signed with a key of https://idp.example.com/jwks with issuer "https://idp.example.com"',
  ]);
});

t.test('an admin organization outside allowed_organizations is pointed out (it can match nobody)', async (t) => {
  const auth = loadConfig({ env: {} }).authentication;
  const config = {
    ...auth,
    required: true,
    admins: { ...ADMINS, code_host: { logins: [], organizations: ['ACME', 'platform'], teams: { elsewhere: ['x'] } } },
    methods: { ...auth.methods, code_host: { ...auth.methods.code_host, enabled: true, allowed_organizations: ['acme'] } },
  };
  const finding = startupFindings(config).find((f) => f.key === 'authentication.admins.code_host');
  t.same(finding, {
    key: 'authentication.admins.code_host',
    message: 'authentication.admins.code_host names organization(s) "platform", "elsewhere" that are not in allowed_organizations: their members cannot log in, so these entries match nobody',
    strict: false,
  });
  t.notOk(startupFindings({ ...config, admins: { ...config.admins, code_host: { logins: [], organizations: ['acme'], teams: {} } } }).some((f) => f.key === 'authentication.admins.code_host'));
});
