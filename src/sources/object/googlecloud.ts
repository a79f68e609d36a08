/**
 * Google Cloud Storage as an S3 provider: `storage.object.type: googlecloud` is served by s3.ts
 * talking to GCS's XML API, which speaks the S3 protocol to clients signing with an HMAC key. No
 * native GCS client: there is no GCS-protocol server to test one against (docs/backends.md says
 * exactly what is and is not tested).
 *
 * What this mapping relies on (GCS documentation: interoperability, simple migration from S3,
 * XML API list objects, hashes and ETags):
 * - Endpoint `https://storage.googleapis.com`, path-style (`/bucket/key`), AWS Signature V4 with the
 *   HMAC key's access id and secret. The signing region is `auto`: GCS does not route by region and
 *   S3 clients pointed at GCS commonly sign with it; the documentation read does not list the
 *   regions GCS accepts (docs/backends.md marks this untested).
 * - Listing is ListObjectsV2 (`list-type=2`, `continuation-token`), ordered by name, ETags quoted.
 * - An ETag is the MD5 of the bytes only for simple uploads; composite objects and XML multipart
 *   uploads get other values, and the same object may carry another ETag in the JSON API. The S3
 *   provider treats ETags as opaque strings compared for equality within this one API, never as
 *   checksums, so all of these work; a metadata-only change that alters an ETag costs one download.
 * - Reads honour `If-Match` (412 when the object changed); s3.ts also compares the ETag answered.
 * - The HMAC key comes from the config (`hmac.access_id` + `hmac.secret`) or else from
 *   GOOGLE_HMAC_ACCESS_ID + GOOGLE_HMAC_SECRET, both halves from the same place. AWS credentials
 *   are never used for it (the key is passed to the client, the AWS chain is not consulted).
 */
import { schemaDefault } from '../../config/defaults.js';
import type { ObjectStorageConfig } from '../../config/types.js';
import type { ConfigProblem } from '../../config/errors.js';
import { createS3Provider, type S3Provider } from './s3.js';

/** The XML API's public endpoint: the schema's default of `storage.object.googlecloud.endpoint`, left out of descriptions. */
export const GCS_ENDPOINT = schemaDefault(['storage', 'object', 'googlecloud', 'endpoint']) as string;
/** The SigV4 signing region GCS's XML API accepts for every bucket location. */
export const GCS_SIGNING_REGION = 'auto';

export const GCS_HMAC_ENV = { accessId: 'GOOGLE_HMAC_ACCESS_ID', secret: 'GOOGLE_HMAC_SECRET' } as const;

export interface HmacKey {
  readonly accessId: string;
  readonly secret: string;
}

type GoogleCloudConfig = ObjectStorageConfig['googlecloud'];

/** The HMAC key from the config, else from the environment; a problem when neither holds both halves. */
export function googleHmacKey(gc: GoogleCloudConfig, env: NodeJS.ProcessEnv): { key?: HmacKey; problem?: ConfigProblem } {
  const { access_id: accessId, secret } = gc.hmac;
  if (accessId !== undefined || secret !== undefined) {
    if (accessId === undefined || secret === undefined) {
      return { problem: { path: 'storage.object.googlecloud.hmac', message: 'access_id and secret are set together (or neither, to take GOOGLE_HMAC_ACCESS_ID and GOOGLE_HMAC_SECRET)' } };
    }
    return { key: { accessId, secret } };
  }
  const envId = nonEmpty(env[GCS_HMAC_ENV.accessId]);
  const envSecret = nonEmpty(env[GCS_HMAC_ENV.secret]);
  if (envId !== undefined && envSecret !== undefined) return { key: { accessId: envId, secret: envSecret } };
  return {
    problem: {
      path: 'storage.object.googlecloud.hmac',
      message:
        `an HMAC key is required: set ${GCS_HMAC_ENV.accessId} and ${GCS_HMAC_ENV.secret}` +
        ' (or storage.object.googlecloud.hmac.access_id and .secret); create one for a service account with read access to the bucket',
    },
  };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

export interface GoogleCloudProviderOptions {
  readonly bucket: string;
  readonly prefix?: string;
  /** `storage.object.googlecloud.endpoint` (GCS_ENDPOINT unless set otherwise). */
  readonly endpoint: string;
  readonly hmac: HmacKey;
  /** As in S3ProviderOptions (tests). */
  readonly pageSize?: number;
  readonly maxAttempts?: number;
}

/** The S3 provider configured for GCS's XML API. Descriptions read `gs://bucket/prefix/`. */
export function createGoogleCloudProvider(opts: GoogleCloudProviderOptions): S3Provider {
  return createS3Provider({
    type: 'googlecloud',
    scheme: 'gs',
    bucket: opts.bucket,
    ...(opts.prefix !== undefined ? { prefix: opts.prefix } : {}),
    endpoint: opts.endpoint,
    defaultEndpoint: GCS_ENDPOINT,
    region: GCS_SIGNING_REGION,
    credentials: { accessKeyId: opts.hmac.accessId, secretAccessKey: opts.hmac.secret },
    credentialsHint: `check the HMAC key (storage.object.googlecloud.hmac, or ${GCS_HMAC_ENV.accessId} and ${GCS_HMAC_ENV.secret}) and that its service account can list and read the bucket`,
    ...(opts.pageSize !== undefined ? { pageSize: opts.pageSize } : {}),
    ...(opts.maxAttempts !== undefined ? { maxAttempts: opts.maxAttempts } : {}),
  });
}
