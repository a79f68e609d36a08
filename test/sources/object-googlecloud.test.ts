/**
 * The googlecloud mapping's own tests (the shared cases run in object-backends.test.ts): what goes
 * on the wire (path-style, SigV4 scope `auto`, the HMAC key's access id, no AWS credentials), the
 * description, the default endpoint and the error hints. s3rver stands in for GCS (it checks the
 * signatures); no GCS server runs here (docs/backends.md). GCS's opaque ETags (not MD5s, changing
 * while the bytes do not) cannot be produced by s3rver, whose ETags are always MD5s: the shared
 * source is tested with such ETags against Azurite (object-azblob.test.ts).
 */
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { objectStorageFromConfig } from '../../src/sources/object/from-config.js';
import { GCS_ENDPOINT } from '../../src/sources/object/googlecloud.js';
import type { S3Provider } from '../../src/sources/object/s3.js';
import { createSnapshotStore } from '../../src/store/snapshot-store.js';
import { gitFixture, greeting } from '../support/git-fixture.js';
import { useEnv } from '../support/object-backends.js';
import { startRecordingProxy } from '../support/recording-proxy.js';
import { S3RVER_CREDENTIALS, startS3Server, useAwsEnv } from '../support/s3-server.js';
import { STORE_DEFAULTS } from '../support/config-defaults.js';

const ctx = { baseDir: process.cwd(), dataDir: process.cwd() };
const gcsEnv = (endpoint: string, extra: Record<string, string> = {}) => ({
  VEXIL_STORAGE_TYPE: 'object',
  VEXIL_STORAGE_OBJECT_TYPE: 'googlecloud',
  VEXIL_STORAGE_OBJECT_GOOGLECLOUD_BUCKET: 'flags',
  VEXIL_STORAGE_OBJECT_GOOGLECLOUD_ENDPOINT: endpoint,
  ...extra,
});

t.test('on the wire: path-style, SigV4 with region auto and the HMAC key, never the AWS chain', async (t) => {
  // AWS credentials the server would accept are in the environment: the mapping must not use them.
  useAwsEnv(t);
  useEnv(t, { GOOGLE_HMAC_ACCESS_ID: S3RVER_CREDENTIALS.accessKeyId, GOOGLE_HMAC_SECRET: S3RVER_CREDENTIALS.secretAccessKey });
  const s3 = await startS3Server(t);
  await s3.put('flags', 'prod/features.yml', gitFixture('hello.yml'));
  const proxy = await startRecordingProxy(t, s3.endpoint);
  const storage = objectStorageFromConfig(loadConfig({ env: gcsEnv(proxy.endpoint, { VEXIL_STORAGE_OBJECT_GOOGLECLOUD_PREFIX: 'prod' }) }), ctx);
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: storage.source, ...storage.store, logger: pino({ level: 'silent' }) });
  t.teardown(() => store.close());
  await store.start();
  t.equal(greeting(store.get()), 'hello');
  t.equal((storage.source.provider as S3Provider).type, 'googlecloud');
  t.match(storage.description, /^gs:\/\/flags\/prod\/ at 127\.0\.0\.1:\d+$/);

  const [list, get] = proxy.requests;
  t.match(list, { method: 'GET', url: /^\/flags\/?\?.*list-type=2/ }, 'ListObjectsV2, bucket in the path');
  t.match(list?.url, /prefix=prod%2F/);
  t.match(get, { method: 'GET', url: /^\/flags\/prod\/features\.yml(\?|$)/, headers: { 'if-match': /^"[0-9a-f]{32}"$/ } }, 'GetObject pinned with If-Match');
  for (const r of proxy.requests) {
    t.match(r.headers.authorization, new RegExp(`^AWS4-HMAC-SHA256 Credential=${S3RVER_CREDENTIALS.accessKeyId}/\\d{8}/auto/s3/aws4_request, `), 'signed with the HMAC access id for region auto');
    t.equal(r.headers['x-amz-security-token'], undefined, 'no AWS session token');
    t.notMatch(Object.keys(r.headers).join(' '), /x-amz-checksum|x-amz-sdk-checksum/, 'no flexible checksums');
  }
});

t.test('a refused HMAC key: the GCS hint, no AWS hint, no credential in the message', async (t) => {
  useAwsEnv(t); // valid AWS credentials for s3rver sit in the environment, unused
  const s3 = await startS3Server(t);
  await s3.put('flags', 'features.yml', gitFixture('hello.yml'));
  const config = loadConfig({ env: gcsEnv(s3.endpoint, { VEXIL_STORAGE_OBJECT_GOOGLECLOUD_HMAC_ACCESS_ID: 'GOOG1EREVOKED', VEXIL_STORAGE_OBJECT_GOOGLECLOUD_HMAC_SECRET: 'wrong-secret' }) });
  const storage = objectStorageFromConfig(config, ctx, {});
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: storage.source, ...storage.store, logger: pino({ level: 'silent' }) });
  t.teardown(() => store.close());
  const err = await store.start().then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  t.match(err?.message, /^credentials refused by gs:\/\/flags\/ at 127\.0\.0\.1:\d+ \(InvalidAccessKeyId, HTTP 403\): check the HMAC key \(storage\.object\.googlecloud\.hmac, or GOOGLE_HMAC_ACCESS_ID and GOOGLE_HMAC_SECRET\)/);
  t.notMatch(err?.message, /AWS|GOOG1EREVOKED|wrong-secret/);
});

t.test('defaults: the public XML API endpoint, left out of descriptions', async (t) => {
  const config = loadConfig({ env: { VEXIL_STORAGE_TYPE: 'object', VEXIL_STORAGE_OBJECT_TYPE: 'googlecloud', VEXIL_STORAGE_OBJECT_GOOGLECLOUD_BUCKET: 'flags', VEXIL_STORAGE_OBJECT_GOOGLECLOUD_PREFIX: 'prod' } });
  t.equal(config.storage.object.googlecloud.endpoint, GCS_ENDPOINT);
  const storage = objectStorageFromConfig(config, ctx, { GOOGLE_HMAC_ACCESS_ID: 'GOOG1X', GOOGLE_HMAC_SECRET: 'never-printed' });
  t.teardown(() => storage.source.close?.());
  t.equal(storage.description, 'gs://flags/prod/');
  t.equal(storage.store.pollIntervalMs, 60_000);
  t.notMatch(JSON.stringify({ d: storage.description, s: storage.store }), /never-printed/);
});
