/**
 * The object-store backends the shared table of cases (test/sources/object-table.ts) runs
 * against, each a real server on loopback behind one harness shape:
 * - `s3`: s3rver, reached by the S3 provider with credentials from the AWS SDK chain;
 * - `azblob`: Azurite, reached by the Azure Blob provider with AZURE_STORAGE_* credentials;
 * - `googlecloud`: s3rver again, reached through the googlecloud mapping (endpoint = s3rver,
 *   HMAC key = s3rver's key from GOOGLE_HMAC_*): what the mapping sends is S3 on the wire, and
 *   s3rver checks its signatures. No GCS server runs here (docs/backends.md).
 * Every harness writes to the bucket/container `flags` and names the store config (VEXIL_*) and the
 * credential variables (`credentialEnv`) that point vexil at it.
 */
import { AZURITE_ACCOUNT, AZURITE_KEY, startAzuriteServer } from './azurite-server.js';
import type { Teardown } from './git-repo.js';
import { S3RVER_CREDENTIALS, startS3Server, useAwsEnv } from './s3-server.js';
import { createAzureBlobProvider } from '../../src/sources/object/azblob.js';
import { createGoogleCloudProvider } from '../../src/sources/object/googlecloud.js';
import type { ObjectProvider } from '../../src/sources/object/provider.js';
import { createS3Provider } from '../../src/sources/object/s3.js';

export type BackendName = 's3' | 'azblob' | 'googlecloud';

/** What the providers under test count (S3Provider, AzureBlobProvider). */
export interface CountingProvider extends ObjectProvider {
  stats(): { listRequests: number; getRequests: number; bytesReceived: number };
}

export interface ProviderOptions {
  readonly bucket?: string;
  readonly prefix?: string;
  readonly pageSize?: number;
  /** 1 = no retries (tests that stop the server). */
  readonly maxAttempts?: number;
}

export interface BackendServer {
  readonly name: BackendName;
  /** The scheme of descriptions: `s3`, `azblob`, `gs`. */
  readonly scheme: string;
  readonly port: number;
  readonly running: boolean;
  /** VEXIL_STORAGE_* naming this server (poll_interval 1h unless given: tests poll with store.refresh()). */
  configEnv(opts?: { prefix?: string; pollInterval?: string; bucket?: string }): Record<string, string>;
  /** The credential variables vexil reads for this backend (`wrong`: a key the server refuses). */
  credentialEnv(opts?: { wrong?: boolean }): Record<string, string>;
  /** Writes `key` into `flags`; returns its ETag without quotes. */
  put(key: string, body: string | Uint8Array): Promise<string>;
  remove(key: string): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** A provider built directly (not from config) against this server. */
  provider(opts?: ProviderOptions): CountingProvider;
}

export interface ObjectBackend {
  readonly name: BackendName;
  /** Starts the server; the AWS variables are pinned for the test (no developer ~/.aws leaks in). */
  start(t: Teardown): Promise<BackendServer>;
}

const BUCKET = 'flags';
/** A key each server refuses: s3rver knows only S3RVER; Azurite checks the account key's signature. */
const WRONG_AZURE_KEY = Buffer.from('not-the-azurite-key-but-64-bytes-long-enough-for-a-signing-key!!').toString('base64');

const s3: ObjectBackend = {
  name: 's3',
  async start(t) {
    useAwsEnv(t);
    const server = await startS3Server(t, { buckets: [BUCKET, 'other-bucket'] });
    return {
      name: 's3',
      scheme: 's3',
      get port() {
        return server.port;
      },
      get running() {
        return server.running;
      },
      configEnv: ({ prefix, pollInterval, bucket } = {}) => ({
        VEXIL_STORAGE_TYPE: 'object',
        VEXIL_STORAGE_OBJECT_TYPE: 's3',
        VEXIL_STORAGE_OBJECT_S3_BUCKET: bucket ?? BUCKET,
        VEXIL_STORAGE_OBJECT_S3_ENDPOINT: server.endpoint,
        VEXIL_STORAGE_OBJECT_S3_POLL_INTERVAL: pollInterval ?? '1h',
        ...(prefix !== undefined ? { VEXIL_STORAGE_OBJECT_S3_PREFIX: prefix } : {}),
      }),
      credentialEnv: ({ wrong } = {}) => ({
        AWS_ACCESS_KEY_ID: wrong === true ? 'NOT-S3RVER' : S3RVER_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      }),
      put: (key, body) => server.put(BUCKET, key, body),
      remove: (key) => server.remove(BUCKET, key),
      stop: () => server.stop(),
      restart: () => server.restart(),
      provider: (opts = {}) =>
        createS3Provider({
          bucket: opts.bucket ?? BUCKET,
          endpoint: server.endpoint,
          ...(opts.prefix !== undefined ? { prefix: opts.prefix } : {}),
          ...(opts.pageSize !== undefined ? { pageSize: opts.pageSize } : {}),
          ...(opts.maxAttempts !== undefined ? { maxAttempts: opts.maxAttempts } : {}),
        }),
    };
  },
};

const azblob: ObjectBackend = {
  name: 'azblob',
  async start(t) {
    useAwsEnv(t);
    const server = await startAzuriteServer(t, { containers: [BUCKET, 'other-bucket'] });
    useEnv(t, { AZURE_STORAGE_CONNECTION_STRING: undefined, AZURE_STORAGE_ACCOUNT: AZURITE_ACCOUNT, AZURE_STORAGE_KEY: AZURITE_KEY });
    return {
      name: 'azblob',
      scheme: 'azblob',
      get port() {
        return server.port;
      },
      get running() {
        return server.running;
      },
      configEnv: ({ prefix, pollInterval, bucket } = {}) => ({
        VEXIL_STORAGE_TYPE: 'object',
        VEXIL_STORAGE_OBJECT_TYPE: 'azblob',
        VEXIL_STORAGE_OBJECT_AZBLOB_CONTAINER: bucket ?? BUCKET,
        VEXIL_STORAGE_OBJECT_AZBLOB_ENDPOINT: server.endpoint,
        VEXIL_STORAGE_OBJECT_AZBLOB_POLL_INTERVAL: pollInterval ?? '1h',
        ...(prefix !== undefined ? { VEXIL_STORAGE_OBJECT_AZBLOB_PREFIX: prefix } : {}),
      }),
      credentialEnv: ({ wrong } = {}) => ({ AZURE_STORAGE_ACCOUNT: AZURITE_ACCOUNT, AZURE_STORAGE_KEY: wrong === true ? WRONG_AZURE_KEY : AZURITE_KEY }),
      put: (key, body) => server.put(BUCKET, key, body),
      remove: (key) => server.remove(BUCKET, key),
      stop: () => server.stop(),
      restart: () => server.restart(),
      provider: (opts = {}) =>
        createAzureBlobProvider({
          container: opts.bucket ?? BUCKET,
          endpoint: server.endpoint,
          credentials: { kind: 'shared-key', account: AZURITE_ACCOUNT, key: AZURITE_KEY },
          ...(opts.prefix !== undefined ? { prefix: opts.prefix } : {}),
          ...(opts.pageSize !== undefined ? { pageSize: opts.pageSize } : {}),
          ...(opts.maxAttempts !== undefined ? { maxTries: opts.maxAttempts } : {}),
        }),
    };
  },
};

const googlecloud: ObjectBackend = {
  name: 'googlecloud',
  async start(t) {
    // No AWS credentials at all: the mapping must sign with the HMAC key alone.
    useAwsEnv(t, { AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined });
    const server = await startS3Server(t, { buckets: [BUCKET, 'other-bucket'] });
    const hmac = { accessId: S3RVER_CREDENTIALS.accessKeyId, secret: S3RVER_CREDENTIALS.secretAccessKey };
    useEnv(t, { GOOGLE_HMAC_ACCESS_ID: hmac.accessId, GOOGLE_HMAC_SECRET: hmac.secret });
    return {
      name: 'googlecloud',
      scheme: 'gs',
      get port() {
        return server.port;
      },
      get running() {
        return server.running;
      },
      configEnv: ({ prefix, pollInterval, bucket } = {}) => ({
        VEXIL_STORAGE_TYPE: 'object',
        VEXIL_STORAGE_OBJECT_TYPE: 'googlecloud',
        VEXIL_STORAGE_OBJECT_GOOGLECLOUD_BUCKET: bucket ?? BUCKET,
        VEXIL_STORAGE_OBJECT_GOOGLECLOUD_ENDPOINT: server.endpoint,
        VEXIL_STORAGE_OBJECT_GOOGLECLOUD_POLL_INTERVAL: pollInterval ?? '1h',
        ...(prefix !== undefined ? { VEXIL_STORAGE_OBJECT_GOOGLECLOUD_PREFIX: prefix } : {}),
      }),
      credentialEnv: ({ wrong } = {}) => ({ GOOGLE_HMAC_ACCESS_ID: wrong === true ? 'GOOG1-NOT-S3RVER' : hmac.accessId, GOOGLE_HMAC_SECRET: hmac.secret }),
      put: (key, body) => server.put(BUCKET, key, body),
      remove: (key) => server.remove(BUCKET, key),
      stop: () => server.stop(),
      restart: () => server.restart(),
      provider: (opts = {}) =>
        createGoogleCloudProvider({
          bucket: opts.bucket ?? BUCKET,
          endpoint: server.endpoint,
          hmac,
          ...(opts.prefix !== undefined ? { prefix: opts.prefix } : {}),
          ...(opts.pageSize !== undefined ? { pageSize: opts.pageSize } : {}),
          ...(opts.maxAttempts !== undefined ? { maxAttempts: opts.maxAttempts } : {}),
        }),
    };
  },
};

export const OBJECT_BACKENDS: Readonly<Record<BackendName, ObjectBackend>> = { s3, azblob, googlecloud };

/** Sets (or, for undefined, clears) process environment variables for one test; restored at teardown. */
export function useEnv(t: Teardown, vars: Record<string, string | undefined>): void {
  const saved = new Map<string, string | undefined>();
  for (const [k, v] of Object.entries(vars)) {
    saved.set(k, process.env[k]);
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  t.teardown(() => {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}
