/** `storage.object.*`: schema defaults, env overrides, and the checks made before `vexil serve` starts. */
import t from 'tap';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig, loadConfigReport } from '../../src/config/load.js';
import { OBJECT_REFERENCE } from '../../src/sources/object/source.js';
import { objectConfigProblems, objectStorageFromConfig } from '../../src/sources/object/from-config.js';
import { normalizePrefix, type S3Provider } from '../../src/sources/object/s3.js';
import { ONE_REFERENCE } from '../../src/sources/storage.js';

const objectEnv = (extra: Record<string, string> = {}) => ({ VEXIL_STORAGE_TYPE: 'object', ...extra });
const ctx = { baseDir: process.cwd(), dataDir: process.cwd() };

t.test('defaults and environment overrides', async (t) => {
  const c = loadConfig({ env: objectEnv({ VEXIL_STORAGE_OBJECT_TYPE: 's3', VEXIL_STORAGE_OBJECT_S3_BUCKET: 'flags' }) });
  t.same(c.storage.object, { type: 's3', s3: { bucket: 'flags', prefix: '', poll_interval: 60_000, max_staleness: 300_000 } });
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
    { path: 'storage.object.type', message: 'object storage type must be specified: required when storage.type is object (s3)' },
  ]);
  for (const type of ['azblob', 'googlecloud'] as const) {
    t.match(objectConfigProblems({ ...base, type }), [
      { path: 'storage.object.type', message: new RegExp(`^"${type}" is not supported by this version \\(only s3 is\\)`) },
    ]);
  }
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

  t.throws(() => objectStorageFromConfig(loadConfig({ env: objectEnv({ VEXIL_STORAGE_OBJECT_TYPE: 'azblob' }) }), ctx), ConfigError);
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
