/**
 * What only the S3 provider does, against s3rver (the cases every backend shares are in
 * object-backends.test.ts): credentials from the AWS SDK's default chain, refreshed while running.
 */
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { objectStorageFromConfig } from '../../src/sources/object/from-config.js';
import { createSnapshotStore } from '../../src/store/snapshot-store.js';
import { gitFixture, greeting } from '../support/git-fixture.js';
import { startCredentialServer, startS3Server, useAwsEnv } from '../support/s3-server.js';
import { STORE_DEFAULTS } from '../support/config-defaults.js';

t.test('a rotated role key the server refuses: the error is visible and serving continues', async (t) => {
  const creds = await startCredentialServer(t);
  // Only the container-credentials endpoint: the SDK's default chain finds it there.
  useAwsEnv(t, { AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined, AWS_CONTAINER_CREDENTIALS_FULL_URI: creds.uri });
  const s3 = await startS3Server(t);
  await s3.put('flags', 'features.yml', gitFixture('hello.yml'));
  const config = loadConfig({ env: { VEXIL_STORAGE_TYPE: 'object', VEXIL_STORAGE_OBJECT_TYPE: 's3', VEXIL_STORAGE_OBJECT_S3_BUCKET: 'flags', VEXIL_STORAGE_OBJECT_S3_ENDPOINT: s3.endpoint } });
  const storage = objectStorageFromConfig(config, { baseDir: process.cwd(), dataDir: process.cwd() });
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: storage.source, ...storage.store, logger: pino({ level: 'silent' }) });
  t.teardown(() => store.close());
  await store.start();
  t.ok(creds.served > 0, 'credentials came from the default chain');
  const good = store.get()!.revision;

  creds.setAccessKeyId('REVOKED');
  // The SDK refreshes expiring credentials in the background: the refused key shows up within a few polls.
  let lastError: { message: string } | undefined;
  for (let i = 0; i < 5 && lastError === undefined; i++) {
    await store.refresh();
    lastError = store.status()[0]?.lastError;
  }
  t.match(lastError?.message, /^credentials refused by s3:\/\/flags\/ at 127\.0\.0\.1:\d+ \(InvalidAccessKeyId, HTTP 403\): check the AWS credentials/);
  t.notMatch(lastError?.message, /REVOKED|test-session-token/, 'no credential in the message');
  t.equal(store.get()!.revision, good, 'serving continues');
  t.equal(greeting(store.get()), 'hello');
});
