/**
 * The cluster service-account exchange (src/auth/methods/cluster.ts) through the real server,
 * against a loopback OIDC discovery + JWKS over HTTPS trusting a CA file (as a cluster's API
 * server publishes them), with records in SQLite and in a throwaway PostgreSQL.
 */
import { writeFileSync } from 'node:fs';
import { createTrustedFetch } from '../../src/auth/trusted-fetch.js';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { makeTestCertificates, type TestCertificates } from '../support/git-tls.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { reportMissing } from '../support/requirements.js';
import { postgresUnavailableReason, startPostgres } from '../support/throwaway-db.js';
import { UNAUTHENTICATED, request, startAuthServer, tempDir, type AuthServer } from './support.js';

const CLUSTER_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const EVAL = { namespaceKey: 'default', flagKey: 'color', entityId: 'e1', context: {} };
const METADATA_KEYS = [
  'io.svc.auth.cluster.namespace',
  'io.svc.auth.cluster.pod.name',
  'io.svc.auth.cluster.pod.uid',
  'io.svc.auth.cluster.serviceaccount.name',
  'io.svc.auth.cluster.serviceaccount.uid',
];

interface Setup {
  issuer: JwtIssuer;
  server: AuthServer;
  /** The pod's own token file (what the server sends to discovery). */
  ownTokenPath: string;
}

async function setup(
  t: Test,
  certs: TestCertificates,
  opts: { requireBearer?: string; storage?: string; audiences?: string[] } = {},
): Promise<Setup> {
  const issuer = await startJwtIssuer(t, {
    tls: { key: certs.key, cert: certs.cert },
    issuer: CLUSTER_ISSUER,
    ...(opts.requireBearer !== undefined ? { requireBearer: opts.requireBearer } : {}),
  });
  const dir = tempDir(t);
  const ownTokenPath = join(dir, 'own-token');
  writeFileSync(ownTokenPath, `${opts.requireBearer ?? 'irrelevant'}\n`);
  const server = await startAuthServer(t, {
    dir,
    yaml: `
authentication:
  required: true
${opts.storage ?? ''}
  methods:
    cluster:
      enabled: true
      discovery_url: ${issuer.url}/
      ca_path: ${certs.caPath}
      service_account_token_path: ${ownTokenPath}
${opts.audiences ? `      audiences: [${opts.audiences.join(', ')}]` : ''}
`,
  });
  return { issuer, server, ownTokenPath };
}

const nowOf = (s: AuthServer) => Math.floor(s.clock.now / 1000);
type Exchange = { status: number; body: Record<string, unknown>; text: string };

async function exchange(s: AuthServer, token: string, path = 'cluster', field = 'service_account_token'): Promise<Exchange> {
  const res = await request(`${s.url}/auth/v1/method/${path}/serviceaccount`, { body: { [field]: token } });
  return { status: res.status, body: res.body as Record<string, unknown>, text: res.text };
}

/** The cases every store must pass. */
async function exchangeCases(t: Test, certs: TestCertificates, storage?: string) {
  const { issuer, server: s } = await setup(t, certs, { audiences: ['vexil'], ...(storage !== undefined ? { storage } : {}) });
  const now = nowOf(s);

  const token = await issuer.signServiceAccount({ now, namespace: 'payments', name: 'api', pod: 'api-7f9', audience: 'vexil', expiresIn: 3600 });
  const ok = await exchange(s, token);
  t.equal(ok.status, 200, ok.text);
  const clientToken = ok.body.clientToken as string;
  t.type(clientToken, 'string');
  const auth = ok.body.authentication as Record<string, unknown>;
  t.equal(auth.method, 'METHOD_CLUSTER');
  t.equal(auth.expiresAt, new Date((now + 3600) * 1000).toISOString(), 'expires when the service-account token does');
  const metadata = auth.metadata as Record<string, string>;
  t.same(Object.keys(metadata).sort(), METADATA_KEYS, 'exactly the five metadata keys');
  t.equal(metadata['io.svc.auth.cluster.namespace'], 'payments');
  t.equal(metadata['io.svc.auth.cluster.pod.name'], 'api-7f9');
  t.equal(metadata['io.svc.auth.cluster.serviceaccount.name'], 'api');
  t.match(metadata['io.svc.auth.cluster.pod.uid'], /^[0-9a-f-]{36}$/);

  // The client token works on protected routes (Koa and the evaluation fast path) and identifies the caller.
  t.equal((await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, token: clientToken })).status, 200);
  const self = await request(`${s.url}/auth/v1/self`, { token: clientToken });
  t.equal(self.status, 200);
  t.equal((self.body as Record<string, unknown>).id, auth.id);
  const listed = await request(`${s.url}/auth/v1/tokens?method=METHOD_CLUSTER`, { token: clientToken });
  t.same(((listed.body as { authentications: Array<{ id: string }> }).authentications).map((a) => a.id), [auth.id], 'stored in the store');

  // Flipt's path and camelCase field (Flipt's Go SDK).
  const alias = await exchange(s, await issuer.signServiceAccount({ now, audience: 'vexil' }), 'kubernetes', 'serviceAccountToken');
  t.equal(alias.status, 200, 'the /kubernetes/ alias with serviceAccountToken');
  t.equal(((alias.body.authentication as Record<string, unknown>).metadata as Record<string, string>)['io.svc.auth.cluster.namespace'], 'default');

  const refusals: Array<[string, string, RegExp]> = [
    ['expired', await issuer.signServiceAccount({ now: now - 7200, audience: 'vexil', expiresIn: 3600 }), /token expired/],
    ['wrong audience', await issuer.signServiceAccount({ now, audience: 'vault' }), /aud/],
    ['wrong issuer', await issuer.sign({ iss: issuer.url, aud: 'vexil' }, { now }), /issuer mismatch/],
    ['unknown kid', await (await issuer.unpublishedKey()).sign({ aud: 'vexil' }, { now }), /no key/],
    ['alg none', issuer.signNone({ aud: 'vexil' }, now), /./],
    ['garbage', 'x.y.z', /malformed/],
  ];
  for (const [what, bad, reason] of refusals) {
    const res = await exchange(s, bad);
    t.equal(res.status, 401, `${what}: 401`);
    t.equal(res.body.code, 16);
    t.match(res.body.message as string, /^verifying service account: /);
    t.match(res.body.message as string, reason, `${what}: the reason is given`);
  }
  t.equal((await exchange(s, 'a'.repeat(1_000_000))).status, 401, 'a one-megabyte token (under the body limit) is refused by length');
  const missing = await request(`${s.url}/auth/v1/method/cluster/serviceaccount`, { body: {} });
  t.equal(missing.status, 400);
  t.equal((missing.body as Record<string, unknown>).code, 3);

  // Rotation: a key published after the set was fetched is used at once.
  await issuer.rotate({ dropOld: true });
  const hits = issuer.stats.jwksHits;
  const rotated = await exchange(s, await issuer.signServiceAccount({ now, audience: 'vexil' }));
  t.equal(rotated.status, 200, 'token signed with the rotated key');
  t.equal(issuer.stats.jwksHits, hits + 1, 'one refetch');

  // Keys unobtainable (JWKS answering 500) for a new kid: 503, not a verdict on the token.
  await issuer.rotate({ dropOld: true });
  issuer.jwksDown = true;
  const keysDown = await exchange(s, await issuer.signServiceAccount({ now, audience: 'vexil' }));
  t.equal(keysDown.status, 503, 'key set unavailable: 503');
  t.match(keysDown.body.message as string, /^verifying service account: key set unavailable/);
  issuer.jwksDown = false;
  t.equal((await exchange(s, await issuer.signServiceAccount({ now, audience: 'vexil' }))).status, 200, 'and recovered');

  // The record expires with the token.
  s.clock.advance(3601_000);
  t.same((await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, token: clientToken })).body, UNAUTHENTICATED, 'expired with the service-account token');

  const text = s.logs.text();
  t.notOk(text.includes(clientToken), 'client token not logged');
  t.notOk(text.includes(token.split('.')[2]!), 'service-account token not logged');
}

t.test('cluster exchange (SQLite)', async (t) => {
  const certs = await makeTestCertificates(t);
  await exchangeCases(t, certs);
});

t.test('discovery needing the pod token as bearer; untrusted CA; discovery down then up', async (t) => {
  const certs = await makeTestCertificates(t);
  const { issuer, server: s, ownTokenPath } = await setup(t, certs, { requireBearer: 'pod-own-token' });
  const now = nowOf(s);
  const ok = await exchange(s, await issuer.signServiceAccount({ now }));
  t.equal(ok.status, 200, 'the pod token from service_account_token_path reaches discovery and JWKS');
  t.equal(issuer.stats.refused, 0);
  t.notOk(s.logs.text().includes('pod-own-token'), 'the pod token is not logged');

  // A second server whose token file holds a stale token: discovery refused, 503, then fixed on disk.
  const other = await startAuthServer(t, {
    yaml: `
authentication:
  required: true
  methods:
    cluster:
      enabled: true
      discovery_url: ${issuer.url}
      ca_path: ${certs.caPath}
      service_account_token_path: ${ownTokenPath}.stale
`,
  });
  writeFileSync(`${ownTokenPath}.stale`, 'old-token');
  const down = await exchange(other, await issuer.signServiceAccount({ now: nowOf(other) }));
  t.equal(down.status, 503, 'discovery refused: unavailable');
  t.match(down.body.message as string, /cluster discovery failed: discovery answered HTTP 401/);
  writeFileSync(`${ownTokenPath}.stale`, 'pod-own-token');
  t.equal((await exchange(other, await issuer.signServiceAccount({ now: nowOf(other) }))).status, 200, 'the token file is re-read; discovery retried');

  // A CA file that does not sign the issuer's certificate.
  const otherCerts = await makeTestCertificates(t);
  const untrusted = await startAuthServer(t, {
    yaml: `
authentication:
  required: true
  methods:
    cluster:
      enabled: true
      discovery_url: ${issuer.url}
      ca_path: ${otherCerts.caPath}
      service_account_token_path: ${ownTokenPath}
`,
  });
  const refused = await exchange(untrusted, await issuer.signServiceAccount({ now: nowOf(untrusted) }));
  t.equal(refused.status, 503, 'TLS not trusted');
});

t.test('plain http for discovery_url or the discovered jwks_uri is refused, except to loopback addresses', async (t) => {
  const clusterYaml = (discoveryUrl: string, tokenPath = '/nonexistent/token') => `
authentication:
  required: true
  methods:
    cluster:
      enabled: true
      discovery_url: ${discoveryUrl}
      ca_path: ${certs.caPath}
      service_account_token_path: ${tokenPath}
`;
  const certs = await makeTestCertificates(t);
  for (const url of ['http://kubernetes.default.svc.cluster.local', 'http://10.0.0.1:6443', 'http://[fd00::1]/']) {
    await t.rejects(
      startAuthServer(t, { yaml: clusterYaml(url) }),
      /authentication\.methods\.cluster\.discovery_url: plain http would send the service-account token in clear: use https/,
      `${url}: refused at start`,
    );
  }

  // Loopback over http is allowed (tests, a local proxy); the discovery document then names a
  // key set on another host over plain http: refused before any request goes there.
  const dir = tempDir(t);
  const tokenPath = join(dir, 'own-token');
  writeFileSync(tokenPath, 'pod-own-token\n');
  const plain = await startJwtIssuer(t, { issuer: CLUSTER_ISSUER, publishedJwksUri: 'http://jwks.cluster.test/openid/v1/jwks' });
  const s = await startAuthServer(t, { yaml: clusterYaml(plain.url, tokenPath) });
  const refused = await exchange(s, await plain.signServiceAccount({ now: nowOf(s) }));
  t.equal(refused.status, 503);
  t.match(refused.body.message as string, /cluster discovery failed: the discovery document's jwks_uri "http:\/\/jwks\.cluster\.test\/openid\/v1\/jwks" is refused: plain http/);
  t.equal(plain.stats.discoveryHits, 1, 'discovery over loopback http was asked');
  t.equal(plain.stats.jwksHits, 0);

  // The fetch itself never sends the token over plain http beyond loopback, whatever asks it to.
  const fetchKeys = createTrustedFetch({ bearerTokenPath: tokenPath });
  await t.rejects(fetchKeys('http://jwks.cluster.test/openid/v1/jwks'), /refusing to send the bearer token over plain http to jwks\.cluster\.test/);
  t.equal((await fetchKeys(`${plain.url}/openid/v1/jwks`)).status, 200, 'loopback over http still works');
});

t.test('a CA file that cannot be read stops the start', async (t) => {
  await t.rejects(
    startAuthServer(t, {
      yaml: `
authentication:
  required: true
  methods:
    cluster:
      enabled: true
      ca_path: /nonexistent/ca.crt
`,
    }),
    /cannot prepare the authentication methods: authentication\.methods\.cluster\.ca_path: cannot read the CA file "\/nonexistent\/ca.crt"/,
  );
});

t.test('cluster exchange (PostgreSQL)', async (t) => {
  const unavailable = postgresUnavailableReason();
  if (unavailable !== undefined) return reportMissing(t, 'PostgreSQL', unavailable);
  const pg = await startPostgres();
  t.teardown(() => pg.close());
  const certs = await makeTestCertificates(t);
  await exchangeCases(t, certs, `  storage:\n    type: postgres\n    postgres:\n      url: ${pg.url}`);
});

t.test('a cluster token never outlives its service-account token; cluster without audiences is warned about (refused when strict)', async (t) => {
  const certs = await makeTestCertificates(t);
  const { issuer, server: s } = await setup(t, certs, { audiences: ['vexil'] });
  t.notOk(s.logs.entries().some((e) => e.key === 'authentication.methods.cluster.audiences'), 'audiences set: no warning');
  const token = await issuer.signServiceAccount({ now: nowOf(s), namespace: 'payments', name: 'api', pod: 'p', audience: 'vexil', expiresIn: 600 });
  const ok = await exchange(s, token);
  t.equal(ok.status, 200, ok.text);
  const clientToken = ok.body.clientToken as string;
  const saExpiry = new Date((nowOf(s) + 600) * 1000).toISOString();
  t.equal((ok.body.authentication as Record<string, unknown>).expiresAt, saExpiry);

  const later = await request(`${s.url}/auth/v1/self/expire?expiresAt=2099-01-01T00:00:00Z`, { token: clientToken, method: 'PUT' });
  t.equal(later.status, 403);
  t.same(later.body, {
    code: 7,
    message: `permission denied: a credential's expiry can only be brought forward (it expires at ${saExpiry}; asked: 2099-01-01T00:00:00.000Z)`,
    details: [],
  });
  t.equal((await request(`${s.url}/auth/v1/self`, { token: clientToken })).body.expiresAt, saExpiry, 'still the service-account token expiry');
  s.clock.advance(601_000);
  t.same(await request(`${s.url}/auth/v1/self`, { token: clientToken }).then((r) => r.body), UNAUTHENTICATED, 'refused once it has passed');

  // Without audiences: a warning at start; with authentication.strict the start is refused.
  const open = await setup(t, certs);
  t.match(
    open.server.logs.entries().find((e) => e.key === 'authentication.methods.cluster.audiences'),
    { level: 'warn', msg: /^authentication\.methods\.cluster has no audiences: a service-account token minted for any other service \(aud=vault, \.\.\.\) is accepted/ },
  );
  await t.rejects(
    startAuthServer(t, {
      yaml: `authentication:\n  required: true\n  strict: true\n  methods:\n    cluster:\n      enabled: true\n      ca_path: ${certs.caPath}\n`,
    }),
    /authentication\.strict is true and: authentication\.methods\.cluster\.audiences: authentication\.methods\.cluster has no audiences/,
  );
});
