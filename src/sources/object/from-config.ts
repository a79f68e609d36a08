/**
 * `storage.object.*` → the object-store source and the store options that go with it (what
 * `vexil serve` wires for `storage.type: object`): s3 (s3.ts), azblob (azblob.ts) and googlecloud
 * (googlecloud.ts, the S3 provider pointed at GCS's XML API). Credentials are read from `env`
 * (process.env) here, once, and handed to the provider; they never appear in a problem message.
 */
import { ConfigError, type ConfigProblem } from '../../config/errors.js';
import { objectTiming } from '../../config/object-storage.js';
import type { Config, ObjectStorageConfig } from '../../config/types.js';
import { createObjectSource, OBJECT_REFERENCE, type ObjectSource } from './source.js';
import { ONE_REFERENCE, type Storage, type StorageContext } from '../storage.js';
import { ObjectStoreError, type ObjectProvider } from './provider.js';
import { AZURE_ENV, azureCredentialsFromEnv, createAzureBlobProvider, type AzureCredentials } from './azblob.js';
import { createGoogleCloudProvider, GCS_HMAC_ENV, googleHmacKey, type HmacKey } from './googlecloud.js';
import { createS3Provider } from './s3.js';

export interface ObjectStorage extends Storage {
  readonly source: ObjectSource;
}

/** Every problem of `storage.object` that stops `vexil serve` (empty = usable). `env` holds the providers' credential variables. */
export function objectConfigProblems(object: ObjectStorageConfig, env: NodeJS.ProcessEnv = process.env): ConfigProblem[] {
  const type = object.type;
  if (type === undefined) {
    return [{ path: 'storage.object.type', message: 'object storage type must be specified: required when storage.type is object (s3, azblob or googlecloud)' }];
  }
  const problems: ConfigProblem[] = [];
  const required = (value: string | undefined, path: string, message: string) => {
    if (value === undefined || value.trim() === '') problems.push({ path, message });
  };
  const endpoint = (value: string | undefined, path: string, credentialsFrom: string) => {
    if (value === undefined) return;
    const problem = endpointProblem(value, credentialsFrom);
    if (problem !== undefined) problems.push({ path, message: problem });
  };
  switch (type) {
    case 's3':
      required(object.s3.bucket, 'storage.object.s3.bucket', 's3 bucket must be specified: required when storage.object.type is s3');
      endpoint(object.s3.endpoint, 'storage.object.s3.endpoint', 'the AWS SDK chain (AWS_* environment, shared config, instance role)');
      break;
    case 'azblob': {
      required(object.azblob.container, 'storage.object.azblob.container', 'azblob container must be specified: required when storage.object.type is azblob');
      endpoint(object.azblob.endpoint, 'storage.object.azblob.endpoint', `${AZURE_ENV.connectionString}, or ${AZURE_ENV.account} and ${AZURE_ENV.key}`);
      const { credentials, problem } = azureCredentialsFromEnv(env);
      if (problem !== undefined) problems.push({ path: 'storage.object.azblob', message: problem });
      if (credentials?.kind === 'connection-string' && object.azblob.endpoint !== undefined) {
        problems.push({
          path: 'storage.object.azblob.endpoint',
          message: `not together with ${AZURE_ENV.connectionString}: the connection string names the endpoint (BlobEndpoint); use ${AZURE_ENV.account} and ${AZURE_ENV.key} with an endpoint`,
        });
      }
      break;
    }
    case 'googlecloud': {
      const gc = object.googlecloud;
      required(gc.bucket, 'storage.object.googlecloud.bucket', 'googlecloud bucket must be specified: required when storage.object.type is googlecloud');
      endpoint(gc.endpoint, 'storage.object.googlecloud.endpoint', `storage.object.googlecloud.hmac, or ${GCS_HMAC_ENV.accessId} and ${GCS_HMAC_ENV.secret}`);
      const { problem } = googleHmacKey(gc, env);
      if (problem !== undefined) problems.push(problem);
      break;
    }
  }
  return problems;
}

function endpointProblem(endpoint: string, credentialsFrom: string): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'expected an http(s) URL such as http://127.0.0.1:9000';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `expected an http(s) URL (got scheme ${url.protocol})`;
  if (url.username !== '' || url.password !== '' || url.search !== '') {
    return `credentials do not belong in the endpoint (no user info, no query string): vexil takes them from ${credentialsFrom}`;
  }
  return undefined;
}

/** The provider `storage.object.type` names; objectConfigProblems has found nothing wrong. */
function providerFromConfig(object: ObjectStorageConfig, env: NodeJS.ProcessEnv): ObjectProvider {
  switch (object.type) {
    case 'azblob': {
      const az = object.azblob;
      return createAzureBlobProvider({
        container: az.container as string,
        prefix: az.prefix,
        credentials: azureCredentialsFromEnv(env).credentials as AzureCredentials,
        ...(az.endpoint !== undefined ? { endpoint: az.endpoint } : {}),
      });
    }
    case 'googlecloud': {
      const gc = object.googlecloud;
      return createGoogleCloudProvider({ bucket: gc.bucket as string, prefix: gc.prefix, endpoint: gc.endpoint, hmac: googleHmacKey(gc, env).key as HmacKey });
    }
    default: {
      const s3 = object.s3;
      return createS3Provider({
        bucket: s3.bucket as string,
        prefix: s3.prefix,
        ...(s3.region !== undefined ? { region: s3.region } : {}),
        ...(s3.endpoint !== undefined ? { endpoint: s3.endpoint } : {}),
      });
    }
  }
}


/** Throws ConfigError (with key paths) when storage.object is unusable. `ctx` is unused: nothing is kept on disk. */
export function objectStorageFromConfig(config: Config, _ctx: StorageContext, env: NodeJS.ProcessEnv = process.env): ObjectStorage {
  const object = config.storage.object;
  const problems = objectConfigProblems(object, env);
  if (problems.length > 0) throw new ConfigError(problems);
  let provider: ObjectProvider;
  try {
    provider = providerFromConfig(object, env);
  } catch (err) {
    // An unusable connection string: its message names the variable, never its value.
    if (err instanceof ObjectStoreError) throw new ConfigError([{ path: `storage.object.${object.type}`, message: err.message }]);
    throw err;
  }
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
      pollIntervalMs: objectTiming(object).poll_interval,
      prebuild: [OBJECT_REFERENCE],
      maxStalenessMs: objectTiming(object).max_staleness,
      ...ONE_REFERENCE,
    },
    description,
  };
}
