/**
 * The OCI backend end to end: bundles pushed to a real CNCF distribution registry (Debian
 * `docker-registry`) on loopback, served through the snapshot store and vexil's HTTP API. A
 * counting proxy in front of the registry shows the requests made and plays "registry down".
 *
 * Without docker-registry the registry tests skip with the reason; under CI (any truthy CI) they fail instead.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { createHash } from 'node:crypto';
import t from 'tap';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';
import { startHttpServer } from '../../src/server/listen.js';
import { createOciSource } from '../../src/sources/oci/source.js';
import { openBundleStore } from '../../src/sources/oci/bundle-store.js';
import {
  EMPTY_JSON_DIGEST,
  FLIPT_ARTIFACT_TYPE,
  FLIPT_LAYER_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
  buildBundle,
  sha256Digest,
} from '../../src/sources/oci/bundle-format.js';
import { ociStorageFromConfig } from '../../src/sources/oci/from-config.js';
import { parseOciReference } from '../../src/sources/oci/reference.js';
import { createRegistryClient } from '../../src/sources/oci/registry-client.js';
import type { OciReference, RegistryClient, RegistryCredentials } from '../../src/sources/oci/types.js';
import { createSnapshotStore } from '../../src/store/snapshot-store.js';
import { gitFixture } from '../support/git-fixture.js';
import type { Teardown } from '../support/git-repo.js';
import { REGISTRY_PASSWORD, registryUnavailableReason, startRegistry, startRegistryProxy, type RegistryProxy, type TestRegistry } from '../support/oci-registry.js';
import { reportMissing } from '../support/requirements.js';
import { STATE_LIMITS, STORE_DEFAULTS } from '../support/config-defaults.js';
import { ONE_REFERENCE } from '../../src/sources/storage.js';

const enc = (s: string) => new TextEncoder().encode(s);
const CREATED = '2026-11-26T04:00:00Z';

function tempDir(t: Teardown, prefix = 'vexil-oci-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function json(res: Response) {
  return { status: res.status, revision: res.headers.get('x-vexil-revision'), body: (await res.json()) as any };
}

const variant = (url: string, flagKey = 'greeting', namespaceKey = 'default') =>
  fetch(`${url}/evaluate/v1/variant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespaceKey, flagKey, entityId: 'e1', context: {} }),
  }).then(json);

/** A pino logger writing into an array (to check that no secret reaches the logs). */
function capturingLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { logger: pino({ level: 'debug' }, stream) as Logger, lines };
}

t.test('storage.oci config: errors name the keys; defaults and paths', async (t) => {
  const ctx = { baseDir: '/etc/vexil', dataDir: '/var/lib/vexil' };
  const cfg = (env: Record<string, string>) => loadConfig({ env: { VEXIL_STORAGE_TYPE: 'oci', ...env } });
  const missing = t.throws(() => ociStorageFromConfig(cfg({}), ctx)) as unknown as ConfigError;
  t.ok(missing instanceof ConfigError);
  t.match(missing.problems, [{ path: 'storage.oci.repository', message: /is required/ }]);
  const bad = t.throws(() => ociStorageFromConfig(cfg({ VEXIL_STORAGE_OCI_REPOSITORY: 'flags:v1' }), ctx)) as unknown as ConfigError;
  t.match(bad.problems, [{ path: 'storage.oci.repository', message: /no registry host/ }]);
  const both = t.throws(() =>
    ociStorageFromConfig(
      cfg({
        VEXIL_STORAGE_OCI_REPOSITORY: 'ghcr.io/org/flags:v1',
        VEXIL_STORAGE_OCI_AUTHENTICATION_USERNAME: 'bob',
        VEXIL_STORAGE_OCI_AUTHENTICATION_PASSWORD: 'pw-secret',
        VEXIL_STORAGE_OCI_AUTHENTICATION_ACCESS_TOKEN_PATH: 'token',
      }),
      ctx,
    ),
  ) as unknown as ConfigError;
  t.match(both.problems, [{ path: 'storage.oci.authentication.password', message: /not both/ }]);
  t.notMatch(both.message, /pw-secret/);

  const storage = ociStorageFromConfig(
    cfg({
      VEXIL_STORAGE_OCI_REPOSITORY: 'https://ghcr.io/org/flags:v1',
      VEXIL_STORAGE_OCI_AUTHENTICATION_USERNAME: 'bob',
      VEXIL_STORAGE_OCI_AUTHENTICATION_PASSWORD: 'pw-secret',
    }),
    ctx,
  );
  t.equal(storage.source.kind, 'oci');
  t.equal(storage.description, 'ghcr.io/org/flags:v1');
  t.same(storage.store, { defaultReference: 'v1', pollIntervalMs: 30_000, prebuild: ['v1'], maxStalenessMs: 300_000, ...ONE_REFERENCE });
  const digest = `sha256:${'b'.repeat(64)}`;
  const pinned = ociStorageFromConfig(cfg({ VEXIL_STORAGE_OCI_REPOSITORY: `127.0.0.1:5000/flags@${digest}`, VEXIL_STORAGE_OCI_INSECURE: 'true' }), ctx);
  t.equal(pinned.description, `http://127.0.0.1:5000/flags@${digest}`);
  t.equal(pinned.store.defaultReference, digest, 'a pinned bundle is served under its digest');
});

const unavailable = registryUnavailableReason();
if (unavailable !== undefined) {
  reportMissing(t, 'docker-registry', unavailable);
} else {
  /** Pushes state files as a bundle under ref's tag; returns the manifest digest. */
  async function pushFiles(client: RegistryClient, ref: OciReference, files: Record<string, string>, opts: { manifestVersion?: '1.0' | '1.1'; created?: string } = {}) {
    const b = buildBundle(
      Object.entries(files).map(([path, text]) => ({ path, bytes: enc(text) })),
      { manifestVersion: opts.manifestVersion ?? '1.1', created: opts.created ?? CREATED },
    );
    for (const [digest, bytes] of b.blobs) if (!(await client.hasBlob(ref, digest))) await client.pushBlob(ref, digest, bytes);
    return client.pushManifest(ref, b.manifestBytes, OCI_MANIFEST_MEDIA_TYPE);
  }

  interface ServeOptions {
    registry: TestRegistry;
    credentials?: RegistryCredentials;
    bundlesDir?: string;
    maxStalenessMs?: number;
    now?: () => Date;
    logger?: Logger;
    tag?: string;
    maxFileSize?: number;
  }

  /** Store + HTTP server on the OCI source, talking to the registry through a counting proxy. */
  async function serveOci(t: Teardown, opts: ServeOptions) {
    const proxy: RegistryProxy = await startRegistryProxy(opts.registry.url);
    t.teardown(() => proxy.close());
    const ref = parseOciReference(`http://${proxy.host}/team/flags:${opts.tag ?? 'v1'}`);
    const client = createRegistryClient(opts.credentials !== undefined ? { credentials: opts.credentials } : {});
    const bundlesDir = opts.bundlesDir ?? tempDir(t);
    const source = createOciSource({
      ...STATE_LIMITS,
      reference: ref,
      client,
      store: await openBundleStore(bundlesDir),
      ...(opts.maxFileSize !== undefined ? { maxFileSize: opts.maxFileSize } : {}),
    });
    const logger: Logger = opts.logger ?? pino({ level: 'silent' });
    const store = createSnapshotStore({
      ...STORE_DEFAULTS,
      source,
      logger,
      defaultReference: source.name,
      pollIntervalMs: 3_600_000, // tests poll with refresh()
      ...(opts.maxStalenessMs !== undefined ? { maxStalenessMs: opts.maxStalenessMs } : {}),
      ...(opts.now !== undefined ? { now: opts.now } : {}),
      ...(opts.maxFileSize !== undefined ? { maxFileSize: opts.maxFileSize } : {}),
    });
    return {
      proxy,
      ref,
      store,
      bundlesDir,
      async listen() {
        await store.start();
        t.teardown(() => store.close());
        const config = loadConfig({ env: { VEXIL_STORAGE_TYPE: 'oci', VEXIL_STORAGE_OCI_REPOSITORY: `${proxy.host}/team/flags:v1` } });
        const server = await startHttpServer({ store, config, logger, storageType: 'oci', version: 'test', host: '127.0.0.1', port: 0 });
        t.teardown(() => server.close());
        return server.url;
      },
    };
  }

  t.test('push → served; new content on the same tag → picked up on the next poll, fetching only the changed layer', async (t) => {
    const registry = await startRegistry();
    t.teardown(() => registry.close());
    const pusher = createRegistryClient();
    const remote = parseOciReference(`http://${registry.host}/team/flags:v1`);
    const d1 = await pushFiles(pusher, remote, { 'features.yml': gitFixture('hello.yml'), 'segments.features.yml': gitFixture('segments.yml') });
    const s = await serveOci(t, { registry });
    const url = await s.listen();

    const first = await variant(url);
    t.equal(first.status, 200);
    t.equal(first.body.variantKey, 'hello');
    t.equal(first.revision, d1, 'X-Vexil-Revision is the manifest digest');
    const snaps = await fetch(`${url}/meta/snapshots`).then(json);
    t.match(snaps.body.references, [{ reference: 'v1', revision: { id: d1, meta: { at: CREATED } } }]);

    const d2 = await pushFiles(pusher, remote, { 'features.yml': gitFixture('bonjour.yml'), 'segments.features.yml': gitFixture('segments.yml') }, { created: '2026-11-26T05:00:00Z' });
    t.equal((await variant(url)).revision, d1, 'not polled yet');
    const missesBefore = s.store.parseCacheStats().misses;
    s.proxy.requests.length = 0;
    await s.store.refresh();
    const second = await variant(url);
    t.equal(second.body.variantKey, 'bonjour');
    t.equal(second.revision, d2);
    t.same(
      s.proxy.requests.map((r) => `${r.method} ${r.path.replace(/sha256:[0-9a-f]{64}/, 'DIGEST')}`),
      ['HEAD /v2/team/flags/manifests/v1', 'GET /v2/team/flags/manifests/DIGEST', 'GET /v2/team/flags/blobs/DIGEST'],
      'one HEAD, the manifest by digest, and only the layer the bundle store lacked',
    );
    t.equal(s.store.parseCacheStats().misses - missesBefore, 1, 'only the changed layer is parsed again');
    const bundles = await (await openBundleStore(s.bundlesDir)).list();
    t.same(bundles.map((b) => [b.name, b.digest, b.created]), [[`${s.proxy.host}/team/flags:v1`, d2, '2026-11-26T05:00:00Z']], 'the bundle store names the pulled bundle');
  });

  t.test('an unknown tag at start: start fails naming the reference; an index is refused', async (t) => {
    const registry = await startRegistry();
    t.teardown(() => registry.close());
    const s = await serveOci(t, { registry, tag: 'nope' });
    await t.rejects(s.store.start(), { kind: 'not-found', message: /^http:\/\/127\.0\.0\.1:\d+\/team\/flags:nope: the registry has no such tag$/ });

    const client = createRegistryClient();
    const remote = parseOciReference(`http://${registry.host}/team/flags:v1`);
    const digest = await pushFiles(client, remote, { 'features.yml': gitFixture('hello.yml') });
    const size = (await client.resolve(remote))?.size ?? 0;
    const index = enc(JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: [{ mediaType: OCI_MANIFEST_MEDIA_TYPE, digest, size }] }));
    await client.pushManifest({ ...remote, tag: 'multi' }, index, 'application/vnd.oci.image.index.v1+json');
    const multi = await serveOci(t, { registry, tag: 'multi' });
    await t.rejects(multi.store.start(), { message: /image index .*not a bundle/ });
  });

  t.test('a layer over storage.max_file_size is refused from its declared size, never downloaded', async (t) => {
    const registry = await startRegistry();
    t.teardown(() => registry.close());
    const pusher = createRegistryClient();
    const remote = parseOciReference(`http://${registry.host}/team/flags:v1`);
    const small = gitFixture('hello.yml');
    await pushFiles(pusher, remote, { 'features.yml': small });
    const s = await serveOci(t, { registry, maxFileSize: 4096 });
    const url = await s.listen();
    t.equal((await variant(url)).body.variantKey, 'hello');

    const big = `${small}\n# ${'x'.repeat(8192)}\n`;
    await pushFiles(pusher, remote, { 'features.yml': big }, { created: '2026-11-26T05:00:00Z' });
    s.proxy.requests.length = 0;
    await s.store.refresh();
    t.equal((await variant(url)).body.variantKey, 'hello', 'the last good bundle keeps serving');
    const bigDigest = `sha256:${createHash('sha256').update(big).digest('hex')}`;
    t.notOk(
      s.proxy.requests.some((r) => r.path.endsWith(`/blobs/${bigDigest}`)),
      'the oversized layer was not downloaded',
    );
    const [ref] = (await fetch(`${url}/meta/snapshots`).then(json)).body.references;
    t.match(ref.lastRejected.problems, [{ file: 'features.yml', message: /over the limit of 4096 bytes/ }]);
    const bundles = await (await openBundleStore(s.bundlesDir)).list();
    t.not(bundles[0]?.created, '2026-11-26T05:00:00Z', 'the refused bundle is not tagged locally');
  });

  t.test('an unchanged tag costs one manifest request per poll', async (t) => {
    const registry = await startRegistry();
    t.teardown(() => registry.close());
    await pushFiles(createRegistryClient(), parseOciReference(`http://${registry.host}/team/flags:v1`), { 'features.yml': gitFixture('hello.yml') });
    const s = await serveOci(t, { registry });
    await s.listen();
    s.proxy.requests.length = 0;
    for (let i = 0; i < 3; i++) await s.store.refresh();
    t.same(
      s.proxy.requests.map((r) => `${r.method} ${r.path} ${r.status}`),
      Array(3).fill('HEAD /v2/team/flags/manifests/v1 200'),
    );
  });

  t.test('a bundle with invalid state: last good kept, /meta/snapshots shows the rejection with located errors', async (t) => {
    const registry = await startRegistry();
    t.teardown(() => registry.close());
    const pusher = createRegistryClient();
    const remote = parseOciReference(`http://${registry.host}/team/flags:v1`);
    const good = await pushFiles(pusher, remote, { 'features.yml': gitFixture('hello.yml') });
    const s = await serveOci(t, { registry });
    const url = await s.listen();
    const bad = await pushFiles(pusher, remote, { 'features.yml': gitFixture('broken.yml') }, { created: '2026-11-26T06:00:00Z' });
    await s.store.refresh();

    const served = await variant(url);
    t.equal(served.body.variantKey, 'hello', 'last good still served');
    t.equal(served.revision, good);
    const snaps = await fetch(`${url}/meta/snapshots`).then(json);
    t.match(snaps.body.references[0], {
      reference: 'v1',
      revision: { id: good },
      lastRejected: {
        revision: { id: bad, meta: { at: '2026-11-26T06:00:00Z' } },
        problems: [{ severity: 'error', file: 'features.yml', line: Number, column: Number, rule: String }],
      },
    });
    s.proxy.requests.length = 0;
    await s.store.refresh();
    t.same(s.proxy.requests.map((r) => r.method), ['HEAD'], 'a rejected digest is not pulled again');
  });

  t.test('registry down: serving continues, /ready turns 503 after max_staleness, back when it returns', async (t) => {
    const registry = await startRegistry();
    t.teardown(() => registry.close());
    await pushFiles(createRegistryClient(), parseOciReference(`http://${registry.host}/team/flags:v1`), { 'features.yml': gitFixture('hello.yml') });
    let clock = Date.parse('2026-11-26T00:00:00Z');
    const s = await serveOci(t, { registry, maxStalenessMs: 5 * 60_000, now: () => new Date(clock) });
    const url = await s.listen();
    t.equal((await fetch(`${url}/ready`)).status, 200);

    s.proxy.setDown(true);
    clock += 3 * 60_000;
    await s.store.refresh();
    t.equal((await fetch(`${url}/ready`)).status, 200, 'unreachable, but younger than max_staleness');
    const snaps = await fetch(`${url}/meta/snapshots`).then(json);
    t.match(snaps.body.references[0].lastError.message, new RegExp(`cannot reach http://${s.proxy.host.replace(/\./g, '\\.')}`));
    clock += 3 * 60_000;
    const stale = await fetch(`${url}/ready`).then(json);
    t.equal(stale.status, 503);
    t.match(stale.body.message, /reference "v1" has not been confirmed by the source for 6m0s \(limit 5m0s\): the state backend could not be read \(lastError in \/meta\/snapshots\)$/);
    t.notMatch(stale.body.message, /127\.0\.0\.1/, '/ready is public: no host or port');
    const served = await variant(url);
    t.equal(served.status, 200, 'serving continues');
    t.equal(served.body.variantKey, 'hello');

    s.proxy.setDown(false);
    await s.store.refresh();
    t.equal((await fetch(`${url}/ready`)).status, 200, 'ready again after a good poll');
  });

  t.test('restart with the registry down: serves the last pulled bundle from the bundle store', async (t) => {
    const registry = await startRegistry();
    t.teardown(() => registry.close());
    const digest = await pushFiles(createRegistryClient(), parseOciReference(`http://${registry.host}/team/flags:v1`), { 'features.yml': gitFixture('hello.yml') });
    const first = await serveOci(t, { registry });
    await first.store.start();
    await first.store.close();

    // The same reference as before: the bundle store names bundles after the registry host.
    const again = createOciSource({
      ...STATE_LIMITS,
      reference: first.ref,
      client: createRegistryClient(),
      store: await openBundleStore(first.bundlesDir),
    });
    await first.proxy.close(); // the registry address the bundle was pulled from is gone
    const store = createSnapshotStore({ ...STORE_DEFAULTS, source: again, defaultReference: again.name, pollIntervalMs: 3_600_000, maxStalenessMs: 60_000 });
    await store.start();
    t.teardown(() => store.close());
    t.equal(store.get()?.revision, digest, 'served from the local copy');
    t.match(store.status()[0], { reference: 'v1', revision: { id: digest, meta: { at: CREATED } }, lastError: { message: /cannot reach/ } });

    const empty = createOciSource({ ...STATE_LIMITS, reference: first.ref, client: createRegistryClient(), store: await openBundleStore(tempDir(t)) });
    const cold = createSnapshotStore({ ...STORE_DEFAULTS, source: empty, defaultReference: empty.name, pollIntervalMs: 3_600_000 });
    await t.rejects(cold.start(), { kind: 'unreachable', message: /cannot reach/ }, 'nothing local: start fails with the reason');
  });

  t.test('basic-auth registry: good credentials serve; rotated bad ones show in status, never the password', async (t) => {
    const registry = await startRegistry({ auth: 'basic' });
    t.teardown(() => registry.close());
    const credentials = { username: 'alice', password: REGISTRY_PASSWORD };
    const digest = await pushFiles(createRegistryClient({ credentials }), parseOciReference(`http://${registry.host}/team/flags:v1`), { 'features.yml': gitFixture('hello.yml') });

    const dir = tempDir(t);
    const tokenFile = join(dir, 'registry-password');
    writeFileSync(tokenFile, REGISTRY_PASSWORD);
    const { logger, lines } = capturingLogger();
    const s = await serveOci(t, { registry, credentials: { username: 'alice', tokenFile }, logger });
    const url = await s.listen();
    const served = await variant(url);
    t.equal(served.revision, digest);
    t.ok(s.proxy.requests.every((r) => r.authorization === undefined || r.authorization.startsWith('Basic ')));

    writeFileSync(tokenFile, 'wrong-Pa55word');
    await s.store.refresh();
    const snaps = await fetch(`${url}/meta/snapshots`).then(json);
    t.match(snaps.body.references[0].lastError.message, /resolving 127\.0\.0\.1:\d+\/team\/flags:v1: 127\.0\.0\.1:\d+: the credentials of user "alice" were refused \(HTTP 401\)/);
    t.equal((await variant(url)).revision, digest, 'still serving');
    const everything = lines.join('') + JSON.stringify(snaps.body);
    t.notMatch(everything, /wrong-Pa55word|s3cret/, 'no password in any log line or status');
    t.match(lines.join(''), /were refused/, 'the failure is logged');

    const noCreds = await serveOci(t, { registry, logger });
    await t.rejects(noCreds.store.start(), { kind: 'unauthorized', message: /no credentials are configured/ });
    const wrong = await serveOci(t, { registry, credentials: { username: 'alice', password: 'hunter2-bad' }, logger });
    const err = (await wrong.store.start().catch((e: unknown) => e)) as Error;
    t.match(err.message, /user "alice" were refused/);
    t.notMatch(lines.join('') + err.message, /hunter2-bad/);
  });

  t.test('a bundle built like Flipt builds them (Flipt media types, manifest 1.0 config) is loaded', async (t) => {
    const registry = await startRegistry();
    t.teardown(() => registry.close());
    const client = createRegistryClient();
    const remote = parseOciReference(`http://${registry.host}/team/flags:v1`);
    const json = enc(
      JSON.stringify({
        version: '1.4',
        namespace: 'default',
        flags: [{ key: 'greeting', name: 'Greeting', enabled: true, variants: [{ key: 'hola', default: true }] }],
      }),
    );
    const yaml = enc('version: "1.4"\nnamespace: team\nflags:\n  - key: greeting\n    name: Greeting\n    enabled: true\n    variants:\n      - key: salut\n        default: true\n');
    const empty = enc('{}');
    const layers = [
      { mediaType: `${FLIPT_LAYER_MEDIA_TYPE}+json`, bytes: json, annotations: { 'io.flipt.features.namespace': 'default' } },
      { mediaType: `${FLIPT_LAYER_MEDIA_TYPE}+yaml`, bytes: yaml, annotations: { 'io.flipt.features.namespace': 'team' } },
    ];
    for (const bytes of [empty, json, yaml]) await client.pushBlob(remote, sha256Digest(bytes), bytes);
    const manifest = enc(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST_MEDIA_TYPE,
        config: { mediaType: FLIPT_ARTIFACT_TYPE, digest: EMPTY_JSON_DIGEST, size: 2 },
        layers: layers.map((l) => ({ mediaType: l.mediaType, digest: sha256Digest(l.bytes), size: l.bytes.byteLength, annotations: l.annotations })),
        annotations: { 'org.opencontainers.image.created': CREATED },
      }),
    );
    const digest = await client.pushManifest(remote, manifest, OCI_MANIFEST_MEDIA_TYPE);
    const s = await serveOci(t, { registry });
    const url = await s.listen();
    const hola = await variant(url);
    t.equal(hola.revision, digest);
    t.equal(hola.body.variantKey, 'hola');
    t.equal((await variant(url, 'greeting', 'team')).body.variantKey, 'salut');
  });

  t.test('a pinned digest and a reference from config (ociStorageFromConfig) against the registry', async (t) => {
    const registry = await startRegistry();
    t.teardown(() => registry.close());
    const digest = await pushFiles(createRegistryClient(), parseOciReference(`http://${registry.host}/team/flags:v1`), { 'features.yml': gitFixture('hello.yml') });
    const dataDir = tempDir(t);
    const storage = ociStorageFromConfig(
      loadConfig({ env: { VEXIL_STORAGE_TYPE: 'oci', VEXIL_STORAGE_OCI_REPOSITORY: `${registry.host}/team/flags@${digest}`, VEXIL_STORAGE_OCI_INSECURE: 'true' } }),
      { baseDir: dataDir, dataDir },
    );
    const store = createSnapshotStore({ ...STORE_DEFAULTS, source: storage.source, ...storage.store });
    await store.start();
    t.teardown(() => store.close());
    t.equal(store.get(digest)?.revision, digest);
    t.same((await (await openBundleStore(join(dataDir, 'bundles'))).list()).map((b) => b.name), [`${registry.host}/team/flags@${digest}`], 'default bundles_directory is <data_dir>/bundles');
    await registry.close();
    await store.refresh();
    t.equal(store.status()[0]?.lastError, undefined, 'a digest whose manifest is local needs no registry');
  });
}
