/**
 * The object-store backend's guarantees as ONE table of cases, run against every backend in
 * test/support/object-backends.ts by object-table-<backend>.test.ts (one file per backend, so the
 * three servers' runs proceed in parallel): s3 (s3rver), azblob (Azurite) and googlecloud (the GCS
 * mapping, against s3rver). Each case goes config (VEXIL_* + the backend's credential variables) → provider
 * and object source → snapshot store → vexil's HTTP API, or drives a provider directly. Requests
 * are counted by the providers (stats()).
 */
import { pino } from 'pino';
import type { Test } from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { startHttpServer } from '../../src/server/listen.js';
import { createObjectSource, OBJECT_REFERENCE, type ObjectSource } from '../../src/sources/object/source.js';
import { objectStorageFromConfig } from '../../src/sources/object/from-config.js';
import { createSnapshotStore, type ManagedSnapshotStore } from '../../src/store/snapshot-store.js';
import { runCli, serveCli } from '../cli/run-cli.js';
import { gitFixture, greeting } from '../support/git-fixture.js';
import type { Teardown } from '../support/git-repo.js';
import { useEnv, type BackendServer, type CountingProvider, type ObjectBackend } from '../support/object-backends.js';
import { STATE_LIMITS, STORE_DEFAULTS } from '../support/config-defaults.js';

const hello = gitFixture('hello.yml');
const bonjour = gitFixture('bonjour.yml');
const broken = gitFixture('broken.yml');
const otherNamespace = ['version: "1.4"', 'namespace: other', 'flags:', '  - key: dark-mode', '    name: Dark mode', '    type: BOOLEAN_FLAG_TYPE', '    enabled: true', ''].join('\n');
/** An unclosed flow sequence on line 6. */
const badYaml = ['version: "1.4"', 'namespace: default', 'flags:', '  - key: greeting', '    name: Greeting', '    enabled: [yes', ''].join('\n');

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

async function json(res: Response) {
  return { status: res.status, revision: res.headers.get('x-vexil-revision'), body: (await res.json()) as any };
}

interface Served {
  store: ManagedSnapshotStore;
  source: ObjectSource;
  provider: CountingProvider;
  url: string;
  description: string;
}

interface ServeOptions {
  prefix?: string;
  maxStalenessMs?: number;
  now?: () => Date;
  /** Objects written before the store starts (key → content). */
  objects?: Record<string, string>;
  /** The backend's poll_interval (default 1h: tests poll with store.refresh()). */
  pollInterval?: string;
  /** More VEXIL_* settings. */
  env?: Record<string, string>;
}

/** storage.type object from config → store → HTTP server, all closed at teardown. */
async function serveObject(t: Teardown, server: BackendServer, opts: ServeOptions = {}): Promise<Served> {
  for (const [key, body] of Object.entries(opts.objects ?? { 'features.yml': hello })) await server.put(key, body);
  const config = loadConfig({
    env: {
      ...server.configEnv({ ...(opts.prefix !== undefined ? { prefix: opts.prefix } : {}), ...(opts.pollInterval !== undefined ? { pollInterval: opts.pollInterval } : {}) }),
      ...opts.env,
    },
  });
  const storage = objectStorageFromConfig(config, { baseDir: process.cwd(), dataDir: process.cwd() });
  const store = createSnapshotStore({
    ...STORE_DEFAULTS,
    source: storage.source,
    logger: pino({ level: 'silent' }),
    ...storage.store,
    maxStateSize: config.storage.max_state_size,
    ...(opts.maxStalenessMs !== undefined ? { maxStalenessMs: opts.maxStalenessMs } : {}),
    ...(opts.now !== undefined ? { now: opts.now } : {}),
  });
  t.teardown(() => store.close());
  await store.start();
  const http = await startHttpServer({
    store,
    config,
    logger: pino({ level: 'silent' }),
    storageType: 'object',
    version: 'test',
    host: '127.0.0.1',
    port: 0,
  });
  t.teardown(() => http.close());
  return { store, source: storage.source, provider: storage.source.provider as CountingProvider, url: http.url, description: storage.description };
}

const variant = (url: string) =>
  fetch(`${url}/evaluate/v1/variant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: 'e1', context: {} }),
  }).then(json);

const snapshots = async (url: string) => (await fetch(`${url}/meta/snapshots`).then(json)).body;

/** `<scheme>://<bucket>/<prefix> at 127.0.0.1:PORT[/account]` */
const at = (server: BackendServer, location: string) => new RegExp(`^${esc(`${server.scheme}://${location}`)} at 127\\.0\\.0\\.1:${server.port}(/\\w+)?$`);

interface Case {
  readonly name: string;
  run(t: Test, server: BackendServer): Promise<void>;
}

const CASES: Case[] = [
  {
    name: 'serves the objects under the prefix; a new object is served after the next poll',
    async run(t, server) {
      const { store, url, description } = await serveObject(t, server);
      t.match(description, at(server, 'flags/'));
      const first = await variant(url);
      t.equal(first.status, 200);
      t.equal(first.body.variantKey, 'hello');
      t.match(first.revision, /^[0-9a-f]{64}$/, 'the revision is a hash of the listing');
      const snaps = await snapshots(url);
      t.equal(snaps.defaultReference, OBJECT_REFERENCE);
      t.match(snaps.references, [{ reference: 'object', default: true, revision: { id: first.revision, meta: { at: String } } }]);

      await server.put('other.features.yml', otherNamespace);
      t.equal((await fetch(`${url}/api/v1/namespaces/other/flags/dark-mode`)).status, 404, 'not polled yet');
      await store.refresh();
      const after = await fetch(`${url}/api/v1/namespaces/other/flags/dark-mode`).then(json);
      t.equal(after.status, 200);
      t.equal(after.body.key, 'dark-mode');
      t.not(after.revision, first.revision, 'a new listing, a new revision');
    },
  },
  {
    name: 'a changed object is picked up, and only it is downloaded and parsed again',
    async run(t, server) {
      const { store, url, provider, source } = await serveObject(t, server, { objects: { 'features.yml': hello, 'other.features.yml': otherNamespace } });
      const listed = provider.stats();
      t.equal(listed.getRequests, 2, 'start downloads each state file once');
      const parsed = store.parseCacheStats();

      await server.put('features.yml', bonjour);
      await store.refresh();
      t.equal((await variant(url)).body.variantKey, 'bonjour');
      const after = provider.stats();
      t.equal(after.listRequests - listed.listRequests, 1, 'one listing');
      t.equal(after.getRequests - listed.getRequests, 1, 'one download: the changed object');
      t.equal(store.parseCacheStats().misses - parsed.misses, 1, 'one file parsed again');
      t.equal(source.stats().cached, 2, 'the bytes held are those of the current objects');
      t.equal((await fetch(`${url}/api/v1/namespaces/other/flags/dark-mode`)).status, 200, 'the unchanged object is still served');
    },
  },
  {
    name: 'an unchanged bucket costs one listing per poll and no download',
    async run(t, server) {
      const { store, url, provider } = await serveObject(t, server, { objects: { 'features.yml': hello, 'other.features.yml': otherNamespace, 'README.md': '# not state' } });
      const before = provider.stats();
      const revision = (await variant(url)).revision;
      for (let i = 0; i < 3; i++) await store.refresh();
      const after = provider.stats();
      t.equal(after.listRequests - before.listRequests, 3, 'one listing per poll');
      t.equal(after.getRequests - before.getRequests, 0, 'no download');
      t.equal((await variant(url)).revision, revision);
      t.equal(before.getRequests, 2, 'objects the index does not select (README.md) are never downloaded');
    },
  },
  {
    name: 'the poll timer: each poll of an unchanged bucket is one listing',
    async run(t, server) {
      const { store, provider } = await serveObject(t, server, { pollInterval: '20ms' });
      const before = provider.stats();
      // Wait for three timer-driven polls (bounded: no assertion on how long they take).
      for (let i = 0; i < 1000 && provider.stats().listRequests - before.listRequests < 3; i++) await new Promise((r) => setTimeout(r, 10));
      await store.settled();
      const after = provider.stats();
      t.ok(after.listRequests - before.listRequests >= 3, 'the timer polls');
      t.equal(after.getRequests, before.getRequests, 'no download');
      t.equal(store.pollState().consecutiveFailures, 0);
    },
  },
  {
    name: 'a deleted object is gone after the next poll',
    async run(t, server) {
      const { store, url, source } = await serveObject(t, server, { objects: { 'features.yml': hello, 'other.features.yml': otherNamespace } });
      t.equal((await fetch(`${url}/api/v1/namespaces/other/flags/dark-mode`)).status, 200);
      await server.remove('other.features.yml');
      await store.refresh();
      t.equal((await fetch(`${url}/api/v1/namespaces/other/flags/dark-mode`)).status, 404);
      t.equal((await variant(url)).body.variantKey, 'hello');
      t.equal(source.stats().cached, 1, 'the bytes of the deleted object are dropped');
    },
  },
  {
    name: 'invalid content: the last good state is kept and the rejection is located in /meta/snapshots',
    async run(t, server) {
      const { store, url } = await serveObject(t, server);
      const good = await variant(url);

      await server.put('features.yml', badYaml);
      await store.refresh();
      const served = await variant(url);
      t.equal(served.body.variantKey, 'hello', 'last good still served');
      t.equal(served.revision, good.revision);
      const [syntax] = (await snapshots(url)).references;
      t.match(syntax.lastRejected, { revision: { id: /^[0-9a-f]{64}$/ }, problems: [{ severity: 'error', rule: 'yaml.syntax', file: 'features.yml', line: Number, column: Number }] });
      t.ok(syntax.lastRejected.problems[0].line >= 6, 'located at or after the mistake');

      await server.put('features.yml', broken);
      await store.refresh();
      const [semantic] = (await snapshots(url)).references;
      t.match(semantic.lastRejected.problems, [{ severity: 'error', file: 'features.yml', line: Number, column: Number, message: /nobody-defined-this/ }]);
      t.equal(semantic.lastError, undefined, 'a rejection, not a read error');

      await server.put('features.yml', bonjour);
      await store.refresh();
      const [fixed] = (await snapshots(url)).references;
      t.equal(fixed.lastRejected, undefined);
      t.equal((await variant(url)).body.variantKey, 'bonjour');
    },
  },
  {
    name: 'outage: serving continues, /ready turns 503 with a generic message after max staleness, recovers when it is back',
    async run(t, server) {
      let clock = Date.parse('2026-01-01T00:00:00Z');
      const { store, url } = await serveObject(t, server, { maxStalenessMs: 5 * 60_000, now: () => new Date(clock) });
      t.equal((await fetch(`${url}/ready`)).status, 200);

      await server.stop();
      t.notOk(server.running);
      clock += 3 * 60_000;
      await store.refresh();
      const [status] = (await snapshots(url)).references;
      t.match(status.lastError.message, new RegExp(`^unreachable 127\\.0\\.0\\.1:${server.port}\\S* \\((ECONNREFUSED|ECONNRESET)\\) while listing ${esc(server.scheme)}://flags/`));
      t.equal((await fetch(`${url}/ready`)).status, 200, 'younger than max_staleness: still ready');
      t.equal(store.pollState().consecutiveFailures, 1, 'the poll counts as failed (polling backs off)');

      clock += 3 * 60_000;
      const stale = await fetch(`${url}/ready`).then(json);
      t.equal(stale.status, 503);
      t.match(stale.body.message, /reference "object" has not been confirmed by the source for 6m0s \(limit 5m0s\): the state backend could not be read \(lastError in \/meta\/snapshots\)$/);
      t.notMatch(stale.body.message, /127\.0\.0\.1|flags/, '/ready is public: no host, port or bucket');
      const served = await variant(url);
      t.equal(served.status, 200, 'serving continues');
      t.equal(served.body.variantKey, 'hello');

      await server.restart();
      await store.refresh();
      t.equal((await fetch(`${url}/ready`)).status, 200, 'ready again after a good poll');
      t.equal((await snapshots(url)).references[0].lastError, undefined);
      t.equal((await variant(url)).body.variantKey, 'hello');
    },
  },
  {
    name: 'refused credentials at start: start fails with a clear message holding no credential',
    async run(t, server) {
      await server.put('features.yml', hello);
      const wrong = server.credentialEnv({ wrong: true });
      useEnv(t, wrong);
      const storage = objectStorageFromConfig(loadConfig({ env: server.configEnv() }), { baseDir: process.cwd(), dataDir: process.cwd() });
      const store = createSnapshotStore({ ...STORE_DEFAULTS, source: storage.source, ...storage.store, logger: pino({ level: 'silent' }) });
      t.teardown(() => store.close());
      const err = await store.start().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      t.match(err?.message, new RegExp(`^credentials refused by ${esc(server.scheme)}://flags/ at 127\\.0\\.0\\.1:${server.port}\\S* \\(\\w+, HTTP 403\\): check `));
      // Key ids and secrets (an account name is not one: it is part of the endpoint).
      for (const [name, value] of Object.entries(wrong)) if (/KEY|SECRET|ACCESS_ID/.test(name)) t.notOk(err?.message.includes(value), `no ${name} in the message`);
    },
  },
  {
    name: 'a bucket holding two environments: each prefix is its own state',
    async run(t, server) {
      await server.put('production/features.yml', broken); // shares the `prod` characters, not the folder
      await server.put('staging/features.yml', bonjour);
      const prod = await serveObject(t, server, { prefix: 'prod', objects: { 'prod/features.yml': hello, 'prod/other.features.yml': otherNamespace } });
      const staging = await serveObject(t, server, { prefix: '/staging/', objects: {} });
      t.match(prod.description, at(server, 'flags/prod/'));
      t.match(staging.description, at(server, 'flags/staging/'));

      t.equal((await variant(prod.url)).body.variantKey, 'hello');
      t.equal((await variant(staging.url)).body.variantKey, 'bonjour');
      t.equal((await fetch(`${staging.url}/api/v1/namespaces/other/flags/dark-mode`)).status, 404, 'staging does not see prod/other.features.yml');
      t.equal(prod.source.stats().cached, 2);
      t.equal(staging.source.stats().cached, 1);

      const prodRevision = (await variant(prod.url)).revision;
      await server.put('staging/features.yml', hello);
      await prod.store.refresh();
      await staging.store.refresh();
      t.equal((await variant(staging.url)).body.variantKey, 'hello');
      t.equal((await variant(prod.url)).revision, prodRevision, 'a change under staging/ is not a change of prod/');
    },
  },
  {
    name: 'the index file at the prefix root selects the state files',
    async run(t, server) {
      const index = ['version: "1.0"', 'include:', '  - "*.features.yml"', ''].join('\n');
      const { url, provider } = await serveObject(t, server, { prefix: 'env', objects: { 'env/.flipt.yml': index, 'env/a.features.yml': hello, 'env/ignored.yml': broken } });
      t.equal((await variant(url)).body.variantKey, 'hello', 'ignored.yml (invalid) is not part of the state');
      t.equal(provider.stats().getRequests, 2, 'the index and the one file it selects');
    },
  },
  {
    name: 'sizes before bytes: state files adding up to more than storage.max_state_size are refused from the listing, not downloaded',
    async run(t, server) {
      const { store, provider } = await serveObject(t, server, { env: { VEXIL_STORAGE_MAX_STATE_SIZE: '2048' } });
      t.equal(greeting(store.get()), 'hello');
      const gets = provider.stats().getRequests;
      await server.put('more.features.yml', `${bonjour.replace('namespace: default', 'namespace: other')}\n# ${'x'.repeat(2000)}\n`);
      await store.refresh();
      const [status] = store.status();
      t.match(status?.lastRejected?.problems, [
        { severity: 'error', rule: 'state.too-large', file: 'more.features.yml', message: /add up to more than 2048 bytes: more\.features\.yml \(\d+ bytes\) brings them to \d+ bytes/ },
      ]);
      t.equal(provider.stats().getRequests, gets, 'nothing was downloaded');
      t.equal(greeting(store.get()), 'hello', 'the last good state keeps serving');
    },
  },
  {
    name: 'an object replaced between listing and download fails that build, never mixing versions',
    async run(t, server) {
      await server.put('features.yml', hello);
      const provider = server.provider();
      const source = createObjectSource({ ...STATE_LIMITS, provider, description: provider.describe() });
      t.teardown(() => source.close?.());
      const v1 = (await source.refs()).get(OBJECT_REFERENCE)!;
      await server.put('features.yml', bonjour);
      await t.rejects(source.files(v1), { name: 'ObjectStoreError', kind: 'changed', message: new RegExp(`^${esc(server.scheme)}://flags/features\\.yml changed after it was listed`) });

      // Through the store: the failed build is an error (retried), not a rejected revision.
      const store = createSnapshotStore({ ...STORE_DEFAULTS, source, defaultReference: OBJECT_REFERENCE, pollIntervalMs: 3_600_000, logger: pino({ level: 'silent' }) });
      t.teardown(() => store.close());
      await store.start();
      t.equal(greeting(store.get()), 'bonjour');
      t.not(store.get()!.revision, v1.id);
    },
  },
  {
    name: 'listings of more than one page are read whole',
    async run(t, server) {
      for (let i = 0; i < 5; i++) await server.put(`p/f${i}.yml`, otherNamespace.replace('dark-mode', `flag-${i}`).replace('namespace: other', `namespace: ns${i}`));
      const provider = server.provider({ prefix: 'p', pageSize: 2 });
      t.teardown(() => provider.close?.());
      const listed = await provider.list();
      t.same(
        listed.map((e) => e.key),
        ['f0.yml', 'f1.yml', 'f2.yml', 'f3.yml', 'f4.yml'],
      );
      t.equal(provider.stats().listRequests, 3, 'three pages of two keys');
      t.match(listed[0], { etag: /^[^"]+$/, size: Number, lastModified: String });
    },
  },
  {
    name: 'a missing bucket is reported by name',
    async run(t, server) {
      const provider = server.provider({ bucket: 'no-such-bucket' });
      t.teardown(() => provider.close?.());
      await t.rejects(provider.list(), { kind: 'no-bucket', message: new RegExp(`^(bucket|container) "no-such-bucket" does not exist \\(${esc(server.scheme)}://no-such-bucket/ at 127\\.0\\.0\\.1:${server.port}\\S*\\)$`) });
    },
  },
  {
    name: 'test support: stop() makes the server unreachable, restart() brings back the same objects',
    async run(t, server) {
      await server.put('x.yml', 'x');
      const provider = server.provider({ maxAttempts: 1 });
      t.teardown(() => provider.close?.());
      t.same((await provider.list()).map((e) => e.key), ['x.yml']);
      await server.stop();
      // ECONNRESET when a kept-alive connection of the dead server is reused, ECONNREFUSED otherwise.
      await t.rejects(provider.list(), { kind: 'unreachable', message: new RegExp(`^unreachable 127\\.0\\.0\\.1:\\d+\\S* \\((ECONNREFUSED|ECONNRESET)\\) while listing ${esc(server.scheme)}://flags/$`) });
      await server.restart();
      t.same((await provider.list()).map((e) => e.key), ['x.yml']);
    },
  },
  {
    name: 'an empty prefix is an empty state',
    async run(t, server) {
      const { url, provider } = await serveObject(t, server, { prefix: 'nothing-here', objects: {} });
      const flags = await fetch(`${url}/api/v1/namespaces/default/flags`).then(json);
      t.equal(flags.status, 200);
      t.same(flags.body.flags, []);
      t.equal(provider.stats().getRequests, 0);
    },
  },
  {
    name: 'vexil serve: serves the bucket with the credential variables; a missing bucket is refused at start',
    async run(t, server) {
      await server.put('prod/features.yml', hello);
      const env = { VEXIL_SERVER_HTTP_PORT: '0', VEXIL_LOG_LEVEL: 'info', ...server.configEnv({ prefix: 'prod' }), ...server.credentialEnv() };
      const { child, listening, logs } = await serveCli(t, ['serve'], { env });
      t.equal(listening.storage, 'object');
      const url = String(listening.url);
      const served = await variant(url);
      t.equal(served.status, 200);
      t.equal(served.body.variantKey, 'hello');
      t.match(served.revision, /^[0-9a-f]{64}$/);
      await fetch(`${url}/meta/refresh`, { method: 'POST' });
      child.kill('SIGTERM');
      t.equal(await new Promise((r) => child.on('close', r)), 0);
      const logged = JSON.stringify(logs);
      for (const [name, value] of Object.entries(server.credentialEnv())) if (/KEY|SECRET/.test(name)) t.notOk(logged.includes(value), `${name} is not in the logs`);

      const missing = await runCli(['serve'], { env: { ...env, ...server.configEnv({ prefix: 'prod', bucket: 'missing-bucket' }) } });
      t.equal(missing.code, 1);
      t.match(missing.stderr + missing.stdout, /(bucket|container) "missing-bucket" does not exist/);
    },
  },
];

/** Every case of the table against `backend`, each with a server of its own. */
export async function runObjectTable(t: Test, backend: ObjectBackend): Promise<void> {
  for (const c of CASES) {
    await t.test(c.name, async (t) => {
      const server = await backend.start(t);
      await c.run(t, server);
    });
  }
}
