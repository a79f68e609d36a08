/**
 * `storage.object.*` → the object-store source and the store options that go with it (what
 * `vexil serve` wires for `storage.type: object`). Adding a provider (azblob, googlecloud) means a
 * sibling of s3.ts implementing ObjectProvider and one branch in `providerFromConfig`.
 */
import { ConfigError, type ConfigProblem } from '../../config/errors.js';
import type { Config, ObjectStorageConfig } from '../../config/types.js';
import { createObjectSource, OBJECT_REFERENCE, type ObjectSource } from './source.js';
import { ONE_REFERENCE, type Storage, type StorageContext } from '../storage.js';
import type { ObjectProvider } from './provider.js';
import { createS3Provider } from './s3.js';

export interface ObjectStorage extends Storage {
  readonly source: ObjectSource;
}

/** Known to the config schema, refused here: no provider for them yet. */
const NOT_SUPPORTED = new Set(['azblob', 'googlecloud']);

/** Every problem of `storage.object` that stops `vexil serve` (empty = usable). */
export function objectConfigProblems(object: ObjectStorageConfig): ConfigProblem[] {
  const type = object.type;
  if (type === undefined) {
    return [{ path: 'storage.object.type', message: 'object storage type must be specified: required when storage.type is object (s3)' }];
  }
  if (NOT_SUPPORTED.has(type)) {
    return [
      {
        path: 'storage.object.type',
        message: `"${type}" is not supported by this version (only s3 is); see docs/backends.md (object storage) for how a provider is added`,
      },
    ];
  }
  const problems: ConfigProblem[] = [];
  const s3 = object.s3;
  if (s3.bucket === undefined || s3.bucket.trim() === '') {
    problems.push({ path: 'storage.object.s3.bucket', message: 's3 bucket must be specified: required when storage.object.type is s3' });
  }
  if (s3.endpoint !== undefined) {
    const problem = endpointProblem(s3.endpoint);
    if (problem !== undefined) problems.push({ path: 'storage.object.s3.endpoint', message: problem });
  }
  return problems;
}

function endpointProblem(endpoint: string): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'expected an http(s) URL such as http://127.0.0.1:9000';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `expected an http(s) URL (got scheme ${url.protocol})`;
  if (url.username !== '' || url.password !== '') {
    return 'credentials do not belong in the endpoint: vexil takes them from the AWS SDK chain (AWS_* environment, shared config, instance role)';
  }
  return undefined;
}

function providerFromConfig(object: ObjectStorageConfig): ObjectProvider {
  // objectConfigProblems has ruled out everything but s3.
  const s3 = object.s3;
  return createS3Provider({
    bucket: s3.bucket as string,
    prefix: s3.prefix,
    ...(s3.region !== undefined ? { region: s3.region } : {}),
    ...(s3.endpoint !== undefined ? { endpoint: s3.endpoint } : {}),
  });
}

/** Throws ConfigError (with key paths) when storage.object is unusable. `ctx` is unused: nothing is kept on disk. */
export function objectStorageFromConfig(config: Config, _ctx: StorageContext): ObjectStorage {
  const object = config.storage.object;
  const problems = objectConfigProblems(object);
  if (problems.length > 0) throw new ConfigError(problems);
  const provider = providerFromConfig(object);
  const description = provider.describe();
  const source = createObjectSource({
    provider,
    description,
    maxFileSize: config.storage.max_file_size,
    maxStateSize: config.storage.max_state_size,
  });
  return {
    source,
    store: {
      defaultReference: OBJECT_REFERENCE,
      pollIntervalMs: object.s3.poll_interval,
      prebuild: [OBJECT_REFERENCE],
      maxStalenessMs: object.s3.max_staleness,
      ...ONE_REFERENCE,
    },
    description,
  };
}
