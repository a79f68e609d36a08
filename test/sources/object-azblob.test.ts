/**
 * What only the Azure Blob provider does, against Azurite (the cases every backend shares are in
 * object-backends.test.ts): both credential forms (connection string, account + key), ETags quoted
 * in headers and bare in listings, and opaque ETags that change while the bytes do not (as GCS's
 * do too, which s3rver cannot produce: the same object source serves both).
 */
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { createAzureBlobProvider, type AzureBlobProvider } from '../../src/sources/object/azblob.js';
import { objectStorageFromConfig } from '../../src/sources/object/from-config.js';
import { createSnapshotStore } from '../../src/store/snapshot-store.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, startAzuriteServer } from '../support/azurite-server.js';
import { gitFixture, greeting } from '../support/git-fixture.js';
import { STORE_DEFAULTS } from '../support/config-defaults.js';

const ctx = { baseDir: process.cwd(), dataDir: process.cwd() };
const hello = gitFixture('hello.yml');

t.test('a connection string alone names account, key and endpoint; a wrong key in it is refused without being repeated', async (t) => {
  const az = await startAzuriteServer(t);
  await az.put('flags', 'prod/features.yml', hello);
  const config = loadConfig({ env: { VEXIL_STORAGE_TYPE: 'object', VEXIL_STORAGE_OBJECT_TYPE: 'azblob', VEXIL_STORAGE_OBJECT_AZBLOB_CONTAINER: 'flags', VEXIL_STORAGE_OBJECT_AZBLOB_PREFIX: 'prod' } });
  const storage = objectStorageFromConfig(config, ctx, { AZURE_STORAGE_CONNECTION_STRING: az.connectionString() });
  t.equal(storage.description, `azblob://flags/prod/ at 127.0.0.1:${az.port}/${AZURITE_ACCOUNT}`);
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: storage.source, ...storage.store, logger: pino({ level: 'silent' }) });
  t.teardown(() => store.close());
  await store.start();
  t.equal(greeting(store.get()), 'hello');

  const wrongKey = Buffer.from('w'.repeat(64)).toString('base64');
  const refused = objectStorageFromConfig(config, ctx, { AZURE_STORAGE_CONNECTION_STRING: az.connectionString(wrongKey) });
  const err = await refused.source.refs().then(
    () => undefined,
    (e: unknown) => e as Error & { kind?: string },
  );
  t.equal(err?.kind, 'credentials');
  t.match(err?.message, /^credentials refused by azblob:\/\/flags\/prod\/ at 127\.0\.0\.1:\d+\/devstoreaccount1 \(AuthorizationFailure, HTTP 403\): check AZURE_STORAGE_CONNECTION_STRING/);
  t.notOk(err?.message.includes(wrongKey) || err?.message.includes(AZURITE_KEY), 'no key in the message');
  t.equal(err?.cause, undefined, 'the SDK error (with the signed request) is not kept');
});

t.test('ETags: quoted in response headers, bare in listings; compared without quotes', async (t) => {
  const az = await startAzuriteServer(t);
  const written = await az.put('flags', 'features.yml', hello);
  t.match(written, /^0x[0-9A-F]+$/, 'an opaque tag, not an MD5');
  const provider: AzureBlobProvider = createAzureBlobProvider({ container: 'flags', endpoint: az.endpoint, credentials: { kind: 'shared-key', account: AZURITE_ACCOUNT, key: AZURITE_KEY } });
  const [entry] = await provider.list();
  t.equal(entry?.etag, written);
  t.equal(Buffer.from(await provider.get('features.yml', written, entry!.size)).toString('utf8'), hello);
  t.same(provider.stats(), { listRequests: 1, getRequests: 1, bytesReceived: Buffer.byteLength(hello) });
});

t.test('an ETag that changes while the bytes do not: one download, the same state served', async (t) => {
  const az = await startAzuriteServer(t);
  await az.put('flags', 'features.yml', hello);
  const config = loadConfig({ env: { VEXIL_STORAGE_TYPE: 'object', VEXIL_STORAGE_OBJECT_TYPE: 'azblob', VEXIL_STORAGE_OBJECT_AZBLOB_CONTAINER: 'flags', VEXIL_STORAGE_OBJECT_AZBLOB_ENDPOINT: az.endpoint } });
  const storage = objectStorageFromConfig(config, ctx, { AZURE_STORAGE_ACCOUNT: AZURITE_ACCOUNT, AZURE_STORAGE_KEY: AZURITE_KEY });
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: storage.source, ...storage.store, logger: pino({ level: 'silent' }) });
  t.teardown(() => store.close());
  await store.start();
  const provider = storage.source.provider as AzureBlobProvider;
  const before = { gets: provider.stats().getRequests, revision: store.get()!.revision };

  await az.put('flags', 'features.yml', hello); // same bytes, new ETag
  await store.refresh();
  t.equal(provider.stats().getRequests - before.gets, 1, 'downloaded again: its ETag changed');
  t.equal(greeting(store.get()), 'hello');
  t.not(store.get()!.revision, before.revision, 'a new listing revision');
});
