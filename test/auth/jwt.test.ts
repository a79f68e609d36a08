/**
 * The JWT method (src/auth/methods/jwt.ts, src/auth/jwt-verify.ts) through the real server:
 * `Authorization: JWT <token>` on the Koa path (/api/v1, /auth/v1/self) and on the node:http
 * evaluation fast path, keys from a loopback JWKS (HTTP and HTTPS with a CA file) or a PEM file.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { makeTestCertificates } from '../support/git-tls.js';
import { startJwtIssuer, type IssuerAlg, type JwtIssuer } from '../support/jwt-issuer.js';
import { UNAUTHENTICATED, bootstrapTokenFrom, createToken, denied, request, startAuthServer, tempDir, type AuthServer } from './support.js';

const EVAL = { namespaceKey: 'default', flagKey: 'color', entityId: 'e1', context: {} };
const ALGS: IssuerAlg[] = ['RS256', 'RS512', 'ES256', 'ES512', 'EdDSA'];

function jwtYaml(keys: string, claims = '', extra = ''): string {
  return `
authentication:
  required: true
  methods:
    token:
      enabled: true
    jwt:
      enabled: true
${keys}
${claims}
${extra}
`;
}

const nowOf = (s: AuthServer) => Math.floor(s.clock.now / 1000);

/** Status of an evaluation (fast path) and of a management read (Koa) with this JWT. */
async function both(s: AuthServer, token: string): Promise<[number, number]> {
  const authorization = `JWT ${token}`;
  const fast = await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, authorization });
  const koa = await request(`${s.url}/api/v1/namespaces/default/flags`, { authorization });
  return [fast.status, koa.status];
}

t.test('JWKS over HTTP: every algorithm, claims mapped, refusals', async (t) => {
  const issuer = await startJwtIssuer(t, { algs: [...ALGS, 'PS256'] });
  const s = await startAuthServer(t, {
    yaml: jwtYaml(`      jwks_url: ${issuer.jwksUri}`, `      validate_claims:\n        issuer: ${issuer.issuer}\n        audiences: [other, vexil]\n        subject: svc-1`),
  });
  t.equal(s.http.fastPath, true);
  const now = nowOf(s);
  const good = { aud: 'vexil', sub: 'svc-1' };

  for (const alg of ALGS) {
    const token = await issuer.sign(good, { alg, now });
    t.same(await both(s, token), [200, 200], `${alg} accepted on both paths`);
  }
  t.same(await both(s, await issuer.sign(good, { alg: 'PS256', now })), [401, 401], 'PS256 is not on the list');

  const self = await request(`${s.url}/auth/v1/self`, {
    authorization: `JWT ${await issuer.sign({ ...good, user: { email: 'a@b.test', sub: 'u1', image: 'https://x/p.png', name: 'Ann', role: 'admin' }, 'io.svc.auth.team': 'core', 'io.flipt.auth.role': 'ro' }, { now })}`,
  });
  t.equal(self.status, 200);
  const body = self.body as Record<string, unknown>;
  t.equal(body.id, '');
  t.equal(body.method, 'METHOD_JWT');
  t.same(body.metadata, {
    'io.svc.auth.jwt.email': 'a@b.test',
    'io.svc.auth.jwt.issuer': issuer.issuer,
    'io.svc.auth.jwt.name': 'Ann',
    'io.svc.auth.jwt.picture': 'https://x/p.png',
    'io.svc.auth.jwt.role': 'admin',
    'io.svc.auth.jwt.sub': 'u1',
    'io.svc.auth.role': 'ro',
    'io.svc.auth.team': 'core',
  });

  const refusals: Array<[string, string]> = [
    ['alg none', issuer.signNone(good, now)],
    ['HS256 keyed with the public key', await issuer.signHmac(good, new TextEncoder().encode(await issuer.publicKeyPem()), now)],
    ['expired', await issuer.sign(good, { now: now - 3600, expiresIn: 60 })],
    ['not yet valid', await issuer.sign(good, { now, notBefore: 600 })],
    ['issued in the future', await issuer.sign(good, { now: now + 600 })],
    ['wrong issuer', await issuer.sign({ ...good, iss: 'https://evil.test' }, { now })],
    ['wrong audience', await issuer.sign({ ...good, aud: 'someone-else' }, { now })],
    ['no audience', await issuer.sign({ sub: 'svc-1' }, { now })],
    ['wrong subject', await issuer.sign({ ...good, sub: 'svc-2' }, { now })],
    ['unknown kid', await (await issuer.unpublishedKey()).sign(good, { now })],
    ['tampered payload', (await issuer.sign(good, { now })).replace(/\.[^.]+\./, `.${Buffer.from(JSON.stringify({ ...good, iss: issuer.issuer, exp: now + 999 })).toString('base64url')}.`)],
    ['garbage', 'not-a-jwt'],
  ];
  for (const [what, token] of refusals) {
    const res = await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, authorization: `JWT ${token}` });
    t.equal(res.status, 401, `${what}: refused on the fast path`);
    t.same(res.body, UNAUTHENTICATED);
    t.equal((await request(`${s.url}/api/v1/namespaces/default/flags`, { authorization: `JWT ${token}` })).status, 401, `${what}: refused on the Koa path`);
  }
  const fine = await issuer.sign(good, { now });
  t.equal((await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, authorization: `Bearer ${fine}` })).status, 401, 'a JWT under Bearer is a client token: unknown');
  t.equal((await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, authorization: `jwt ${fine}` })).status, 401, 'the scheme word is case-sensitive');

  // Leeway (default 1m): a token expired 30 s ago still passes, one expired 2 min ago does not.
  t.same(await both(s, await issuer.sign(good, { now: now - 330 })), [200, 200], 'within the leeway');
  t.same(await both(s, await issuer.sign(good, { now: now - 420 })), [401, 401], 'past the leeway');

  // A token without exp lives 150 s from iat.
  const noExp = await issuer.sign(good, { now, noExp: true });
  t.same(await both(s, noExp), [200, 200], 'no exp: valid for a while');

  const cached = await issuer.sign(good, { now, expiresIn: 120 });
  t.same(await both(s, cached), [200, 200]);
  s.clock.advance(250_000);
  t.same(await both(s, cached), [401, 401], 'a cached token is refused once past its expiry');
  t.same(await both(s, noExp), [401, 401], 'the implied expiry ends too');
});

t.test('JWKS rotation: a fresh key is accepted at once, a dropped key is refused; the set is cached', async (t) => {
  const issuer = await startJwtIssuer(t, { algs: ['ES256'] });
  const s = await startAuthServer(t, { yaml: jwtYaml(`      jwks_url: ${issuer.jwksUri}`) });
  const now = nowOf(s);
  const first = await issuer.sign({}, { now });
  t.same(await both(s, first), [200, 200]);
  for (let i = 0; i < 5; i++) await both(s, await issuer.sign({ n: i }, { now }));
  t.equal(issuer.stats.jwksHits, 1, 'one fetch for many tokens of a known key');

  await issuer.rotate({ dropOld: true });
  const rotated = await issuer.sign({}, { now });
  t.same(await both(s, rotated), [200, 200], 'signed with a key published after the last fetch, right after it');
  t.equal(issuer.stats.jwksHits, 2, 'the unknown kid refetched the set once');
  t.same(await both(s, first), [200, 200], 'a token verified before stays accepted until its exp (cached by token)');
  t.same(await both(s, await (async () => {
    await issuer.rotate({ dropOld: true });
    const k = await issuer.unpublishedKey('ES256');
    return k.sign({}, { now });
  })()), [401, 401], 'a key never published is refused after the refetch');
});

t.test('JWKS over HTTPS trusting a CA file', async (t) => {
  const certs = await makeTestCertificates(t);
  const issuer = await startJwtIssuer(t, { tls: { key: certs.key, cert: certs.cert } });
  const trusted = await startAuthServer(t, { yaml: jwtYaml(`      jwks_url: ${issuer.jwksUri}\n      ca_path: ${certs.caPath}`) });
  t.same(await both(trusted, await issuer.sign({}, { now: nowOf(trusted) })), [200, 200], 'the CA file is trusted');
  const untrusted = await startAuthServer(t, { yaml: jwtYaml(`      jwks_url: ${issuer.jwksUri}`) });
  t.same(await both(untrusted, await issuer.sign({}, { now: nowOf(untrusted) })), [503, 503], 'without the CA file the key set cannot be fetched: 503, not a verdict');
});

t.test('PEM public key file', async (t) => {
  for (const alg of ['RS256', 'ES512', 'EdDSA'] as const) {
    const issuer = await startJwtIssuer(t, { algs: [alg] });
    const dir = tempDir(t);
    const pem = join(dir, 'key.pem');
    writeFileSync(pem, await issuer.publicKeyPem());
    const s = await startAuthServer(t, { yaml: jwtYaml(`      public_key_file: ${pem}`, `      validate_claims:\n        audiences: [vexil]`) });
    const now = nowOf(s);
    t.same(await both(s, await issuer.sign({ aud: 'vexil' }, { now })), [200, 200], `${alg} PEM`);
    t.same(await both(s, await issuer.sign({ aud: 'x' }, { now })), [401, 401], `${alg} PEM, wrong audience`);
    t.same(await both(s, await issuer.signHmac({ aud: 'vexil' }, new TextEncoder().encode(await issuer.publicKeyPem()), now)), [401, 401], `${alg} PEM, HS256 with the key as secret`);
    t.same(await both(s, await (await issuer.unpublishedKey()).sign({ aud: 'vexil' }, { now })), [401, 401], `${alg} PEM, another key`);
  }
});

t.test('an unreadable or unusable key file stops the start, naming the key', async (t) => {
  const dir = tempDir(t);
  await t.rejects(
    startAuthServer(t, { yaml: jwtYaml(`      public_key_file: ${join(dir, 'missing.pem')}`) }),
    /authentication\.methods\.jwt\.public_key_file: cannot read ".*missing\.pem": ENOENT/,
  );
  const issuer = await startJwtIssuer(t);
  const privateish = join(dir, 'private.pem');
  writeFileSync(privateish, `-----BEGIN PRIVATE KEY-----\n${(await issuer.publicKeyPem()).split('\n').slice(1, -2).join('\n')}\n-----END PRIVATE KEY-----\n`);
  await t.rejects(startAuthServer(t, { yaml: jwtYaml(`      public_key_file: ${privateish}`) }), /is not a usable PEM public key: the file holds a private key/);
  const garbage = join(dir, 'garbage.pem');
  writeFileSync(garbage, 'not a key');
  await t.rejects(startAuthServer(t, { yaml: jwtYaml(`      public_key_file: ${garbage}`) }), /jwt\.public_key_file: ".*garbage\.pem" is not a usable PEM public key/);
});

t.test('namespace rules unchanged; bearer tokens work beside JWT; nothing secret in logs', async (t) => {
  const issuer = await startJwtIssuer(t);
  const s = await startAuthServer(t, { yaml: jwtYaml(`      jwks_url: ${issuer.jwksUri}`) });
  const bootstrap = bootstrapTokenFrom(s.logs)!;
  const scoped = await createToken(s.url, bootstrap, { name: 'prod', namespaceKey: 'production' });
  const out = await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, token: scoped.clientToken });
  t.equal(out.status, 403);
  t.same(out.body, denied('production'));
  t.equal((await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, token: bootstrap })).status, 200);
  const jwt = await issuer.sign({}, { now: nowOf(s) });
  t.same(await both(s, jwt), [200, 200]);
  const expired = await issuer.sign({}, { now: nowOf(s) - 3600 });
  t.same(await both(s, expired), [401, 401]);
  const text = s.logs.text();
  for (const secret of [jwt, expired, jwt.split('.')[2]!, expired.split('.')[2]!]) t.notOk(text.includes(secret), 'no token or signature in the log');
  t.match(text, /JWT refused/, 'the refusal reason is logged');
});

t.test('required: false ignores JWTs (except /auth/v1/self)', async (t) => {
  const issuer = await startJwtIssuer(t);
  const s = await startAuthServer(t, { yaml: jwtYaml(`      jwks_url: ${issuer.jwksUri}`).replace('required: true', 'required: false') });
  t.equal((await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, authorization: 'JWT garbage' })).status, 200);
  const self = await request(`${s.url}/auth/v1/self`, { authorization: `JWT ${await issuer.sign({}, { now: nowOf(s) })}` });
  t.equal(self.status, 200);
});

export type { JwtIssuer };

t.test('tokens with made-up kids cost at most one JWKS fetch per second, and a fresh key still gets in', async (t) => {
  const issuer = await startJwtIssuer(t, { algs: ['ES256'] });
  const s = await startAuthServer(t, { yaml: jwtYaml(`      jwks_url: ${issuer.jwksUri}`) });
  const now = nowOf(s);
  t.same(await both(s, await issuer.sign({}, { now })), [200, 200]);
  const before = issuer.stats.jwksHits;
  const stranger = await issuer.unpublishedKey('ES256');
  const started = performance.now();
  // 300 requests, 30 at a time, each with its own kid that no key set will ever publish.
  for (let round = 0; round < 10; round++) {
    const statuses = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const token = await stranger.sign({}, { now, kid: `made-up-${round}-${i}` });
        return (await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, authorization: `JWT ${token}` })).status;
      }),
    );
    t.ok(statuses.every((x) => x === 401), `round ${round}: all refused`);
  }
  const seconds = (performance.now() - started) / 1000;
  const fetches = issuer.stats.jwksHits - before;
  // A count per elapsed second (not a timing assertion): at most one fetch per started second.
  t.ok(fetches <= Math.ceil(seconds) + 1, `${fetches} JWKS fetches for 300 made-up kids over ${seconds.toFixed(1)} s`);
  await issuer.rotate();
  t.same(await both(s, await issuer.sign({}, { now })), [200, 200], 'a key published during the flood is accepted');
});

t.test('a JWKS outage answers 503 with Retry-After for keys not fetched yet, warns once per outage; a forged token stays 401', async (t) => {
  const issuer = await startJwtIssuer(t, { algs: ['ES256'] });
  const s = await startAuthServer(t, { yaml: jwtYaml(`      jwks_url: ${issuer.jwksUri}`) });
  const now = nowOf(s);
  const known = await issuer.sign({}, { now });
  t.same(await both(s, known), [200, 200], 'the set is fetched');
  const warnings = () => s.logs.entries().filter((e) => e.level === 'warn' && e.msg === 'JWT key set unavailable: tokens signed with keys not fetched yet are answered 503').length;
  const recoveries = () => s.logs.entries().filter((e) => e.level === 'info' && e.msg === 'JWT key set reachable again').length;

  issuer.jwksDown = true;
  await issuer.rotate();
  const fresh = await issuer.sign({ n: 1 }, { now });
  for (let i = 0; i < 3; i++) {
    const res = await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, authorization: `JWT ${fresh}` });
    t.equal(res.status, 503, `fast path, attempt ${i + 1}: the key set is down, the token was not judged`);
    t.same(res.body, { code: 14, message: 'JWT key set unavailable', details: [] });
    t.equal(res.headers.get('retry-after'), '5');
    const koa = await request(`${s.url}/api/v1/namespaces/default/flags`, { authorization: `JWT ${fresh}` });
    t.equal(koa.status, 503, `Koa path, attempt ${i + 1}`);
    t.equal(koa.headers.get('retry-after'), '5');
  }
  t.equal(warnings(), 1, 'one warning for the outage, however many requests meet it');
  t.same(await both(s, known), [200, 200], 'a token verified before the outage still passes');
  t.notOk(s.logs.text().includes(fresh.split('.')[2]!), 'no signature in the log');

  issuer.jwksDown = false;
  t.same(await both(s, fresh), [200, 200], 'the set is back: the fresh key is fetched and accepted');
  t.equal(recoveries(), 1, 'the recovery is logged once');
  const forged = await (await issuer.unpublishedKey('ES256')).sign({}, { now });
  t.same(await both(s, forged), [401, 401], 'a key the set does not hold: 401, as before');

  issuer.jwksDown = true;
  await issuer.rotate();
  t.same(await both(s, await issuer.sign({ n: 3 }, { now })), [503, 503], 'a second outage');
  t.equal(warnings(), 2, 'warned again, once');
});

t.test('between exp and exp + leeway a token is answered from the verified-token cache: one signature verification', async (t) => {
  const issuer = await startJwtIssuer(t);
  const s = await startAuthServer(t, { yaml: jwtYaml(`      jwks_url: ${issuer.jwksUri}\n      leeway: 2s`) });
  const verifications = () => s.logs.entries().filter((e) => e.msg === 'JWT verified').length;
  const token = await issuer.sign({}, { now: nowOf(s), expiresIn: 1 });
  s.clock.advance(1500); // past exp, within the leeway
  for (let i = 0; i < 5; i++) t.same(await both(s, token), [200, 200], `request ${i + 1} within the leeway`);
  t.equal(verifications(), 1, 'ten requests past exp, one verification');
  s.clock.advance(1500); // past exp + leeway
  t.same(await both(s, token), [401, 401], 'refused once the leeway has run out');
  t.equal(verifications(), 1, 'the refusal needed no signature check');
});
