/**
 * The PostgreSQL token store unavailable, through a real `vexil serve` process and a real
 * throwaway PostgreSQL: once stopped (`pg_ctl stop`, connections refused) and once hung (every
 * postgres process SIGSTOPped: connections open, nothing answers). Requests that need the
 * database answer 503 with Retry-After and a generic body, and each one completes (the connect,
 * query and pool-wait bounds); tokens this process found before the outage are accepted within
 * `outage_grace` and refused after it; a revocation and an expiry known before the outage still
 * apply; /ready and /metrics say so; when the database is back, nothing was lost.
 *
 * Without PostgreSQL the tests skip with the reason; under CI (any truthy CI) they fail instead.
 */
import t, { type Test } from 'tap';
import { reportMissing } from '../support/requirements.js';
import { postgresUnavailableReason, startPostgres, type ThrowawayPostgres } from '../support/throwaway-db.js';
import { call, type JsonResponse } from '../server/support.js';
import { startServe, writeServeConfig, type ServeProcess } from './process.js';
import { tempDir } from './support.js';

/** A guard only, far above every bound below: a request that hangs fails the test instead of stalling it. */
const GUARD_MS = 30_000;
const OUTAGE_BODY = { code: 14, message: 'the authentication store is unavailable; try again later', details: [] };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ask(url: string, opts: { token?: string; method?: string; body?: unknown } = {}): Promise<JsonResponse> {
  const headers: Record<string, string> = {};
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  return call(url, {
    method: opts.method ?? (opts.body !== undefined ? 'POST' : 'GET'),
    headers,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    signal: AbortSignal.timeout(GUARD_MS),
  });
}

/** Asks until `done` holds (at most `tries` times, 250 ms apart); returns the last answer. */
async function until(fn: () => Promise<JsonResponse>, done: (r: JsonResponse) => boolean, tries = 120): Promise<JsonResponse> {
  let r = await fn();
  for (let i = 1; i < tries && !done(r); i++) {
    await sleep(250);
    r = await fn();
  }
  return r;
}

/** Runs `fn` and leaves how long it took as a comment (a figure for the reader, never asserted). */
async function timed<T>(t: Test, what: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await fn();
  t.comment(`${what}: ${Math.round(performance.now() - start)} ms`);
  return result;
}

const metric = (text: string, name: string) => {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

const unavailable = postgresUnavailableReason();
if (unavailable !== undefined) {
  reportMissing(t, 'PostgreSQL', unavailable);
} else {
  const config = (url: string) => `
authentication:
  required: true
  exclude:
    metrics: true
  cache_ttl: 1s
  storage:
    type: postgres
    postgres:
      url: ${JSON.stringify(url)}
      connect_timeout: 1s
      query_timeout: 1s
      pool_wait_timeout: 1s
      outage_grace: 8s
  methods:
    token:
      enabled: true
`;

  const startAll = async (t: Test): Promise<{ db: ThrowawayPostgres; vexil: ServeProcess; boot: string }> => {
    const db = await startPostgres();
    t.teardown(() => db.close());
    const dir = tempDir(t);
    const vexil = await startServe(t, writeServeConfig(dir, config(db.url)), dir);
    const boot = String((await vexil.waitForLog((e) => e.msg === 'access token created')).client_token);
    return { db, vexil, boot };
  };

  const create = async (url: string, boot: string, body: Record<string, unknown>) => {
    const r = await ask(`${url}/auth/v1/method/token`, { token: boot, body });
    if (r.status !== 200) throw new Error(`token creation: ${r.status} ${r.text}`);
    return r.body as { clientToken: string; authentication: { id: string } };
  };

  const isOutage = (t: Test, r: JsonResponse, what: string, dbUrl: string) => {
    t.equal(r.status, 503, `${what}: 503`);
    t.ok(Number(r.headers.get('retry-after')) >= 1, `${what}: Retry-After ${r.headers.get('retry-after')}`);
    t.same(r.body, OUTAGE_BODY, `${what}: the generic body`);
    t.notOk(r.text.includes('127.0.0.1') || r.text.includes(new URL(dbUrl).port), `${what}: no address in the body`);
  };

  t.test('database stopped: 503 + Retry-After, cached tokens within the grace, revocation and expiry as last known; nothing lost', async (t) => {
    const { db, vexil, boot } = await startAll(t);
    const ns = (token: string) => ask(`${vexil.url}/api/v1/namespaces`, { token });

    const kept = await create(vexil.url, boot, { name: 'kept' });
    const revoked = await create(vexil.url, boot, { name: 'revoked' });
    const expiring = await create(vexil.url, boot, { name: 'expiring', expiresAt: new Date(Date.now() + 4000).toISOString() });
    for (const tok of [kept, revoked, expiring]) t.equal((await ns(tok.clientToken)).status, 200, 'works before the outage (now cached)');
    t.equal((await ask(`${vexil.url}/auth/v1/tokens/${revoked.authentication.id}`, { token: boot, method: 'DELETE' })).status, 200);
    t.equal((await ns(revoked.clientToken)).status, 401, 'revoked before the outage');
    const ready = await ask(`${vexil.url}/ready`);
    t.same(ready.body.authenticationStore, { status: 'AVAILABLE' }, '/ready before');

    await db.stop();
    await sleep(1200); // past cache_ttl: every cached entry needs the database now

    t.equal((await ns(kept.clientToken)).status, 200, 'a token found before the outage: accepted within the grace');
    t.equal((await ns(boot)).status, 200, 'the bootstrap token too');
    isOutage(t, await ns(revoked.clientToken), 'the token revoked before the outage is not accepted', db.url);
    isOutage(t, await ns('never-seen-token'), 'an uncached token', db.url);
    isOutage(t, await ask(`${vexil.url}/auth/v1/method/token`, { token: boot, body: { name: 'during' } }), 'token creation', db.url);
    isOutage(t, await ask(`${vexil.url}/auth/v1/tokens`, { token: boot }), 'token listing', db.url);
    isOutage(t, await ask(`${vexil.url}/auth/v1/tokens/${kept.authentication.id}`, { token: boot, method: 'DELETE' }), 'token deletion', db.url);
    // Fast path (evaluation) too.
    isOutage(
      t,
      await call(`${vexil.url}/evaluate/v1/boolean`, {
        method: 'POST',
        headers: { authorization: 'Bearer another-unknown-token' },
        body: JSON.stringify({ namespaceKey: 'default', flagKey: 'x', entityId: 'e', context: {} }),
        signal: AbortSignal.timeout(GUARD_MS),
      }),
      'an uncached token on the evaluation path',
      db.url,
    );

    const during = await ask(`${vexil.url}/ready`);
    t.equal(during.status, 200, '/ready: still serving');
    t.equal(during.body.authenticationStore?.status, 'UNAVAILABLE', '/ready says the token store is unavailable');
    t.notOk(during.text.includes(new URL(db.url).port), '/ready: no address');
    const metrics = (await ask(`${vexil.url}/metrics`)).text;
    t.equal(metric(metrics, 'vexil_auth_store_available'), 0, 'metric: unavailable');
    t.ok((metric(metrics, 'vexil_auth_store_outage_accepted_total') ?? 0) >= 2, 'metric: tokens accepted from the cache');

    // Expiry as last known: the expiring token stops at its expiresAt, within the grace.
    while (Date.now() < Date.parse((expiring.authentication as { expiresAt?: string }).expiresAt ?? '') + 100) await sleep(100);
    t.equal((await ns(expiring.clientToken)).status, 401, 'expired during the outage: refused');

    // The grace ends: the cached token is refused too (503, the database being unknown).
    const after = await until(() => ns(kept.clientToken), (r) => r.status !== 200);
    isOutage(t, after, 'a cached token after the grace', db.url);

    const warnings = vexil.entries().filter((e) => String(e.msg).startsWith('authentication store unavailable'));
    t.equal(warnings.length, 1, 'the outage is logged once');
    t.equal(warnings[0]?.level, 'warn', 'at warn');

    await db.start();
    const back = await until(() => ns(kept.clientToken), (r) => r.status === 200);
    t.equal(back.status, 200, 'accepted again once the database is back');
    t.equal((await ns(boot)).status, 200);
    t.equal((await ns(revoked.clientToken)).status, 401, 'the revoked token stays revoked');
    const list = await ask(`${vexil.url}/auth/v1/tokens`, { token: boot });
    t.equal(list.status, 200);
    const names = (list.body.authentications as Array<{ metadata: Record<string, string> }>).map((a) => a.metadata['io.svc.auth.token.name']);
    t.ok(names.includes('kept') && names.includes('expiring'), 'no token lost');
    t.equal((await ask(`${vexil.url}/ready`)).body.authenticationStore?.status, 'AVAILABLE', '/ready after');
    t.equal(metric((await ask(`${vexil.url}/metrics`)).text, 'vexil_auth_store_available'), 1, 'metric: available');
    t.ok(vexil.entries().some((e) => e.msg === 'authentication store available again'), 'the recovery is logged');
    t.notOk([...vexil.lines, vexil.stderr()].join('\n').includes(kept.clientToken), 'no token in the output');
  });

  t.test('database hung (SIGSTOP): every request completes within the bounds; 503 for what needs it, cached tokens accepted', async (t) => {
    const { db, vexil, boot } = await startAll(t);
    t.teardown(() => db.resume());
    const ns = (token: string) => ask(`${vexil.url}/api/v1/namespaces`, { token });
    const kept = await create(vexil.url, boot, { name: 'kept' });
    t.equal((await ns(kept.clientToken)).status, 200);

    db.pause();
    await sleep(1200); // past cache_ttl

    // The first lookup waits for the query bound on a pooled connection, then decides from the cache.
    t.equal((await timed(t, 'first cached token after cache_ttl', () => ns(kept.clientToken))).status, 200, 'a token found before the outage: accepted');
    t.equal((await ns(boot)).status, 200, 'the bootstrap token too');
    // More requests needing the database at once than the pool has connections (10): the rest
    // wait for the pool, and every one of them ends.
    const many = await timed(t, '14 concurrent uncached tokens', () => Promise.all(Array.from({ length: 14 }, (_, i) => ns(`unknown-token-${i}`))));
    t.same(
      many.map((r) => r.status),
      many.map(() => 503),
      'uncached tokens: all answered 503',
    );
    isOutage(t, many[0]!, 'an uncached token', db.url);
    isOutage(t, await timed(t, 'token creation', () => ask(`${vexil.url}/auth/v1/method/token`, { token: boot, body: { name: 'during' } })), 'token creation', db.url);
    isOutage(t, await timed(t, 'token listing', () => ask(`${vexil.url}/auth/v1/tokens`, { token: boot })), 'token listing', db.url);
    t.equal((await ask(`${vexil.url}/ready`)).body.authenticationStore?.status, 'UNAVAILABLE', '/ready says so');
    t.equal(metric((await ask(`${vexil.url}/metrics`)).text, 'vexil_auth_store_available'), 0, 'metric');

    db.resume();
    const back = await until(() => ask(`${vexil.url}/auth/v1/method/token`, { token: boot, body: { name: 'after' } }), (r) => r.status === 200);
    t.equal(back.status, 200, 'token creation works again once the database answers');
    t.equal((await ns(back.body.clientToken)).status, 200, 'and the new token is accepted');
    const list = await ask(`${vexil.url}/auth/v1/tokens`, { token: boot });
    const names = (list.body.authentications as Array<{ metadata: Record<string, string> }>).map((a) => a.metadata['io.svc.auth.token.name']);
    t.ok(names.includes('kept') && names.includes('after'), 'no token lost');
    t.equal((await ask(`${vexil.url}/ready`)).body.authenticationStore?.status, 'AVAILABLE', '/ready after');
  });
}
