/** Token values and digests, request classification, the default data folder. */
import { createHash } from 'node:crypto';
import t from 'tap';
import { defaultDataDir } from '../../src/config/data-dir.js';
import { classifyRequest } from '../../src/auth/scope.js';
import { describePostgresUrl } from '../../src/auth/setup.js';
import { digestToken, generateToken, hashToken, sameDigest } from '../../src/auth/token.js';

t.test('tokens: 32 random bytes as base64url; stored as base64url SHA-256', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const tok = generateToken();
    t.match(tok, /^[A-Za-z0-9_-]{43}$/);
    seen.add(tok);
  }
  t.equal(seen.size, 200);
  t.equal(hashToken('abc'), createHash('sha256').update('abc').digest('base64url'));
  t.ok(sameDigest(Buffer.from(hashToken('abc'), 'base64url'), digestToken('abc')));
  t.notOk(sameDigest(Buffer.from(hashToken('abc'), 'base64url'), digestToken('abd')));
  t.notOk(sameDigest(Buffer.from('short', 'base64url'), digestToken('abc')), 'a digest of another length never matches');
});

t.test('classifyRequest', async (t) => {
  const pub = (m: string, p: string) => t.same(classifyRequest(m, p), { public: true }, `${m} ${p} public`);
  pub('GET', '/health');
  pub('GET', '/health/');
  t.same(classifyRequest('GET', '/ready'), { public: true, identify: true }, 'GET /ready public; a valid credential is identified');
  t.same(classifyRequest('GET', '/metrics'), { public: false, section: 'metrics', namespace: { from: 'none' }, self: false }, '/metrics: its own section');
  pub('GET', '/auth/v1/method');
  pub('HEAD', '/auth/v1/method');
  pub('GET', '/auth/v1/method/oidc/google/authorize');
  pub('GET', '/auth/v1/method/code_host/callback');
  pub('POST', '/auth/v1/method/cluster/serviceaccount');
  pub('POST', '/hooks/github'); // authenticated by the delivery's signature (src/server/hooks/)
  pub('POST', '/hooks/registry');
  t.match(classifyRequest('POST', '/hooks'), { public: false, section: 'other' }, '/hooks itself is no hook');
  t.match(classifyRequest('POST', '/auth/v1/method'), { public: false, section: 'auth' });
  t.match(classifyRequest('POST', '/auth/v1/method/token'), { public: false, section: 'auth', namespace: { from: 'none' }, self: false });
  t.match(classifyRequest('GET', '/auth/v1/self'), { self: true });
  t.match(classifyRequest('PUT', '/auth/v1/self/expire'), { self: true });
  t.match(classifyRequest('GET', '/HEALTH'), { public: false, section: 'other' });
  t.match(classifyRequest('GET', '//health'), { public: false, section: 'other' });

  const ns = (p: string) => (classifyRequest('GET', p) as { namespace: unknown }).namespace;
  t.same(ns('/api/v1/namespaces'), { from: 'none' });
  t.same(ns('/api/v1/namespaces/'), { from: 'none' });
  t.same(ns('/api/v1'), { from: 'none' });
  t.same(ns('/api/v1/namespaces/prod'), { from: 'path', namespace: 'prod' });
  t.same(ns('/api/v1/namespaces/a%2Fb/flags'), { from: 'path', namespace: 'a/b' }, 'decoded as the router decodes');
  t.same(ns('/api/v1/namespaces/%E0%A4%A/flags'), { from: 'none' }, 'undecodable: no namespace');
  t.same(ns('/api/v1/flags/x'), { from: 'path', namespace: 'default' });
  t.same(ns('/evaluate/v1/variant'), { from: 'body', batch: false });
  t.same(ns('/evaluate/v1/batch'), { from: 'body', batch: true });
  t.same(ns('/evaluate/v1/namespaces/prod/variant'), { from: 'body', batch: false, pathNamespace: 'prod' });
  t.same(ns('/internal/v1/evaluation/snapshot/namespace/prod'), { from: 'path', namespace: 'prod' });
  t.same(ns('/internal/v1/evaluation/snapshots'), { from: 'none' });
  t.same(ns('/client/v2/environments/staging/namespaces/prod/snapshot'), { from: 'path', namespace: 'prod' });
  t.same(ns('/client/v2/environments/staging/namespaces/prod/stream'), { from: 'path', namespace: 'prod' });
  t.same(ns('/client/v2/environments/staging/namespaces/a%2Fb/snapshot/'), { from: 'path', namespace: 'a/b' });
  t.same(ns('/client/v2/environments/staging/namespaces/prod'), { from: 'none' });
  t.same(ns('/client/v2/environments/staging/namespaces/prod/other'), { from: 'none' });
  t.same(ns('/client/v2/environments/staging/namespaces/%E0%A4%A/snapshot'), { from: 'none' });
  t.match(classifyRequest('GET', '/client/v2/environments/x/namespaces/y/snapshot'), { public: false, section: 'evaluation' });
  t.match(classifyRequest('GET', '/client/v2/other'), { public: false, section: 'evaluation', namespace: { from: 'none' } });
  t.same(ns('/meta/info'), { from: 'none' });
  t.same(ns('/ofrep/v1/evaluate/flags'), { from: 'header' });
});

t.test('default data folder', async (t) => {
  const base = { env: {}, tmp: '/tmp' };
  t.equal(defaultDataDir({ ...base, platform: 'linux', home: '/home/u' }), '/home/u/.local/share/vexil');
  t.equal(defaultDataDir({ ...base, env: { XDG_DATA_HOME: '/data' }, platform: 'linux', home: '/home/u' }), '/data/vexil');
  t.equal(defaultDataDir({ ...base, env: { XDG_DATA_HOME: 'relative' }, platform: 'linux', home: '/home/u' }), '/home/u/.local/share/vexil');
  t.equal(defaultDataDir({ ...base, platform: 'darwin', home: '/Users/u' }), '/Users/u/Library/Application Support/vexil');
  t.match(defaultDataDir({ ...base, platform: 'linux', home: '/nonexistent' }), /^\/tmp\/vexil/, 'no home: the temp folder');
  t.match(defaultDataDir({ ...base, platform: 'linux', home: undefined }), /^\/tmp\/vexil/);
});

t.test('the PostgreSQL URL is logged without credentials', async (t) => {
  t.equal(describePostgresUrl('postgres://user:s3cret@db.example:5432/flags?sslmode=require'), 'postgres://db.example:5432/flags');
  t.equal(describePostgresUrl('not a url'), 'postgres (unparsable URL)');
});

t.test('LookupCache: ttl, eviction by id, stale reads not cached, bounded size', async (t) => {
  const { LookupCache } = await import('../../src/auth/cache.js');
  let now = 0;
  const entry = (id: string) => ({
    authentication: { id, method: 'METHOD_TOKEN' as const, createdAt: 0, updatedAt: 0, metadata: {} },
    digest: Buffer.alloc(32),
  });
  const c = new LookupCache(1000, () => now, 3);
  c.put('k1', entry('a'), c.epoch);
  t.equal(c.get('k1')?.authentication.id, 'a');
  now = 999;
  t.ok(c.get('k1'));
  now = 1000;
  t.equal(c.get('k1'), undefined, 'gone after ttl');

  c.put('k1', entry('a'), c.epoch);
  c.evictId('a');
  t.equal(c.get('k1'), undefined, 'evicted by id');

  const before = c.epoch;
  c.evictId('b');
  c.put('k2', entry('b'), before);
  t.equal(c.get('k2'), undefined, 'a read that started before an eviction is not cached');

  for (const k of ['x', 'y', 'z', 'w']) c.put(k, entry(k), c.epoch);
  t.equal(c.size, 3);
  t.equal(c.get('x'), undefined, 'the oldest entry is dropped');

  const off = new LookupCache(0, () => now);
  off.put('k', entry('a'), off.epoch);
  t.equal(off.get('k'), undefined, 'ttl 0: nothing cached');
});

t.test('LookupCache with an outage grace: stale() serves past the ttl until the grace, forget() and evictId() end it', async (t) => {
  const { LookupCache } = await import('../../src/auth/cache.js');
  let now = 0;
  const entry = (id: string) => ({
    authentication: { id, method: 'METHOD_TOKEN' as const, createdAt: 0, updatedAt: 0, metadata: {} },
    digest: Buffer.alloc(32),
  });
  const c = new LookupCache(1000, () => now, 100, 5000);
  c.put('k1', entry('a'), c.epoch);
  c.put('k2', entry('b'), c.epoch);
  c.put('k3', entry('c'), c.epoch);
  now = 1000;
  t.equal(c.get('k1'), undefined, 'not fresh after the ttl');
  t.equal(c.stale('k1')?.authentication.id, 'a', 'but kept for the grace');
  c.forget('k2');
  t.equal(c.stale('k2'), undefined, 'the store no longer has it');
  c.evictId('c');
  t.equal(c.stale('k3'), undefined, 'deleted or expired through this process');
  now = 4999;
  t.ok(c.stale('k1'));
  now = 5000;
  t.equal(c.stale('k1'), undefined, 'gone after the grace (counted from the last confirmation)');
  t.equal(c.size, 0);

  const noGrace = new LookupCache(1000, () => now);
  noGrace.put('k', entry('a'), noGrace.epoch);
  now += 1000;
  t.equal(noGrace.stale('k'), undefined, 'no grace: nothing stale is served');
});

t.test('PostgreSQL failures that mean "unavailable" (and those that do not)', async (t) => {
  const { isUnavailable } = await import('../../src/auth/store/pg-failures.js');
  const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
  for (const err of [
    withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
    withCode('read ECONNRESET', 'ECONNRESET'),
    withCode('terminating connection due to administrator command', '57P01'),
    withCode('the database system is starting up', '57P03'),
    withCode('canceling statement due to statement timeout', '57014'),
    withCode('sorry, too many clients already', '53300'),
    withCode('connection failure', '08006'),
    withCode('cannot execute INSERT in a read-only transaction', '25006'),
    new Error('Connection terminated unexpectedly'),
    new Error('Connection terminated due to connection timeout'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Query read timeout'),
    new AggregateError([withCode('a', 'ECONNREFUSED'), withCode('b', 'ECONNREFUSED')], ''),
  ]) {
    t.ok(isUnavailable(err), err.message);
  }
  for (const err of [
    withCode('duplicate key value violates unique constraint', '23505'),
    withCode('relation "authentications" does not exist', '42P01'),
    new Error('the authentication database has schema version 42'),
    'not an error',
  ]) {
    t.notOk(isUnavailable(err), String(err instanceof Error ? err.message : err));
  }
});

t.test('PostgreSQL bounds must be above 0', async (t) => {
  const { loadConfig } = await import('../../src/config/load.js');
  const { startAuthentication } = await import('../../src/auth/setup.js');
  const { createLogger } = await import('../../src/logger.js');
  const config = loadConfig({
    env: {
      VEXIL_AUTHENTICATION_REQUIRED: 'true',
      VEXIL_AUTHENTICATION_STORAGE_TYPE: 'postgres',
      VEXIL_AUTHENTICATION_STORAGE_POSTGRES_URL: 'postgres://127.0.0.1:1/none',
      VEXIL_AUTHENTICATION_STORAGE_POSTGRES_QUERY_TIMEOUT: '0s',
    },
  });
  const logger = createLogger({ level: 'fatal', encoding: 'json', destination: { write: () => undefined } });
  await t.rejects(startAuthentication({ config, logger, cleanup: false }), /authentication\.storage\.postgres\.query_timeout: must be above 0/);
});
