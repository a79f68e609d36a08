/**
 * Who may administer tokens (src/auth/administration.ts, src/auth/admins.ts) through the real
 * server: a token never outlives the credential that creates it, a credential's expiry is only
 * brought forward, `authentication.admins` limits listing, reading and deleting others' records
 * (unset: everyone, with a start-up warning naming who), and `authentication.strict`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { hashToken } from '../../src/auth/token.js';
import { V1_SQLITE_SCHEMA } from './store-contract.js';
import { bootstrapTokenFrom, createToken, request, REQUIRED, startAuthServer, T0, tempDir, UNAUTHENTICATED } from './support.js';

const iso = (ms: number) => new Date(ms).toISOString();
const ids = (body: unknown) => (body as { authentications: Array<{ id: string }> }).authentications.map((a) => a.id);

t.test('a token never outlives its creator; a credential never extends itself', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const boot = bootstrapTokenFrom(s.logs)!;
  // The bootstrap token never expires: it may create tokens without expiry.
  const forever = await createToken(s.url, boot, { name: 'forever' });
  t.notOk('expiresAt' in forever.authentication, 'a credential without expiry creates tokens without expiry');

  // A token that expires in 120 s.
  const brief = await createToken(s.url, boot, { name: 'brief', expiresAt: iso(T0 + 120_000) });
  const permanent = await request(`${s.url}/auth/v1/method/token`, { token: brief.clientToken, body: { name: 'permanent', expiresAt: '2099-01-01T00:00:00Z' } });
  t.equal(permanent.status, 403);
  t.same(permanent.body, {
    code: 7,
    message: `permission denied: a token may not outlive the credential that creates it (yours expires at ${iso(T0 + 120_000)}; asked: 2099-01-01T00:00:00.000Z)`,
    details: [],
  });
  const unsaid = await createToken(s.url, brief.clientToken, { name: 'unsaid' });
  t.equal(unsaid.authentication.expiresAt, iso(T0 + 120_000), 'no expiresAt given: the creator\'s expiry');
  const sooner = await createToken(s.url, brief.clientToken, { name: 'sooner', expiresAt: iso(T0 + 60_000) });
  t.equal(sooner.authentication.expiresAt, iso(T0 + 60_000), 'an earlier expiry is fine');
  const list = await request(`${s.url}/auth/v1/tokens`, { token: boot });
  t.equal(ids(list.body).length, 5, 'bootstrap, forever, brief, unsaid, sooner: nothing permanent was created');

  // PUT /auth/v1/self/expire only brings the expiry forward.
  const extend = await request(`${s.url}/auth/v1/self/expire?expiresAt=2099-01-01T00:00:00Z`, { token: brief.clientToken, method: 'PUT' });
  t.equal(extend.status, 403);
  t.same(extend.body, {
    code: 7,
    message: `permission denied: a credential's expiry can only be brought forward (it expires at ${iso(T0 + 120_000)}; asked: 2099-01-01T00:00:00.000Z)`,
    details: [],
  });
  t.equal((await request(`${s.url}/auth/v1/self`, { token: brief.clientToken })).body.expiresAt, iso(T0 + 120_000), 'unchanged');
  const shorten = await request(`${s.url}/auth/v1/self/expire?expiresAt=${encodeURIComponent(iso(T0 + 30_000))}`, { token: brief.clientToken, method: 'PUT' });
  t.equal(shorten.status, 200);
  t.equal((await request(`${s.url}/auth/v1/self`, { token: brief.clientToken })).body.expiresAt, iso(T0 + 30_000), 'shortened');
  s.clock.advance(30_001);
  t.same((await request(`${s.url}/auth/v1/self`, { token: brief.clientToken })).body, UNAUTHENTICATED, 'and refused after it');

  // A token without expiry may set any expiry on itself (from none to some is a shortening).
  const set = await request(`${s.url}/auth/v1/self/expire?expiresAt=2099-01-01T00:00:00Z`, { token: forever.clientToken, method: 'PUT' });
  t.equal(set.status, 200);
  t.equal((await request(`${s.url}/auth/v1/self`, { token: forever.clientToken })).body.expiresAt, '2099-01-01T00:00:00.000Z');
  const back = await request(`${s.url}/auth/v1/self/expire?expiresAt=2100-01-01T00:00:00Z`, { token: forever.clientToken, method: 'PUT' });
  t.equal(back.status, 403, 'but once set, never later again');
});

t.test('admins unset: every unscoped principal administers every token, and the start-up warning says who', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const warning = s.logs.entries().find((e) => e.key === 'authentication.admins');
  t.equal(warning?.level, 'warn');
  t.equal(
    warning?.msg,
    "authentication.admins is not set: every unscoped principal may list, read and delete every authentication (other users' sessions and tokens included), that is: every holder of a static token created without a namespace (the bootstrap token among them); set authentication.admins to limit that to the principals listed there",
  );
  const boot = bootstrapTokenFrom(s.logs)!;
  const a = await createToken(s.url, boot, { name: 'a' });
  const b = await createToken(s.url, boot, { name: 'b' });
  t.equal(ids((await request(`${s.url}/auth/v1/tokens`, { token: a.clientToken })).body).length, 3, 'a lists every record');
  t.equal((await request(`${s.url}/auth/v1/tokens/${String(b.authentication.id)}`, { token: a.clientToken, method: 'DELETE' })).status, 200, 'and deletes b');
  t.equal((await request(`${s.url}/auth/v1/self`, { token: b.clientToken })).status, 401);
});

t.test('admins set: the others list, read and delete only their own record and what they created', async (t) => {
  const s = await startAuthServer(t, {
    yaml: `${REQUIRED}  admins:\n    tokens: [initial_bootstrap_token, ops]\n`,
  });
  t.notOk(s.logs.entries().some((e) => e.key === 'authentication.admins'), 'no warning');
  const boot = bootstrapTokenFrom(s.logs)!;
  const bootId = ids((await request(`${s.url}/auth/v1/tokens`, { token: boot })).body)[0]!;
  const ops = await createToken(s.url, boot, { name: 'ops' });
  const dev = await createToken(s.url, boot, { name: 'dev' });
  const other = await createToken(s.url, boot, { name: 'other' });
  const devChild = await createToken(s.url, dev.clientToken, { name: 'dev-child' });
  const devId = String(dev.authentication.id);
  const childId = String(devChild.authentication.id);

  // dev: its own record and the one it created, nothing else (not the bootstrap token, which has no creator).
  t.same(ids((await request(`${s.url}/auth/v1/tokens`, { token: dev.clientToken })).body), [devId, childId]);
  t.same(ids((await request(`${s.url}/auth/v1/tokens?method=METHOD_TOKEN&limit=1`, { token: dev.clientToken })).body), [devId], 'paged and filtered');
  t.same(ids((await request(`${s.url}/auth/v1/tokens`, { token: devChild.clientToken })).body), [childId], 'the child: only itself');
  t.equal((await request(`${s.url}/auth/v1/tokens/${childId}`, { token: dev.clientToken })).status, 200);
  const NOT_YOURS = {
    code: 7,
    message: 'permission denied: only authentication.admins may read or delete authentications created by someone else',
    details: [],
  };
  for (const id of [String(other.authentication.id), bootId, String(ops.authentication.id)]) {
    t.same((await request(`${s.url}/auth/v1/tokens/${id}`, { token: dev.clientToken })).body, NOT_YOURS, 'reading another\'s record: 403');
    const del = await request(`${s.url}/auth/v1/tokens/${id}`, { token: dev.clientToken, method: 'DELETE' });
    t.equal(del.status, 403);
    t.same(del.body, NOT_YOURS);
  }
  t.equal((await request(`${s.url}/auth/v1/self`, { token: other.clientToken })).status, 200, 'other survived');
  t.same((await request(`${s.url}/auth/v1/tokens/00000000-0000-4000-8000-000000000000`, { token: dev.clientToken, method: 'DELETE' })).body, {}, 'an unknown id: a no-op, as in Flipt');

  // A name listed in admins.tokens is reserved: dev cannot name a token into an admin.
  const impostor = await request(`${s.url}/auth/v1/method/token`, { token: dev.clientToken, body: { name: 'ops' } });
  t.equal(impostor.status, 403);
  t.match(impostor.body.message, /^permission denied: the token name "ops" is listed in authentication\.admins\.tokens; only an admin may create a token with it$/);

  // ops (an admin by name) sees and deletes everything.
  t.equal(ids((await request(`${s.url}/auth/v1/tokens`, { token: ops.clientToken })).body).length, 5);
  t.equal((await request(`${s.url}/auth/v1/tokens/${childId}`, { token: ops.clientToken, method: 'DELETE' })).status, 200);
  t.equal((await request(`${s.url}/auth/v1/self`, { token: devChild.clientToken })).status, 401, 'dev-child deleted by an admin');
  // dev deletes what it created, and itself.
  const second = await createToken(s.url, dev.clientToken, { name: 'second' });
  t.equal((await request(`${s.url}/auth/v1/tokens/${String(second.authentication.id)}`, { token: dev.clientToken, method: 'DELETE' })).status, 200);
  t.equal((await request(`${s.url}/auth/v1/self`, { token: second.clientToken })).status, 401);
  t.equal((await request(`${s.url}/auth/v1/tokens/${devId}`, { token: dev.clientToken, method: 'DELETE' })).status, 200, 'its own record');
  t.equal((await request(`${s.url}/auth/v1/self`, { token: dev.clientToken })).status, 401);
});

t.test('admins by token id (a restart with admins set applies to existing tokens)', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const boot = bootstrapTokenFrom(s.logs)!;
  const chosen = await createToken(s.url, boot, { name: 'whatever' });
  await s.stop();
  const again = await startAuthServer(t, { dir: s.dir, yaml: `${REQUIRED}  admins:\n    tokens: [${String(chosen.authentication.id)}]\n` });
  const grandchild = await createToken(again.url, chosen.clientToken, { name: 'grandchild' });
  t.equal(ids((await request(`${again.url}/auth/v1/tokens`, { token: chosen.clientToken })).body).length, 3, 'an admin by id sees every record');
  const own = ids((await request(`${again.url}/auth/v1/tokens`, { token: boot })).body);
  t.equal(own.length, 2, 'the bootstrap token, not listed, sees its own record and the one it created');
  t.ok(own.includes(String(chosen.authentication.id)));
  t.notOk(own.includes(String(grandchild.authentication.id)), 'not what that one created');
});

t.test('upgrading a store of tokens without creators: none lost; only admins see them, everyone when admins is unset', async (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'data'), { recursive: true });
  const old = new Database(join(dir, 'data', 'auth.db'));
  old.exec(V1_SQLITE_SCHEMA);
  const insert = old.prepare(
    "INSERT INTO authentications (id, hashed_client_token, method, metadata, expires_at, created_at, updated_at) VALUES (?, ?, 'METHOD_TOKEN', ?, NULL, ?, ?)",
  );
  insert.run('11111111-1111-4111-8111-111111111111', hashToken('boss-token'), JSON.stringify({ 'io.svc.auth.token.name': 'boss' }), T0, T0);
  insert.run('22222222-2222-4222-8222-222222222222', hashToken('old-token'), JSON.stringify({ 'io.svc.auth.token.name': 'old' }), T0 + 1, T0 + 1);
  old.close();

  const s = await startAuthServer(t, { dir, yaml: `${REQUIRED}  admins:\n    tokens: [boss]\n` });
  t.notOk(bootstrapTokenFrom(s.logs), 'tokens exist: no bootstrap');
  t.equal((await request(`${s.url}/auth/v1/self`, { token: 'old-token' })).status, 200, 'an old token still authenticates');
  t.equal(ids((await request(`${s.url}/auth/v1/tokens`, { token: 'boss-token' })).body).length, 2, 'the admin sees both');
  t.same(ids((await request(`${s.url}/auth/v1/tokens`, { token: 'old-token' })).body), ['22222222-2222-4222-8222-222222222222'], 'the other only itself');
  await s.stop();

  const open = await startAuthServer(t, { dir, yaml: REQUIRED });
  t.equal(ids((await request(`${open.url}/auth/v1/tokens`, { token: 'old-token' })).body).length, 2, 'admins unset: everyone sees every record');
});
