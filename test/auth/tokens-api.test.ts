/**
 * The token method and the token records (interface §4.3, reference §2.2–§2.3): request fields,
 * response shapes, listing with paging and the method filter, get, delete, self, self/expire.
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import { bootstrapTokenFrom, createToken, request, REQUIRED, startAuthServer, T0, UNAUTHENTICATED } from './support.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('POST /auth/v1/method/token: shape, reserved metadata keys, expiry and namespace', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const boot = bootstrapTokenFrom(s.logs)!;

  const res = await request(`${s.url}/auth/v1/method/token`, {
    token: boot,
    body: {
      name: 'ci',
      description: 'for the pipeline',
      expiresAt: '2030-06-01T12:00:00Z',
      namespaceKey: 'production',
      metadata: { team: 'web', 'io.svc.auth.token.name': 'overwritten' },
    },
  });
  t.equal(res.status, 200);
  t.same(Object.keys(res.body).sort(), ['authentication', 'clientToken']);
  t.match(res.body.clientToken, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
  t.equal(Buffer.from(res.body.clientToken, 'base64url').length, 32);
  const a = res.body.authentication;
  t.same(Object.keys(a), ['id', 'method', 'expiresAt', 'createdAt', 'updatedAt', 'metadata'], 'field order of the record');
  t.match(a, { id: UUID, method: 'METHOD_TOKEN', expiresAt: '2030-06-01T12:00:00.000Z', createdAt: ISO, updatedAt: ISO });
  t.equal(a.createdAt, new Date(T0).toISOString(), 'timestamps come from the (injected) clock');
  t.same(a.metadata, {
    'io.svc.auth.token.description': 'for the pipeline',
    'io.svc.auth.token.name': 'ci',
    'io.svc.auth.token.namespace': 'production',
    team: 'web',
  });

  // snake_case names, offsets, no expiry, no description: no such keys.
  const plain = await request(`${s.url}/auth/v1/method/token`, { token: boot, body: { name: 'plain', expires_at: '2030-06-01T14:00:00+02:00' } });
  t.equal(plain.body.authentication.expiresAt, '2030-06-01T12:00:00.000Z');
  const forever = await request(`${s.url}/auth/v1/method/token`, { token: boot, body: {} });
  t.equal(forever.status, 200);
  t.notOk('expiresAt' in forever.body.authentication, 'no expiresAt key when it never expires');
  t.same(forever.body.authentication.metadata, { 'io.svc.auth.token.name': '' }, 'name is always set, even empty');

  const second = await request(`${s.url}/auth/v1/method/token`, { token: boot, body: { name: 'x' } });
  t.not(second.body.clientToken, forever.body.clientToken, 'tokens are random');
  t.not(second.body.authentication.id, forever.body.authentication.id);

  // An empty body reads as {} (grpc-gateway).
  const empty = await request(`${s.url}/auth/v1/method/token`, { token: boot, method: 'POST', body: '' });
  t.equal(empty.status, 200);
});

t.test('POST /auth/v1/method/token: invalid input is 400 with the field named', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const boot = bootstrapTokenFrom(s.logs)!;
  const cases: Array<[unknown, RegExp]> = [
    [{ name: 5 }, /^invalid field name: must be a string$/],
    [{ description: true }, /^invalid field description: must be a string$/],
    [{ expiresAt: 'tomorrow' }, /^invalid field expiresAt: must be an RFC 3339 timestamp/],
    [{ expiresAt: '2030-13-01T00:00:00Z' }, /^invalid field expiresAt/],
    [{ expiresAt: 1234 }, /^invalid field expiresAt/],
    [{ namespaceKey: ['a'] }, /^invalid field namespaceKey: must be a string$/],
    [{ metadata: 'x' }, /^invalid field metadata: must be an object/],
    [{ metadata: { a: 1 } }, /^invalid field metadata.a: must be a string$/],
    ['[1]', /^request body must be a JSON object$/],
    ['{', /^malformed JSON body/],
  ];
  for (const [body, message] of cases) {
    const res = await request(`${s.url}/auth/v1/method/token`, { token: boot, body });
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.body.code, 3);
    t.match(res.body.message, message);
  }
});

t.test('the token method disabled: no creation endpoint (404), the rest of /auth/v1 still answers', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  required: false\n' });
  const res = await request(`${s.url}/auth/v1/method/token`, { body: { name: 'x' } });
  t.equal(res.status, 404);
  t.same(res.body, { code: 5, message: 'Not Found', details: [] });
  const list = await request(`${s.url}/auth/v1/tokens`);
  t.same(list.body, { authentications: [], nextPageToken: '' });
  t.notOk(s.logs.entries().some((e) => e.msg === 'access token created'), 'no bootstrap');
});

t.test('GET /auth/v1/tokens: oldest first, limit (25 default, 100 max), pageToken, method filter', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const boot = bootstrapTokenFrom(s.logs)!;
  const ids: string[] = [];
  const bootList = await request(`${s.url}/auth/v1/tokens`, { token: boot });
  ids.push(bootList.body.authentications[0].id);
  for (let i = 0; i < 110; i++) {
    s.clock.advance(1000);
    ids.push(String((await createToken(s.url, boot, { name: `t${i}` })).authentication.id));
  }

  const first = await request(`${s.url}/auth/v1/tokens`, { token: boot });
  t.equal(first.status, 200);
  t.same(Object.keys(first.body), ['authentications', 'nextPageToken']);
  t.equal(first.body.authentications.length, 25, 'default page size');
  t.equal(first.body.nextPageToken, '25');
  t.same(first.body.authentications.map((a: { id: string }) => a.id), ids.slice(0, 25), 'oldest first');

  const second = await request(`${s.url}/auth/v1/tokens?pageToken=25&limit=50`, { token: boot });
  t.same(second.body.authentications.map((a: { id: string }) => a.id), ids.slice(25, 75));
  t.equal(second.body.nextPageToken, '75');
  const big = await request(`${s.url}/auth/v1/tokens?limit=1000&page_token=5`, { token: boot });
  t.equal(big.body.authentications.length, 100, 'capped at 100');
  t.equal(big.body.nextPageToken, '105');
  const last = await request(`${s.url}/auth/v1/tokens?limit=100&pageToken=100`, { token: boot });
  t.equal(last.body.authentications.length, 11);
  t.equal(last.body.nextPageToken, '', 'empty on the last page');
  const beyond = await request(`${s.url}/auth/v1/tokens?pageToken=500`, { token: boot });
  t.same(beyond.body, { authentications: [], nextPageToken: '' });

  for (const method of ['METHOD_TOKEN', '1']) {
    const r = await request(`${s.url}/auth/v1/tokens?method=${method}&limit=1`, { token: boot });
    t.equal(r.status, 200);
    t.equal(r.body.authentications[0].id, ids[0], `method=${method}`);
  }
  for (const method of ['METHOD_NONE', '0']) {
    const r = await request(`${s.url}/auth/v1/tokens?method=${method}&limit=1`, { token: boot });
    t.equal(r.body.nextPageToken, '1', `method=${method} means every method`);
  }
  const oidc = await request(`${s.url}/auth/v1/tokens?method=METHOD_OIDC`, { token: boot });
  t.same(oidc.body, { authentications: [], nextPageToken: '' });

  const badMethod = await request(`${s.url}/auth/v1/tokens?method=METHOD_GITHUB`, { token: boot });
  t.equal(badMethod.status, 400);
  t.match(badMethod.body.message, /^invalid field method: unknown method "METHOD_GITHUB"/);
  const badToken = await request(`${s.url}/auth/v1/tokens?pageToken=abc`, { token: boot });
  t.equal(badToken.status, 400);
  t.equal(badToken.body.message, 'pageToken is not valid: "abc"');
  const badLimit = await request(`${s.url}/auth/v1/tokens?limit=-1`, { token: boot });
  t.equal(badLimit.status, 400);
  t.equal(badLimit.body.message, 'invalid field limit: must not be negative');
});

t.test('GET and DELETE /auth/v1/tokens/{id}', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const boot = bootstrapTokenFrom(s.logs)!;
  const made = await createToken(s.url, boot, { name: 'victim', metadata: { k: 'v' } });
  const id = String(made.authentication.id);

  const got = await request(`${s.url}/auth/v1/tokens/${id}`, { token: boot });
  t.equal(got.status, 200);
  t.same(got.body, made.authentication, 'the same record as at creation');

  const missing = await request(`${s.url}/auth/v1/tokens/00000000-0000-4000-8000-000000000000`, { token: boot });
  t.equal(missing.status, 404);
  t.same(missing.body, { code: 5, message: 'getting authentication by token: resource not found', details: [] });

  t.equal((await request(`${s.url}/api/v1/namespaces`, { token: made.clientToken })).status, 200, 'works before the delete');
  const del = await request(`${s.url}/auth/v1/tokens/${id}`, { token: boot, method: 'DELETE' });
  t.equal(del.status, 200);
  t.same(del.body, {});
  t.equal((await request(`${s.url}/api/v1/namespaces`, { token: made.clientToken })).status, 401, 'refused at once after the delete');
  t.equal((await request(`${s.url}/auth/v1/tokens/${id}`, { token: boot })).status, 404);
  const again = await request(`${s.url}/auth/v1/tokens/${id}`, { token: boot, method: 'DELETE' });
  t.equal(again.status, 200, 'deleting an unknown id is a silent no-op');
  t.same(again.body, {});

  // A token may delete itself.
  const selfish = await createToken(s.url, boot, { name: 'selfish' });
  const gone = await request(`${s.url}/auth/v1/tokens/${String(selfish.authentication.id)}`, { token: selfish.clientToken, method: 'DELETE' });
  t.equal(gone.status, 200);
  t.equal((await request(`${s.url}/auth/v1/self`, { token: selfish.clientToken })).status, 401);
});

t.test('GET /auth/v1/self and PUT /auth/v1/self/expire', async (t) => {
  const s = await startAuthServer(t, { yaml: `${REQUIRED}  session:\n    domain: flags.example.com\n` });
  const boot = bootstrapTokenFrom(s.logs)!;
  const made = await createToken(s.url, boot, { name: 'me' });

  const self = await request(`${s.url}/auth/v1/self`, { token: made.clientToken });
  t.equal(self.status, 200);
  t.same(self.body, made.authentication);

  // Expire at a given future time: still valid until then; the record shows it.
  const later = new Date(s.clock.now + 60_000).toISOString();
  s.clock.advance(10);
  const ext = await request(`${s.url}/auth/v1/self/expire?expiresAt=${encodeURIComponent(later)}`, { token: made.clientToken, method: 'PUT' });
  t.equal(ext.status, 200);
  t.same(ext.body, {});
  t.same(ext.headers.getSetCookie(), [
    'svc_client_state=; Path=/; Domain=flags.example.com; Max-Age=0',
    'svc_client_token=; Path=/; Domain=flags.example.com; Max-Age=0',
    'svc_csrf_token=; Path=/; Domain=flags.example.com; Max-Age=0',
  ]);
  const after = await request(`${s.url}/auth/v1/self`, { token: made.clientToken });
  t.equal(after.body.expiresAt, later);
  t.not(after.body.updatedAt, after.body.createdAt, 'updatedAt moved');

  // No expiresAt (or an unreadable one): expires now.
  const now = await request(`${s.url}/auth/v1/self/expire?expiresAt=garbage`, { token: made.clientToken, method: 'PUT' });
  t.equal(now.status, 200);
  s.clock.advance(1);
  const refused = await request(`${s.url}/auth/v1/self`, { token: made.clientToken });
  t.equal(refused.status, 401);
  t.same(refused.body, UNAUTHENTICATED);
  const stored = await request(`${s.url}/auth/v1/tokens/${String(made.authentication.id)}`, { token: boot });
  t.equal(stored.status, 200, 'the expired record stays stored (until cleanup)');
});

t.test('required: false: /auth/v1/self identifies a presented token, and is 401 without one', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  methods:\n    token:\n      enabled: true\n' });
  const made = await createToken(s.url, undefined, { name: 'me' });
  const none = await request(`${s.url}/auth/v1/self`);
  t.equal(none.status, 401);
  t.same(none.body, UNAUTHENTICATED);
  t.equal((await request(`${s.url}/auth/v1/self`, { token: 'garbage' })).status, 401);
  const self = await request(`${s.url}/auth/v1/self`, { token: made.clientToken });
  t.equal(self.status, 200);
  t.equal(self.body.id, made.authentication.id);
  const expire = await request(`${s.url}/auth/v1/self/expire`, { method: 'PUT' });
  t.equal(expire.status, 401);
  t.same(expire.body, UNAUTHENTICATED);
  t.equal(expire.headers.getSetCookie().length, 3, 'cookies cleared even so (state, session, CSRF)');
});

t.test('only the SHA-256 of a token is stored', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const boot = bootstrapTokenFrom(s.logs)!;
  const made = await createToken(s.url, boot, { name: 'hashed' });
  const record = await s.runtime.service.store.getById(String(made.authentication.id));
  t.equal(record?.hashedToken, createHash('sha256').update(made.clientToken).digest('base64url'));
  const { readFileSync, readdirSync } = await import('node:fs');
  const { join } = await import('node:path');
  const dataDir = join(s.dir, 'data');
  for (const f of readdirSync(dataDir)) {
    const bytes = readFileSync(join(dataDir, f));
    t.notOk(bytes.includes(made.clientToken), `${f} does not hold the raw token`);
    t.notOk(bytes.includes(boot), `${f} does not hold the bootstrap token`);
  }
});
