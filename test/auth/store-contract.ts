/**
 * The AuthStore contract, run against each implementation (SQLite here, PostgreSQL when a
 * throwaway server can be started). `open()` returns a new connection to the same database
 * each time, so a second call stands for a second replica.
 */
import type { Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { hashToken } from '../../src/auth/token.js';
import type { AuthStore, NewAuthentication } from '../../src/auth/store/types.js';
import type { Method } from '../../src/auth/types.js';
import { T0 } from './support.js';

/** The schema of vexil before records named their creator (version 1). */
export const V1_SQLITE_SCHEMA = `CREATE TABLE authentications (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, hashed_client_token TEXT NOT NULL UNIQUE,
  method TEXT NOT NULL, metadata TEXT NOT NULL, expires_at INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE INDEX authentications_created ON authentications (created_at, seq);
CREATE INDEX authentications_method_created ON authentications (method, created_at, seq);
CREATE INDEX authentications_expiry ON authentications (method, expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE operation_locks (name TEXT PRIMARY KEY, holder TEXT NOT NULL, acquired_at INTEGER NOT NULL, acquired_until INTEGER NOT NULL);
PRAGMA user_version = 1;`;

export function newAuth(over: Partial<NewAuthentication> = {}): NewAuthentication {
  return {
    id: randomUUID(),
    method: 'METHOD_TOKEN',
    hashedToken: hashToken(randomUUID()),
    metadata: { 'io.svc.auth.token.name': 'x' },
    now: T0,
    ...over,
  };
}

export function storeContract(t: Test, open: () => Promise<AuthStore>): void {
  const opened = async (t: Test) => {
    const s = await open();
    t.teardown(() => s.close());
    return s;
  };

  t.test('create, read back by hash and by id', async (t) => {
    const s = await opened(t);
    const metadata = JSON.parse('{"io.svc.auth.token.name":"ünïcødé ✓","__proto__":"kept as data","empty":""}') as Record<string, string>;
    const input = newAuth({ metadata, expiresAt: T0 + 1234 });
    const created = await s.create(input);
    t.same(created, { id: input.id, hashedToken: input.hashedToken, method: 'METHOD_TOKEN', metadata: input.metadata, expiresAt: T0 + 1234, createdAt: T0, updatedAt: T0 });
    const byHash = await s.getByHash(input.hashedToken);
    t.same(byHash, created);
    t.equal(Object.keys(byHash!.metadata).length, 3, '__proto__ survives as a key');
    t.same(await s.getById(input.id), created);
    t.equal(await s.getByHash(hashToken('nope')), undefined);
    t.equal(await s.getById('nope'), undefined);
    const forever = await s.create(newAuth());
    t.notOk('expiresAt' in (await s.getById(forever.id))!, 'no expiry stays absent');
    await t.rejects(s.create(newAuth({ hashedToken: input.hashedToken })), 'the token hash is unique');
  });

  t.test('list: creation order, method filter, limit and offset', async (t) => {
    const s = await opened(t);
    const ids: string[] = [];
    // Same timestamp for several: insertion order breaks the tie.
    for (let i = 0; i < 7; i++) {
      const method: Method = i % 3 === 2 ? 'METHOD_OIDC' : 'METHOD_TOKEN';
      ids.push((await s.create(newAuth({ method, now: T0 + Math.floor(i / 2) * 1000 }))).id);
    }
    const all = await s.list({ offset: 0, limit: 100 });
    t.same(all.map((a) => a.id), ids);
    t.same((await s.list({ offset: 2, limit: 3 })).map((a) => a.id), ids.slice(2, 5));
    const tokens = await s.list({ method: 'METHOD_TOKEN', offset: 0, limit: 100 });
    t.same(tokens.map((a) => a.id), ids.filter((_, i) => i % 3 !== 2));
    t.same((await s.list({ method: 'METHOD_OIDC', offset: 1, limit: 1 })).map((a) => a.id), [ids[5]]);
    t.same(await s.list({ offset: 50, limit: 10 }), []);
  });

  t.test('created_by: stored, read back, and the owner listing (created by me, or me)', async (t) => {
    const s = await opened(t);
    const me = await s.create(newAuth({ createdBy: 'boss' }));
    const mine = [
      await s.create(newAuth({ createdBy: 'me', now: T0 + 1 })),
      await s.create(newAuth({ createdBy: 'me', method: 'METHOD_OIDC', now: T0 + 2 })),
    ];
    await s.create(newAuth({ createdBy: 'someone else', now: T0 + 3 }));
    const nobodys = await s.create(newAuth({ now: T0 + 4 }));
    t.equal(mine[0]!.createdBy, 'me');
    t.equal((await s.getById(mine[0]!.id))?.createdBy, 'me');
    t.notOk('createdBy' in (await s.getById(nobodys.id))!, 'no creator stays absent');
    const owned = await s.list({ offset: 0, limit: 10, ownedBy: { createdBy: 'me', id: me.id } });
    t.same(owned.map((a) => a.id), [me.id, ...mine.map((a) => a.id)], 'its own record, then the ones it created, oldest first');
    t.same((await s.list({ offset: 1, limit: 1, ownedBy: { createdBy: 'me', id: me.id } })).map((a) => a.id), [mine[0]!.id], 'paged');
    t.same(
      (await s.list({ method: 'METHOD_OIDC', offset: 0, limit: 10, ownedBy: { createdBy: 'me', id: me.id } })).map((a) => a.id),
      [mine[1]!.id],
      'with the method filter',
    );
    t.same((await s.list({ offset: 0, limit: 10, ownedBy: { id: me.id } })).map((a) => a.id), [me.id], 'no creator identity: its own record only');
    t.equal((await s.list({ offset: 0, limit: 10 })).length, 5, 'without ownedBy: every record');
  });

  t.test('delete and setExpiry', async (t) => {
    const s = await opened(t);
    const a = await s.create(newAuth());
    t.equal(await s.delete(a.id), true);
    t.equal(await s.delete(a.id), false);
    t.equal(await s.getByHash(a.hashedToken), undefined);
    const b = await s.create(newAuth());
    const expired = await s.setExpiry(b.id, T0 + 5000, T0 + 10);
    t.same(expired, { ...b, expiresAt: T0 + 5000, updatedAt: T0 + 10 });
    t.same(await s.getById(b.id), expired);
    t.equal(await s.setExpiry('nope', T0, T0), undefined);
  });

  t.test('createIfMethodEmpty: once per method, even across replicas racing', async (t) => {
    const s = await opened(t);
    await s.create(newAuth({ method: 'METHOD_OIDC' }));
    const replicas = [s, await opened(t), await opened(t)];
    const results = await Promise.all(replicas.map((r) => r.createIfMethodEmpty(newAuth())));
    t.equal(results.filter((r) => r !== undefined).length, 1, 'exactly one bootstrap record');
    t.equal((await s.list({ method: 'METHOD_TOKEN', offset: 0, limit: 10 })).length, 1);
    // An expired token still counts as existing.
    await s.setExpiry(results.find((r) => r)!.id, T0 - 1, T0);
    t.equal(await s.createIfMethodEmpty(newAuth()), undefined);
  });

  t.test('cleanup: grace period, no-expiry records, other methods', async (t) => {
    const s = await opened(t);
    const hour = 3_600_000;
    const oldExpired = await s.create(newAuth({ expiresAt: T0 - 2 * hour }));
    const recentlyExpired = await s.create(newAuth({ expiresAt: T0 - 10 * 60_000 }));
    const valid = await s.create(newAuth({ expiresAt: T0 + hour }));
    const forever = await s.create(newAuth());
    const otherMethod = await s.create(newAuth({ method: 'METHOD_OIDC', expiresAt: T0 - 2 * hour }));
    const grace = 30 * 60_000;
    const out = await s.cleanup({ method: 'METHOD_TOKEN', expiredBefore: T0 - grace, holdUntil: T0 + hour, now: T0, holder: 'a' });
    t.match(out, { ran: true, deleted: 1, expired: [{ method: 'METHOD_TOKEN' }] });
    t.equal(out.ran && out.expired.length, 1, 'the deleted record is returned');
    t.equal(await s.getById(oldExpired.id), undefined, 'expired longer than the grace period: deleted');
    t.ok(await s.getById(recentlyExpired.id), 'expired within the grace period: kept');
    t.ok(await s.getById(valid.id));
    t.ok(await s.getById(forever.id), 'no expiry: never deleted');
    t.ok(await s.getById(otherMethod.id), 'another method: its own cleanup');
  });

  t.test('cleanup lease: one replica per interval', async (t) => {
    const a = await opened(t);
    const b = await opened(t);
    const req = (holder: string, now: number) => ({ method: 'METHOD_CLUSTER' as Method, expiredBefore: now, holdUntil: now + 1000, now, holder });
    t.match(await a.cleanup(req('a', T0)), { ran: true });
    t.same(await b.cleanup(req('b', T0 + 10)), { ran: false, heldBy: 'a', until: T0 + 1000 }, 'b skips while a holds the lease');
    t.match(await a.cleanup(req('a', T0 + 999)), { ran: true }, 'the holder renews its own lease');
    t.match(await b.cleanup(req('b', T0 + 2000)), { ran: true }, 'an expired lease passes to another replica');
    t.match(await a.cleanup({ ...req('a', T0 + 2001), method: 'METHOD_TOKEN' }), { ran: true }, 'leases are per method');

    const racing = await Promise.all([a, b, await opened(t)].map((r, i) => r.cleanup(req(`r${i}`, T0 + 10_000))));
    t.equal(racing.filter((o) => o.ran).length, 1, 'replicas racing at the same moment: exactly one runs');
  });

  t.test('records survive closing and reopening', async (t) => {
    const s = await open();
    const a = await s.create(newAuth({ expiresAt: T0 + 5 }));
    await s.close();
    const again = await opened(t);
    t.same(await again.getById(a.id), a);
  });
}
