/** `storage.object.*`: schema defaults, env overrides, and the checks made before `vexil serve` starts. */
import t from 'tap';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig, loadConfigReport } from '../../src/config/load.js';
import { OBJECT_REFERENCE } from '../../src/sources/object/source.js';
import { objectConfigProblems, objectStorageFromConfig } from '../../src/sources/object/from-config.js';
import type { S3Provider } from '../../src/sources/object/s3.js';
import { normalizePrefix } from '../../src/sources/object/transport.js';
import { ONE_REFERENCE } from '../../src/sources/storage.js';

const objectEnv = (extra: Record<string, string> = {}) => ({ VEXIL_STORAGE_TYPE: 'object', ...extra });
const ctx = { baseDir: process.cwd(), dataDir: process.cwd() };

t.test('defaults and environment overrides', async (t) => {
  const c = loadConfig({ env: objectEnv({ VEXIL_STORAGE_OBJECT_TYPE: 's3', VEXIL_STORAGE_OBJECT_S3_BUCKET: 'flags' }) });
  t.same(c.storage.object, {
    type: 's3',
    s3: { bucket: 'flags', prefix: '', poll_interval: 60_000, max_staleness: 300_000 },
    azblob: { prefix: '', poll_interval: 60_000, max_staleness: 300_000 },
    googlecloud: { prefix: '', endpoint: 'https://storage.googleapis.com', hmac: {}, poll_interval: 60_000, max_staleness: 300_000 },
  });
  const az = loadConfig({
    env: objectEnv({
      VEXIL_STORAGE_OBJECT_TYPE: 'azblob',
      VEXIL_STORAGE_OBJECT_AZBLOB_CONTAINER: 'flags',
      VEXIL_STORAGE_OBJECT_AZBLOB_PREFIX: 'prod',
      VEXIL_STORAGE_OBJECT_AZBLOB_ENDPOINT: 'http://127.0.0.1:10000/devstoreaccount1',
      VEXIL_STORAGE_OBJECT_AZBLOB_POLL_INTERVAL: '20s',
      VEXIL_STORAGE_OBJECT_AZBLOB_MAX_STALENESS: '3m',
    }),
  });
  t.same(az.storage.object.azblob, { container: 'flags', prefix: 'prod', endpoint: 'http://127.0.0.1:10000/devstoreaccount1', poll_interval: 20_000, max_staleness: 180_000 });
  const gc = loadConfig({
    env: objectEnv({
      VEXIL_STORAGE_OBJECT_TYPE: 'googlecloud',
      VEXIL_STORAGE_OBJECT_GOOGLECLOUD_BUCKET: 'flags',
      VEXIL_STORAGE_OBJECT_GOOGLECLOUD_HMAC_ACCESS_ID: 'GOOG1EXAMPLE',
      VEXIL_STORAGE_OBJECT_GOOGLECLOUD_HMAC_SECRET: 'hmac-secret',
      VEXIL_STORAGE_OBJECT_GOOGLECLOUD_POLL_INTERVAL: '30s',
    }),
  });
  t.same(gc.storage.object.googlecloud, {
    bucket: 'flags',
    prefix: '',
    endpoint: 'https://storage.googleapis.com',
    hmac: { access_id: 'GOOG1EXAMPLE', secret: 'hmac-secret' },
    poll_interval: 30_000,
    max_staleness: 300_000,
  });
  const o = loadConfig({
    env: objectEnv({
      VEXIL_STORAGE_OBJECT_TYPE: 's3',
      VEXIL_STORAGE_OBJECT_S3_BUCKET: 'flags',
      VEXIL_STORAGE_OBJECT_S3_PREFIX: 'prod/',
      VEXIL_STORAGE_OBJECT_S3_REGION: 'eu-west-3',
      VEXIL_STORAGE_OBJECT_S3_ENDPOINT: 'http://127.0.0.1:9000',
      VEXIL_STORAGE_OBJECT_S3_POLL_INTERVAL: '15s',
      VEXIL_STORAGE_OBJECT_S3_MAX_STALENESS: '2m',
    }),
  });
  t.same(o.storage.object.s3, {
    bucket: 'flags',
    prefix: 'prod/',
    region: 'eu-west-3',
    endpoint: 'http://127.0.0.1:9000',
    poll_interval: 15_000,
    max_staleness: 120_000,
  });
  t.throws(() => loadConfig({ env: objectEnv({ VEXIL_STORAGE_OBJECT_TYPE: 'minio' }) }), { message: /storage\.object\.type/ });
  // No such key (credentials come from the AWS chain): the variable is ignored, like any platform variable.
  t.same(loadConfigReport({ env: objectEnv({ VEXIL_STORAGE_OBJECT_S3_ACCESS_KEY_ID: 'x' }) }).ignoredVariables, [
    { variable: 'VEXIL_STORAGE_OBJECT_S3_ACCESS_KEY_ID' },
  ]);
});

t.test('checks made at start', async (t) => {
  const base = loadConfig({ env: objectEnv() }).storage.object;
  t.same(objectConfigProblems(base), [
    { path: 'storage.object.type', message: 'object storage type must be specified: required when storage.type is object (s3, azblob or googlecloud)' },
  ]);
  const s3 = { ...base, type: 's3' as const };
  t.same(objectConfigProblems(s3), [
    { path: 'storage.object.s3.bucket', message: 's3 bucket must be specified: required when storage.object.type is s3' },
  ]);
  const ok = { ...s3, s3: { ...s3.s3, bucket: 'flags' } };
  t.same(objectConfigProblems(ok), []);
  const endpoint = (e: string) => objectConfigProblems({ ...ok, s3: { ...ok.s3, endpoint: e } });
  t.same(endpoint('https://s3.example.com'), []);
  t.match(endpoint('not a url'), [{ path: 'storage.object.s3.endpoint', message: /expected an http\(s\) URL/ }]);
  t.match(endpoint('ftp://host'), [{ path: 'storage.object.s3.endpoint', message: /got scheme ftp:/ }]);
  t.match(endpoint('http://key:secret@127.0.0.1:9000'), [{ path: 'storage.object.s3.endpoint', message: /credentials do not belong in the endpoint/ }]);
  t.notMatch(endpoint('http://key:secret@127.0.0.1:9000')[0]?.message, /secret/, 'the credential is not repeated');
});

t.test('objectStorageFromConfig: store options, description, ConfigError with key paths', async (t) => {
  const config = loadConfig({
    env: objectEnv({
      VEXIL_STORAGE_OBJECT_TYPE: 's3',
      VEXIL_STORAGE_OBJECT_S3_BUCKET: 'flags',
      VEXIL_STORAGE_OBJECT_S3_PREFIX: '/prod',
      VEXIL_STORAGE_OBJECT_S3_ENDPOINT: 'http://127.0.0.1:9000/',
      VEXIL_STORAGE_OBJECT_S3_POLL_INTERVAL: '10s',
    }),
  });
  const storage = objectStorageFromConfig(config, ctx);
  t.teardown(() => storage.source.close?.());
  t.equal(storage.description, 's3://flags/prod/ at 127.0.0.1:9000');
  t.same(storage.store, { defaultReference: OBJECT_REFERENCE, pollIntervalMs: 10_000, prebuild: [OBJECT_REFERENCE], maxStalenessMs: 300_000, ...ONE_REFERENCE });
  t.equal(storage.source.kind, 'object');
  t.equal(storage.source.reference, 'object');
  const provider = storage.source.provider as S3Provider;
  t.equal(provider.type, 's3');
  t.equal(provider.prefix, 'prod/');

  const aws = objectStorageFromConfig(loadConfig({ env: objectEnv({ VEXIL_STORAGE_OBJECT_TYPE: 's3', VEXIL_STORAGE_OBJECT_S3_BUCKET: 'flags' }) }), ctx);
  t.teardown(() => aws.source.close?.());
  t.equal(aws.description, 's3://flags/', 'no endpoint: AWS S3');

  t.throws(() => objectStorageFromConfig(loadConfig({ env: objectEnv({ VEXIL_STORAGE_OBJECT_TYPE: 'azblob' }) }), ctx, {}), ConfigError);
  try {
    objectStorageFromConfig(loadConfig({ env: objectEnv({ VEXIL_STORAGE_OBJECT_TYPE: 's3' }) }), ctx);
    t.fail('expected a ConfigError');
  } catch (err) {
    t.type(err, ConfigError);
    t.same((err as ConfigError).problems.map((p) => p.path), ['storage.object.s3.bucket']);
    t.match((err as Error).message, /^invalid configuration: storage\.object\.s3\.bucket: s3 bucket must be specified/);
  }
});

t.test('a prefix is a folder', async (t) => {
  t.equal(normalizePrefix(undefined), '');
  t.equal(normalizePrefix(''), '');
  t.equal(normalizePrefix('/'), '');
  t.equal(normalizePrefix('prod'), 'prod/');
  t.equal(normalizePrefix('/prod/'), 'prod/');
  t.equal(normalizePrefix('envs/prod//'), 'envs/prod/');
});

t.test('azblob: container required, credentials from AZURE_STORAGE_* only, never repeated in a problem', async (t) => {
  const base = loadConfig({ env: objectEnv({ VEXIL_STORAGE_OBJECT_TYPE: 'azblob' }) }).storage.object;
  const key = 'c2VjcmV0LWtleS12YWx1ZQ==';
  t.same(objectConfigProblems(base, {}), [
    { path: 'storage.object.azblob.container', message: 'azblob container must be specified: required when storage.object.type is azblob' },
    { path: 'storage.object.azblob', message: 'azblob needs credentials from the environment: AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY' },
  ]);
  const ok = { ...base, azblob: { ...base.azblob, container: 'flags' } };
  t.same(objectConfigProblems(ok, { AZURE_STORAGE_ACCOUNT: 'acct', AZURE_STORAGE_KEY: key }), []);
  t.same(objectConfigProblems(ok, { AZURE_STORAGE_CONNECTION_STRING: `AccountName=acct;AccountKey=${key};EndpointSuffix=core.windows.net` }), []);
  const halfway = objectConfigProblems(ok, { AZURE_STORAGE_ACCOUNT: 'acct' });
  t.match(halfway, [{ path: 'storage.object.azblob', message: /\(AZURE_STORAGE_KEY is not set\)$/ }]);
  // A connection string names its endpoint: an endpoint beside it is ambiguous.
  const both = objectConfigProblems({ ...ok, azblob: { ...ok.azblob, endpoint: 'http://127.0.0.1:10000/devstoreaccount1' } }, { AZURE_STORAGE_CONNECTION_STRING: `AccountName=acct;AccountKey=${key}` });
  t.match(both, [{ path: 'storage.object.azblob.endpoint', message: /^not together with AZURE_STORAGE_CONNECTION_STRING/ }]);
  const sas = objectConfigProblems({ ...ok, azblob: { ...ok.azblob, endpoint: 'https://acct.blob.core.windows.net/?sv=2024&sig=SECRETSIG' } }, { AZURE_STORAGE_ACCOUNT: 'acct', AZURE_STORAGE_KEY: key });
  t.match(sas, [{ path: 'storage.object.azblob.endpoint', message: /^credentials do not belong in the endpoint/ }]);
  t.notMatch(JSON.stringify(sas), /SECRETSIG/);

  // Defaults: the account's public endpoint; poll interval and staleness from the azblob section.
  const config = loadConfig({ env: objectEnv({ VEXIL_STORAGE_OBJECT_TYPE: 'azblob', VEXIL_STORAGE_OBJECT_AZBLOB_CONTAINER: 'flags', VEXIL_STORAGE_OBJECT_AZBLOB_PREFIX: 'prod', VEXIL_STORAGE_OBJECT_AZBLOB_POLL_INTERVAL: '7s' }) });
  const storage = objectStorageFromConfig(config, ctx, { AZURE_STORAGE_ACCOUNT: 'acct', AZURE_STORAGE_KEY: key });
  t.equal(storage.description, 'azblob://flags/prod/ at acct.blob.core.windows.net');
  t.equal(storage.store.pollIntervalMs, 7_000);
  t.equal(storage.store.maxStalenessMs, 300_000);
  t.equal(storage.source.provider.type, 'azblob');

  // An unusable connection string: refused at start, its text not repeated.
  const garbled = 'AccountKey=SECRETVALUE-without-a-name';
  try {
    objectStorageFromConfig(config, ctx, { AZURE_STORAGE_CONNECTION_STRING: garbled });
    t.fail('expected a ConfigError');
  } catch (err) {
    t.type(err, ConfigError);
    t.match((err as Error).message, /storage\.object\.azblob: AZURE_STORAGE_CONNECTION_STRING is not a usable connection string/);
    t.notMatch((err as Error).message, /SECRETVALUE/);
    t.equal((err as Error).cause, undefined, 'the SDK error (which may quote it) is not kept');
  }
  // A SAS connection string: the token is not part of the description.
  const sasConn = objectStorageFromConfig(config, ctx, { AZURE_STORAGE_CONNECTION_STRING: 'BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2024-01-01&sig=SECRETSIG' });
  t.equal(sasConn.description, 'azblob://flags/prod/ at acct.blob.core.windows.net');
});

t.test('googlecloud: bucket required, HMAC key from the config or GOOGLE_HMAC_*, both halves from one place', async (t) => {
  const base = loadConfig({ env: objectEnv({ VEXIL_STORAGE_OBJECT_TYPE: 'googlecloud' }) }).storage.object;
  t.same(objectConfigProblems(base, {}), [
    { path: 'storage.object.googlecloud.bucket', message: 'googlecloud bucket must be specified: required when storage.object.type is googlecloud' },
    {
      path: 'storage.object.googlecloud.hmac',
      message:
        'an HMAC key is required: set GOOGLE_HMAC_ACCESS_ID and GOOGLE_HMAC_SECRET (or storage.object.googlecloud.hmac.access_id and .secret); create one for a service account with read access to the bucket',
    },
  ]);
  const ok = { ...base, googlecloud: { ...base.googlecloud, bucket: 'flags' } };
  t.same(objectConfigProblems(ok, { GOOGLE_HMAC_ACCESS_ID: 'GOOG1X', GOOGLE_HMAC_SECRET: 's' }), []);
  t.match(objectConfigProblems(ok, { GOOGLE_HMAC_ACCESS_ID: 'GOOG1X' }), [{ path: 'storage.object.googlecloud.hmac', message: /^an HMAC key is required/ }]);
  const inConfig = { ...ok, googlecloud: { ...ok.googlecloud, hmac: { access_id: 'GOOG1X', secret: 'from-config' } } };
  t.same(objectConfigProblems(inConfig, {}), []);
  const half = { ...ok, googlecloud: { ...ok.googlecloud, hmac: { access_id: 'GOOG1X' } } };
  t.match(objectConfigProblems(half, { GOOGLE_HMAC_SECRET: 'from-env' }), [{ path: 'storage.object.googlecloud.hmac', message: /^access_id and secret are set together/ }], 'halves are not mixed');
  t.match(objectConfigProblems({ ...inConfig, googlecloud: { ...inConfig.googlecloud, endpoint: 'http://id:secret@127.0.0.1:1' } }, {}), [
    { path: 'storage.object.googlecloud.endpoint', message: /^credentials do not belong in the endpoint/ },
  ]);
});
