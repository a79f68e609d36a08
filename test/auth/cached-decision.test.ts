/**
 * The authentication decision made at once (src/auth/middleware.ts AuthDecision): a token in the
 * lookup cache is decided without a promise, so the evaluation fast path answers it in the same
 * turn as an open request. What must not change with it: expiry, deletion, the constant-time
 * digest check, namespace scoping (also when the gate is asked about other paths in between: it
 * remembers the last path's classification), and the store read for a token not yet cached.
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import { createAuthGate, type AuthDecision, type AuthRequest } from '../../src/auth/middleware.js';
import { AuthService } from '../../src/auth/service.js';
import { openSqliteAuthStore } from '../../src/auth/store/sqlite.js';
import { digestToken, generateToken, tokenKey } from '../../src/auth/token.js';
import { bootstrapTokenFrom, createToken, denied, fakeClock, request, REQUIRED, startAuthServer, UNAUTHENTICATED } from './support.js';

const EVAL = { namespaceKey: 'default', flagKey: 'color', entityId: 'e1', context: {} };

/** A request as the gate reads it; `body` is the JSON the route would read. */
function authRequest(method: string, path: string, token: string | undefined, body: unknown = {}): AuthRequest {
  return {
    method,
    path,
    authorization: token !== undefined ? `Bearer ${token}` : undefined,
    headers: {},
    cookie: () => undefined,
    body: () => Promise.resolve(body),
    setCookies: () => undefined,
    log: () => undefined,
  };
}

const isPromise = (d: AuthDecision): boolean => d instanceof Promise;

t.test('the lookup key is the SHA-256 of the UTF-8 token, as stored', async (t) => {
  for (const token of ['abc', 'jeton-é-令牌-🔑', generateToken()]) {
    t.equal(tokenKey(token), createHash('sha256').update(token, 'utf8').digest('base64url'), token);
    t.same(digestToken(token), createHash('sha256').update(token, 'utf8').digest());
  }
});

t.test('the gate: a cached token is decided at once; the first lookup, scoped tokens and refusals as before', async (t) => {
  const clock = fakeClock();
  const service = new AuthService({ store: openSqliteAuthStore({ path: ':memory:' }), clock: clock.clock, cacheTtlMs: 5_000 });
  t.teardown(() => service.close());
  const gate = createAuthGate({ service, required: true, exclude: { management: false, evaluation: false } });
  const plain = await service.create({ method: 'METHOD_TOKEN', metadata: {} });
  const variant = authRequest('POST', '/evaluate/v1/variant', plain.clientToken, EVAL);

  const first = gate(variant);
  t.ok(isPromise(first), 'not cached yet: the store is read');
  t.equal((await first)?.id, plain.authentication.id);
  const second = gate(variant);
  t.notOk(isPromise(second), 'cached: decided without a promise');
  t.equal((second as { id: string }).id, plain.authentication.id);

  // A token of the same length that differs: its digest is not in the cache, the store is asked.
  const other = `${plain.clientToken.slice(0, -1)}${plain.clientToken.endsWith('A') ? 'B' : 'A'}`;
  await t.rejects(Promise.resolve().then(() => gate(authRequest('POST', '/evaluate/v1/variant', other))), UNAUTHENTICATED, 'another token is refused');
  t.throws(() => gate(authRequest('POST', '/evaluate/v1/variant', undefined)), UNAUTHENTICATED, 'no credentials: refused at once');

  // Expiring within the cache's 5 s, so the refusal below comes from the cached record.
  const brief = await service.create({ method: 'METHOD_TOKEN', metadata: {}, expiresAt: clock.now + 2_000 });
  const withExpiry = authRequest('POST', '/evaluate/v1/variant', brief.clientToken);
  await gate(withExpiry);
  t.notOk(isPromise(gate(withExpiry)), 'the expiring token is cached');
  clock.advance(2_001);
  t.throws(() => gate(withExpiry), UNAUTHENTICATED, 'past its expiry the cached token is refused at once');

  await service.delete(plain.authentication.id);
  const afterDelete = gate(variant);
  t.ok(isPromise(afterDelete), 'a deleted token is no longer cached');
  await t.rejects(Promise.resolve(afterDelete), UNAUTHENTICATED, 'and is refused');

  // Namespace scoping, with the gate asked about different paths in turn.
  const scoped = await service.create({ method: 'METHOD_TOKEN', metadata: { 'io.svc.auth.token.namespace': 'production' } });
  const inProd = authRequest('POST', '/evaluate/v1/namespaces/production/variant', scoped.clientToken, { flagKey: 'color', entityId: 'e1' });
  const inDefault = authRequest('POST', '/evaluate/v1/namespaces/default/variant', scoped.clientToken, { flagKey: 'color', entityId: 'e1' });
  const bodyProd = authRequest('POST', '/evaluate/v1/variant', scoped.clientToken, { ...EVAL, namespaceKey: 'production' });
  const bodyDefault = authRequest('POST', '/evaluate/v1/variant', scoped.clientToken, EVAL);
  const snapshotProd = authRequest('GET', '/internal/v1/evaluation/snapshot/namespace/production', scoped.clientToken);
  const listing = authRequest('GET', '/api/v1/namespaces', scoped.clientToken);
  for (let round = 0; round < 2; round++) {
    t.equal((await gate(inProd))?.id, scoped.authentication.id, `round ${round}: its namespace in the path`);
    await t.rejects(Promise.resolve(gate(inDefault)), denied('production'), `round ${round}: another namespace in the path`);
    t.equal((await gate(bodyProd))?.id, scoped.authentication.id, `round ${round}: its namespace in the body`);
    await t.rejects(Promise.resolve(gate(bodyDefault)), denied('production'), `round ${round}: another namespace in the body`);
    t.equal((await gate(snapshotProd))?.id, scoped.authentication.id, `round ${round}: its snapshot`);
    await t.rejects(Promise.resolve(gate(listing)), denied('production'), `round ${round}: a listing across namespaces`);
  }
});

t.test('the fast path with a cached token: expiry, deletion and scoping through the real server', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  t.equal(s.http.fastPath, true);
  const boot = bootstrapTokenFrom(s.logs)!;
  const url = `${s.url}/evaluate/v1/variant`;

  // Expiring within the lookup cache's 5 s: the refusal comes from the cached record.
  const brief = await createToken(s.url, boot, { name: 'brief', expiresAt: new Date(s.clock.now + 2_000).toISOString() });
  for (let i = 0; i < 3; i++) t.equal((await request(url, { body: EVAL, token: brief.clientToken })).status, 200, `valid (${i})`);
  s.clock.advance(2_001);
  const expired = await request(url, { body: EVAL, token: brief.clientToken });
  t.equal(expired.status, 401, 'expired: refused although its lookup is cached');
  t.same(expired.body, UNAUTHENTICATED);

  const doomed = await createToken(s.url, boot, { name: 'doomed' });
  t.equal((await request(url, { body: EVAL, token: doomed.clientToken })).status, 200, 'before the delete (now cached)');
  const del = await request(`${s.url}/auth/v1/tokens/${String(doomed.authentication.id)}`, { method: 'DELETE', token: boot });
  t.equal(del.status, 200, 'deleted');
  t.equal((await request(url, { body: EVAL, token: doomed.clientToken })).status, 401, 'refused at once after the delete');

  const scoped = await createToken(s.url, boot, { name: 'prod', namespaceKey: 'production' });
  const prodPath = `${s.url}/evaluate/v1/namespaces/production/variant`;
  const defaultPath = `${s.url}/evaluate/v1/namespaces/default/variant`;
  const item = { flagKey: 'color', entityId: 'e1' };
  for (let round = 0; round < 2; round++) {
    t.equal((await request(prodPath, { body: item, token: scoped.clientToken })).status, 200, `round ${round}: its namespace`);
    const out = await request(defaultPath, { body: item, token: scoped.clientToken });
    t.equal(out.status, 403, `round ${round}: another namespace`);
    t.same(out.body, denied('production'));
    t.equal((await request(url, { body: EVAL, token: boot })).status, 200, `round ${round}: an unscoped token in between`);
  }
});
