/**
 * The object-store backend end to end: a real S3-protocol server (s3rver, test/support/s3-server.ts)
 * → the S3 provider and object source built from config → the snapshot store → vexil's HTTP API.
 * Requests are counted by the provider inside the SDK (one count per HTTP request sent).
 */
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { startHttpServer } from '../../src/server/listen.js';
import { createObjectSource, OBJECT_REFERENCE, type ObjectSource } from '../../src/sources/object/source.js';
import { objectStorageFromConfig } from '../../src/sources/object/from-config.js';
import { createS3Provider, type S3Provider } from '../../src/sources/object/s3.js';
import { createSnapshotStore, type ManagedSnapshotStore } from '../../src/store/snapshot-store.js';
import { runCli, serveCli } from '../cli/run-cli.js';
import { gitFixture } from '../support/git-fixture.js';
import type { Teardown } from '../support/git-repo.js';
import { startCredentialServer, startS3Server, useAwsEnv, type S3TestServer } from '../support/s3-server.js';
import { STATE_LIMITS, STORE_DEFAULTS } from '../support/config-defaults.js';

const hello = gitFixture('hello.yml');
const bonjour = gitFixture('bonjour.yml');
const broken = gitFixture('broken.yml');
const otherNamespace = ['version: "1.4"', 'namespace: other', 'flags:', '  - key: dark-mode', '    name: Dark mode', '    type: BOOLEAN_FLAG_TYPE', '    enabled: true', ''].join('\n');
/** An unclosed flow sequence on line 6. */
const badYaml = ['version: "1.4"', 'namespace: default', 'flags:', '  - key: greeting', '    name: Greeting', '    enabled: [yes', ''].join('\n');

async function json(res: Response) {
  return { status: res.status, revision: res.headers.get('x-vexil-revision'), body: (await res.json()) as any };
}

interface Served {
  s3: S3TestServer;
  store: ManagedSnapshotStore;
  source: ObjectSource;
  provider: S3Provider;
  url: string;
  description: string;
}

interface ServeOptions {
  prefix?: string;
  maxStalenessMs?: number;
  now?: () => Date;
  /** An S3 server already running (two sources on one bucket). */
  s3?: S3TestServer;
  /** Objects written before the store starts (key → content). */
  objects?: Record<string, string>;
  /** storage.object.s3.poll_interval (default 1h: tests poll with store.refresh()). */
  pollInterval?: string;
}

/** storage.type object from config (VEXIL_* env) → store → HTTP server, all closed at teardown. */
async function serveObject(t: Teardown, opts: ServeOptions = {}): Promise<Served> {
  const s3 = opts.s3 ?? (await startS3Server(t));
  for (const [key, body] of Object.entries(opts.objects ?? { 'features.yml': hello })) await s3.put('flags', key, body);
  const config = loadConfig({
    env: {
      VEXIL_STORAGE_TYPE: 'object',
      VEXIL_STORAGE_OBJECT_TYPE: 's3',
      VEXIL_STORAGE_OBJECT_S3_BUCKET: 'flags',
      VEXIL_STORAGE_OBJECT_S3_ENDPOINT: s3.endpoint,
      ...(opts.prefix !== undefined ? { VEXIL_STORAGE_OBJECT_S3_PREFIX: opts.prefix } : {}),
      VEXIL_STORAGE_OBJECT_S3_POLL_INTERVAL: opts.pollInterval ?? '1h',
    },
  });
  const storage = objectStorageFromConfig(config, { baseDir: process.cwd(), dataDir: process.cwd() });
  const store = createSnapshotStore({
    ...STORE_DEFAULTS,
    source: storage.source,
    logger: pino({ level: 'silent' }),
    ...storage.store,
    ...(opts.maxStalenessMs !== undefined ? { maxStalenessMs: opts.maxStalenessMs } : {}),
    ...(opts.now !== undefined ? { now: opts.now } : {}),
  });
  t.teardown(() => store.close());
  await store.start();
  const server = await startHttpServer({
    store,
    config,
    logger: pino({ level: 'silent' }),
    storageType: 'object',
    version: 'test',
    host: '127.0.0.1',
    port: 0,
  });
  t.teardown(() => server.close());
  return { s3, store, source: storage.source, provider: storage.source.provider as S3Provider, url: server.url, description: storage.description };
}

const variant = (url: string) =>
  fetch(`${url}/evaluate/v1/variant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: 'e1', context: {} }),
  }).then(json);

const snapshots = async (url: string) => (await fetch(`${url}/meta/snapshots`).then(json)).body;

t.beforeEach((t) => useAwsEnv(t));

t.test('serves the objects under the prefix; a new object is served after the next poll', async (t) => {
  const { s3, store, url, description } = await serveObject(t);
  t.match(description, /^s3:\/\/flags\/ at 127\.0\.0\.1:\d+$/);
  const first = await variant(url);
  t.equal(first.status, 200);
  t.equal(first.body.variantKey, 'hello');
  t.match(first.revision, /^[0-9a-f]{64}$/, 'the revision is a hash of the listing');
  const snaps = await snapshots(url);
  t.equal(snaps.defaultReference, OBJECT_REFERENCE);
  t.match(snaps.references, [{ reference: 'object', default: true, revision: { id: first.revision, meta: { at: String } } }]);

  await s3.put('flags', 'other.features.yml', otherNamespace);
  const before = await fetch(`${url}/api/v1/namespaces/other/flags/dark-mode`);
  t.equal(before.status, 404, 'not polled yet');
  await store.refresh();
  const after = await fetch(`${url}/api/v1/namespaces/other/flags/dark-mode`).then(json);
  t.equal(after.status, 200);
  t.equal(after.body.key, 'dark-mode');
  t.not(after.revision, first.revision, 'a new listing, a new revision');
});

t.test('a changed object is picked up, and only it is downloaded and parsed again', async (t) => {
  const { s3, store, url, provider, source } = await serveObject(t, { objects: { 'features.yml': hello, 'other.features.yml': otherNamespace } });
  const listed = provider.stats();
  t.equal(listed.getRequests, 2, 'start downloads each state file once');
  const parsed = store.parseCacheStats();

  await s3.put('flags', 'features.yml', bonjour);
  await store.refresh();
  t.equal((await variant(url)).body.variantKey, 'bonjour');
  const after = provider.stats();
  t.equal(after.listRequests - listed.listRequests, 1, 'one listing');
  t.equal(after.getRequests - listed.getRequests, 1, 'one download: the changed object');
  t.equal(store.parseCacheStats().misses - parsed.misses, 1, 'one file parsed again');
  t.equal(source.stats().cached, 2, 'the bytes held are those of the current objects');
  t.equal((await fetch(`${url}/api/v1/namespaces/other/flags/dark-mode`)).status, 200, 'the unchanged object is still served');
});

t.test('a deleted object is gone after the next poll', async (t) => {
  const { s3, store, url, source } = await serveObject(t, { objects: { 'features.yml': hello, 'other.features.yml': otherNamespace } });
  t.equal((await fetch(`${url}/api/v1/namespaces/other/flags/dark-mode`)).status, 200);
  await s3.remove('flags', 'other.features.yml');
  await store.refresh();
  t.equal((await fetch(`${url}/api/v1/namespaces/other/flags/dark-mode`)).status, 404);
  t.equal((await variant(url)).body.variantKey, 'hello');
  t.equal(source.stats().cached, 1, 'the bytes of the deleted object are dropped');
});

t.test('invalid content: the last good state is kept and the rejection is located in /meta/snapshots', async (t) => {
  const { s3, store, url } = await serveObject(t);
  const good = await variant(url);

  await s3.put('flags', 'features.yml', badYaml);
  await store.refresh();
  const served = await variant(url);
  t.equal(served.body.variantKey, 'hello', 'last good still served');
  t.equal(served.revision, good.revision);
  const [syntax] = (await snapshots(url)).references;
  t.match(syntax.lastRejected, { revision: { id: /^[0-9a-f]{64}$/ }, problems: [{ severity: 'error', rule: 'yaml.syntax', file: 'features.yml', line: Number, column: Number }] });
  t.ok(syntax.lastRejected.problems[0].line >= 6, 'located at or after the mistake');
  t.not(syntax.lastRejected.revision.id, good.revision);

  await s3.put('flags', 'features.yml', broken);
  await store.refresh();
  const [semantic] = (await snapshots(url)).references;
  t.match(semantic.lastRejected.problems, [{ severity: 'error', file: 'features.yml', line: Number, column: Number, message: /nobody-defined-this/ }]);
  t.equal(semantic.lastError, undefined, 'a rejection, not a read error');

  await s3.put('flags', 'features.yml', bonjour);
  await store.refresh();
  const [fixed] = (await snapshots(url)).references;
  t.equal(fixed.lastRejected, undefined);
  t.equal((await variant(url)).body.variantKey, 'bonjour');
});

t.test('bucket unreachable: serving continues, /ready turns 503 after max staleness, recovers when it is back', async (t) => {
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const { s3, store, url } = await serveObject(t, { maxStalenessMs: 5 * 60_000, now: () => new Date(clock) });
  t.equal((await fetch(`${url}/ready`)).status, 200);

  await s3.stop();
  t.notOk(s3.running);
  clock += 3 * 60_000;
  await store.refresh();
  const [status] = (await snapshots(url)).references;
  t.match(status.lastError.message, new RegExp(`unreachable 127\\.0\\.0\\.1:${s3.port} \\((ECONNREFUSED|ECONNRESET)\\) while listing s3://flags/`));
  t.equal((await fetch(`${url}/ready`)).status, 200, 'younger than max_staleness: still ready');
  t.equal(store.pollState().consecutiveFailures, 1, 'the poll counts as failed (polling backs off)');

  clock += 3 * 60_000;
  const stale = await fetch(`${url}/ready`).then(json);
  t.equal(stale.status, 503);
  t.match(stale.body.message, /reference "object" has not been confirmed by the source for 6m0s \(limit 5m0s\): the state backend could not be read \(lastError in \/meta\/snapshots\)$/);
  t.notMatch(stale.body.message, /127\.0\.0\.1/, '/ready is public: no host or port');
  const served = await variant(url);
  t.equal(served.status, 200, 'serving continues');
  t.equal(served.body.variantKey, 'hello');

  await s3.restart();
  await store.refresh();
  t.equal((await fetch(`${url}/ready`)).status, 200, 'ready again after a good poll');
  t.equal((await snapshots(url)).references[0].lastError, undefined);
});

t.test('wrong credentials', async (t) => {
  t.test('at start: start fails with a clear message (no snapshot to fall back on)', async (t) => {
    useAwsEnv(t, { AWS_ACCESS_KEY_ID: 'NOT-S3RVER' });
    const s3 = await startS3Server(t);
    await s3.put('flags', 'features.yml', hello);
    const provider = createS3Provider({ bucket: 'flags', endpoint: s3.endpoint });
    const store = createSnapshotStore({ ...STORE_DEFAULTS, source: createObjectSource({ ...STATE_LIMITS, provider, description: provider.describe() }), defaultReference: OBJECT_REFERENCE, pollIntervalMs: 3_600_000 });
    const err = await store.start().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    t.match(err?.message, /^credentials refused by s3:\/\/flags\/ at 127\.0\.0\.1:\d+ \(InvalidAccessKeyId, HTTP 403\): check the AWS credentials/);
    t.notMatch(err?.message, /NOT-S3RVER|S3RVER/, 'no credential in the message');
  });

  t.test('while running (a rotated role key the server refuses): the error is visible and serving continues', async (t) => {
    const creds = await startCredentialServer(t);
    // Only the container-credentials endpoint: the SDK's default chain finds it there.
    useAwsEnv(t, { AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined, AWS_CONTAINER_CREDENTIALS_FULL_URI: creds.uri });
    const { store, url } = await serveObject(t);
    t.ok(creds.served > 0, 'credentials came from the default chain');
    const good = await variant(url);

    creds.setAccessKeyId('REVOKED');
    // The SDK refreshes expiring credentials in the background: the refused key shows up within a few polls.
    let status: any;
    for (let i = 0; i < 5 && status?.lastError === undefined; i++) {
      await store.refresh();
      [status] = (await snapshots(url)).references;
    }
    t.match(status.lastError?.message, /^credentials refused by s3:\/\/flags\/ at 127\.0\.0\.1:\d+ \(InvalidAccessKeyId, HTTP 403\)/);
    t.notMatch(status.lastError?.message, /REVOKED|test-session-token/, 'no credential in the message');
    const served = await variant(url);
    t.equal(served.status, 200, 'serving continues');
    t.equal(served.revision, good.revision);
  });
});

t.test('a bucket holding two environments: each prefix is its own state', async (t) => {
  const s3 = await startS3Server(t);
  await s3.put('flags', 'production/features.yml', broken); // shares the `prod` characters, not the folder
  await s3.put('flags', 'staging/features.yml', bonjour);
  const prod = await serveObject(t, { s3, prefix: 'prod', objects: { 'prod/features.yml': hello, 'prod/other.features.yml': otherNamespace } });
  const staging = await serveObject(t, { s3, prefix: '/staging/', objects: {} });
  t.match(prod.description, /^s3:\/\/flags\/prod\/ at /);
  t.match(staging.description, /^s3:\/\/flags\/staging\/ at /);

  t.equal((await variant(prod.url)).body.variantKey, 'hello');
  t.equal((await variant(staging.url)).body.variantKey, 'bonjour');
  t.equal((await fetch(`${staging.url}/api/v1/namespaces/other/flags/dark-mode`)).status, 404, 'staging does not see prod/other.features.yml');
  t.equal(prod.source.stats().cached, 2);
  t.equal(staging.source.stats().cached, 1);

  const prodRevision = (await variant(prod.url)).revision;
  await s3.put('flags', 'staging/features.yml', hello);
  await prod.store.refresh();
  await staging.store.refresh();
  t.equal((await variant(staging.url)).body.variantKey, 'hello');
  t.equal((await variant(prod.url)).revision, prodRevision, 'a change under staging/ is not a change of prod/');
});

t.test('an unchanged bucket costs one LIST per poll and no GET', async (t) => {
  const { store, url, provider } = await serveObject(t, { objects: { 'features.yml': hello, 'other.features.yml': otherNamespace, 'README.md': '# not state' } });
  const before = provider.stats();
  const revision = (await variant(url)).revision;
  for (let i = 0; i < 3; i++) await store.refresh();
  const after = provider.stats();
  t.equal(after.listRequests - before.listRequests, 3, 'one LIST per poll');
  t.equal(after.getRequests - before.getRequests, 0, 'no GET');
  t.equal((await variant(url)).revision, revision);
  t.equal(before.getRequests, 2, 'objects the index does not select (README.md) are never downloaded');
});

t.test('the poll timer: each poll of an unchanged bucket is one LIST', async (t) => {
  const { store, provider } = await serveObject(t, { pollInterval: '20ms' });
  const before = provider.stats();
  // Wait for three timer-driven polls (bounded: no assertion on how long they take).
  for (let i = 0; i < 500 && provider.stats().listRequests - before.listRequests < 3; i++) await new Promise((r) => setTimeout(r, 10));
  await store.settled();
  const after = provider.stats();
  t.ok(after.listRequests - before.listRequests >= 3, 'the timer polls');
  t.equal(after.getRequests, before.getRequests, 'no GET');
  t.equal(store.pollState().consecutiveFailures, 0);
});

t.test('the index file at the prefix root selects the state files', async (t) => {
  const index = ['version: "1.0"', 'include:', '  - "*.features.yml"', ''].join('\n');
  const { url, provider } = await serveObject(t, {
    prefix: 'env',
    objects: { 'env/.flipt.yml': index, 'env/a.features.yml': hello, 'env/ignored.yml': broken },
  });
  t.equal((await variant(url)).body.variantKey, 'hello', 'ignored.yml (invalid) is not part of the state');
  t.equal(provider.stats().getRequests, 2, 'the index and the one file it selects');
});

t.test('an object replaced between listing and download fails the build, never mixing versions', async (t) => {
  const s3 = await startS3Server(t);
  await s3.put('flags', 'features.yml', hello);
  const provider = createS3Provider({ bucket: 'flags', endpoint: s3.endpoint });
  const source = createObjectSource({ ...STATE_LIMITS, provider, description: provider.describe() });
  t.teardown(() => source.close?.());
  const v1 = (await source.refs()).get(OBJECT_REFERENCE)!;
  await s3.put('flags', 'features.yml', bonjour);
  await t.rejects(source.files(v1), { name: 'ObjectStoreError', kind: 'changed', message: /s3:\/\/flags\/features\.yml changed after it was listed/ });

  // Through the store: the failed build is an error (retried), not a rejected revision.
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source, defaultReference: OBJECT_REFERENCE, pollIntervalMs: 3_600_000, logger: pino({ level: 'silent' }) });
  t.teardown(() => store.close());
  await store.start();
  const v2 = store.get()!;
  t.equal(v2.namespaces.get('default')?.flags.get('greeting')?.defaultVariant?.key, 'bonjour');
  t.not(v2.revision, v1.id);
});

t.test('listings of more than one page are read whole', async (t) => {
  const s3 = await startS3Server(t);
  for (let i = 0; i < 5; i++) await s3.put('flags', `p/f${i}.yml`, otherNamespace.replace('dark-mode', `flag-${i}`).replace('namespace: other', `namespace: ns${i}`));
  const provider = createS3Provider({ bucket: 'flags', prefix: 'p', endpoint: s3.endpoint, pageSize: 2 });
  t.teardown(() => provider.close?.());
  const listed = await provider.list();
  t.same(
    listed.map((e) => e.key),
    ['f0.yml', 'f1.yml', 'f2.yml', 'f3.yml', 'f4.yml'],
  );
  t.equal(provider.stats().listRequests, 3, 'three pages of two keys');
  t.match(listed[0], { etag: /^[0-9a-f]{32}$/, size: Number, lastModified: String });
});

t.test('a missing bucket is reported by name', async (t) => {
  const s3 = await startS3Server(t);
  const provider = createS3Provider({ bucket: 'no-such-bucket', endpoint: s3.endpoint });
  t.teardown(() => provider.close?.());
  await t.rejects(provider.list(), { kind: 'no-bucket', message: /^bucket "no-such-bucket" does not exist \(s3:\/\/no-such-bucket\/ at 127\.0\.0\.1:\d+\)$/ });
});

t.test('test support: stop() makes the server unreachable, restart() brings back the same objects', async (t) => {
  const s3 = await startS3Server(t, { buckets: ['flags', 'other-bucket'] });
  await s3.put('other-bucket', 'x.yml', 'x');
  const provider = createS3Provider({ bucket: 'other-bucket', endpoint: s3.endpoint, maxAttempts: 1 });
  t.teardown(() => provider.close?.());
  t.same((await provider.list()).map((e) => e.key), ['x.yml']);
  await s3.stop();
  // ECONNRESET when the SDK reuses a kept-alive connection of the dead server, ECONNREFUSED otherwise.
  await t.rejects(provider.list(), { kind: 'unreachable', message: /^unreachable 127\.0\.0\.1:\d+ \((ECONNREFUSED|ECONNRESET)\) while listing s3:\/\/other-bucket\/$/ });
  await s3.restart();
  t.same((await provider.list()).map((e) => e.key), ['x.yml']);
});

t.test('an empty prefix is an empty state', async (t) => {
  const { url, provider } = await serveObject(t, { prefix: 'nothing-here', objects: {} });
  const flags = await fetch(`${url}/api/v1/namespaces/default/flags`).then(json);
  t.equal(flags.status, 200);
  t.same(flags.body.flags, []);
  t.equal(provider.stats().getRequests, 0);
});

t.test('vexil serve with storage.type object: serves the bucket; unusable settings refused at start', async (t) => {
  const s3 = await startS3Server(t);
  await s3.put('flags', 'prod/features.yml', hello);
  const env = {
    VEXIL_SERVER_HTTP_PORT: '0',
    VEXIL_LOG_LEVEL: 'info',
    VEXIL_STORAGE_TYPE: 'object',
    VEXIL_STORAGE_OBJECT_TYPE: 's3',
    VEXIL_STORAGE_OBJECT_S3_BUCKET: 'flags',
    VEXIL_STORAGE_OBJECT_S3_PREFIX: 'prod',
    VEXIL_STORAGE_OBJECT_S3_ENDPOINT: s3.endpoint,
  };
  const { child, listening } = await serveCli(t, ['serve'], { env });
  t.equal(listening.storage, 'object');
  const url = String(listening.url);
  const served = await variant(url);
  t.equal(served.status, 200);
  t.equal(served.body.variantKey, 'hello');
  t.match(served.revision, /^[0-9a-f]{64}$/);
  t.equal((await fetch(`${url}/meta/info`).then(json)).body.storage.type, 'object');
  child.kill('SIGTERM');
  t.equal(await new Promise((r) => child.on('close', r)), 0);

  const noBucket = await runCli(['serve'], { env: { ...env, VEXIL_STORAGE_OBJECT_S3_BUCKET: 'missing-bucket' } });
  t.equal(noBucket.code, 1);
  t.match(noBucket.stderr + noBucket.stdout, /bucket "missing-bucket" does not exist/);
  const azure = await runCli(['serve'], { env: { ...env, VEXIL_STORAGE_OBJECT_TYPE: 'azblob' } });
  t.equal(azure.code, 1);
  t.match(azure.stderr, /storage\.object\.type: "azblob" is not supported by this version/);
  const untyped = await runCli(['serve'], { env: { VEXIL_STORAGE_TYPE: 'object' } });
  t.equal(untyped.code, 1);
  t.match(untyped.stderr, /storage\.object\.type: object storage type must be specified/);
});
