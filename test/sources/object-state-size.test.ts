/**
 * storage.max_state_size on the object-store backend against a real S3 server (s3rver): state
 * files whose listed sizes add up to more than the limit are refused from the listing, none of
 * them downloaded, the problem located on the object that crossed it; the last good state stays.
 */
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import type { S3Provider } from '../../src/sources/object/s3.js';
import { objectStorageFromConfig } from '../../src/sources/object/from-config.js';
import { createSnapshotStore } from '../../src/store/snapshot-store.js';
import { gitFixture, greeting } from '../support/git-fixture.js';
import { startS3Server, useAwsEnv } from '../support/s3-server.js';
import { STORE_DEFAULTS } from '../support/config-defaults.js';

t.beforeEach((t) => useAwsEnv(t));

t.test('objects adding up to more than storage.max_state_size: refused from the listing, not downloaded', async (t) => {
  const s3 = await startS3Server(t);
  await s3.put('flags', 'features.yml', gitFixture('hello.yml'));
  const config = loadConfig({
    env: {
      VEXIL_STORAGE_TYPE: 'object',
      VEXIL_STORAGE_OBJECT_TYPE: 's3',
      VEXIL_STORAGE_OBJECT_S3_BUCKET: 'flags',
      VEXIL_STORAGE_OBJECT_S3_ENDPOINT: s3.endpoint,
      VEXIL_STORAGE_MAX_STATE_SIZE: '2048',
    },
  });
  const storage = objectStorageFromConfig(config, { baseDir: process.cwd(), dataDir: process.cwd() });
  const store = createSnapshotStore({
    ...STORE_DEFAULTS,
    source: storage.source,
    logger: pino({ level: 'silent' }),
    ...storage.store,
    maxStateSize: config.storage.max_state_size,
  });
  t.teardown(() => store.close());
  await store.start();
  t.equal(greeting(store.get()), 'hello');

  const provider = storage.source.provider as S3Provider;
  const gets = provider.stats().getRequests;
  await s3.put('flags', 'more.features.yml', `${gitFixture('bonjour.yml').replace('namespace: default', 'namespace: other')}\n# ${'x'.repeat(2000)}\n`);
  await store.refresh();
  const [status] = store.status();
  t.match(status?.lastRejected?.problems, [
    { severity: 'error', rule: 'state.too-large', file: 'more.features.yml', message: /add up to more than 2048 bytes: more\.features\.yml \(\d+ bytes\) brings them to \d+ bytes/ },
  ]);
  t.equal(provider.stats().getRequests, gets, 'nothing was downloaded');
  t.equal(greeting(store.get()), 'hello', 'the last good state keeps serving');
});
