/**
 * The S3 provider (AWS S3 and S3-compatible services such as MinIO): ListObjectsV2 over the
 * prefix, GetObject pinned to the listed ETag.
 *
 * - Credentials come from the AWS SDK's default chain (AWS_* environment, shared config/credentials
 *   files, SSO, container and instance roles), unless `credentials` names a static key (the
 *   googlecloud mapping's HMAC key, which must never be mixed with AWS credentials).
 * - Region: `region` when set, else the SDK's chain (AWS_REGION, shared config), else us-east-1.
 * - `endpoint` selects path-style addressing (what S3-compatible services expect).
 * - Checksums only when the operation requires them: several S3-compatible services mishandle
 *   the SDK's default flexible checksums.
 * - Errors become ObjectStoreErrors whose messages say what to check, never a credential.
 */
import {
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
  type ListObjectsV2CommandOutput,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { ObjectStoreError, type ObjectEntry, type ObjectProvider } from './provider.js';
import { changed, endpointHost, networkCode, normalizePrefix, readCapped, unquoteEtag } from './transport.js';

export interface S3ProviderOptions {
  /** `s3` (default), or `googlecloud` when googlecloud.ts maps Google Cloud Storage onto this provider. */
  readonly type?: 's3' | 'googlecloud';
  readonly bucket: string;
  /** A folder: `prod` and `prod/` both mean the keys under `prod/`; empty = the whole bucket. */
  readonly prefix?: string;
  readonly region?: string;
  /** `http(s)://host[:port]` of an S3-compatible service; path-style addressing when set. */
  readonly endpoint?: string;
  /** Keys per listing page (default: the service's, 1000 on S3). */
  readonly pageSize?: number;
  /** Attempts per request, retries included (SDK default 3). */
  readonly maxAttempts?: number;
  /** Give up connecting after this long (default 5 s). */
  readonly connectionTimeoutMs?: number;
  /** Give up on a request without an answer after this long (default 30 s). */
  readonly requestTimeoutMs?: number;
  /** A static key used instead of the AWS SDK's default chain. */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** What refused credentials ask the operator to check (default: the AWS SDK chain's sources). */
  readonly credentialsHint?: string;
  /** URL scheme in descriptions (default `s3`). */
  readonly scheme?: string;
  /** An endpoint descriptions leave out (the service's public one). */
  readonly defaultEndpoint?: string;
}

export interface S3ProviderStats {
  /** ListObjectsV2 requests sent (one per page, retries included). */
  readonly listRequests: number;
  /** GetObject requests sent (retries included). */
  readonly getRequests: number;
  /** Object bytes downloaded. */
  readonly bytesReceived: number;
}

export interface S3Provider extends ObjectProvider {
  readonly type: 's3' | 'googlecloud';
  readonly bucket: string;
  /** Normalized: empty, or ending with `/`. */
  readonly prefix: string;
  stats(): S3ProviderStats;
}

const FALLBACK_REGION = 'us-east-1';
const AWS_CREDENTIALS_HINT = 'check the AWS credentials vexil runs with (AWS_* environment, shared config and credentials files, instance or container role)';

export function createS3Provider(opts: S3ProviderOptions): S3Provider {
  const { bucket } = opts;
  const prefix = normalizePrefix(opts.prefix);
  const location = `${opts.scheme ?? 's3'}://${bucket}/${prefix}`;
  const described = opts.endpoint !== undefined && opts.endpoint !== opts.defaultEndpoint ? `${location} at ${endpointHost(opts.endpoint)}` : location;
  let listRequests = 0;
  let getRequests = 0;
  let bytesReceived = 0;
  let resolvedRegion: string | undefined;
  let clientP: Promise<S3Client> | undefined;

  async function makeClient(): Promise<S3Client> {
    const region = opts.region ?? (await regionFromSdkChain()) ?? FALLBACK_REGION;
    resolvedRegion = region;
    const config: S3ClientConfig = {
      region,
      // A bucket in another region than the one configured (or defaulted) is still found.
      followRegionRedirects: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: {
        connectionTimeout: opts.connectionTimeoutMs ?? 5_000,
        requestTimeout: opts.requestTimeoutMs ?? 30_000,
      },
      ...(opts.maxAttempts !== undefined ? { maxAttempts: opts.maxAttempts } : {}),
      ...(opts.credentials !== undefined ? { credentials: { accessKeyId: opts.credentials.accessKeyId, secretAccessKey: opts.credentials.secretAccessKey } } : {}),
      ...(opts.endpoint !== undefined ? { endpoint: opts.endpoint, forcePathStyle: true } : {}),
    };
    const client = new S3Client(config);
    // Counted inside the retry loop: one count per HTTP request actually sent.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'ListObjectsV2Command') listRequests++;
        else if (context.commandName === 'GetObjectCommand') getRequests++;
        return next(args);
      },
      { step: 'finalizeRequest', priority: 'low', name: 'vexilRequestCounter' },
    );
    return client;
  }

  const client = () => {
    clientP ??= makeClient();
    return clientP;
  };

  /** Where requests go, for "unreachable" messages. */
  const target = () => (opts.endpoint !== undefined ? endpointHost(opts.endpoint) : `s3.${resolvedRegion ?? FALLBACK_REGION}.amazonaws.com`);

  function mapError(err: unknown, what: string): ObjectStoreError {
    if (err instanceof ObjectStoreError) return err;
    const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    const name = e.name ?? 'Error';
    const status = e.$metadata?.httpStatusCode;
    if (name === 'NoSuchBucket') {
      return new ObjectStoreError('no-bucket', `bucket "${bucket}" does not exist (${described})`, { cause: err });
    }
    if (name === 'RequestTimeTooSkewed') {
      return new ObjectStoreError('other', `${described} refused the request: this machine's clock is too far off (RequestTimeTooSkewed)`, { cause: err });
    }
    if (CREDENTIAL_ERRORS.has(name) || status === 401 || status === 403) {
      return new ObjectStoreError(
        'credentials',
        `credentials refused by ${described} (${name}${status !== undefined ? `, HTTP ${status}` : ''}): ${opts.credentialsHint ?? AWS_CREDENTIALS_HINT}`,
        { cause: err },
      );
    }
    if (name === 'CredentialsProviderError') {
      return new ObjectStoreError(
        'credentials',
        `no AWS credentials found for ${described}: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, a shared config profile (AWS_PROFILE) or an instance or container role`,
        { cause: err },
      );
    }
    const code = networkCode(err);
    if (status === undefined && (code !== undefined || name === 'TimeoutError')) {
      return new ObjectStoreError('unreachable', `unreachable ${target()} (${code ?? name}) while ${what} ${location}`, { cause: err });
    }
    const detail = e.message !== undefined && e.message !== '' && e.message !== name ? `: ${e.message}` : '';
    return new ObjectStoreError(
      'other',
      `${what} ${described} failed (${name}${status !== undefined ? `, HTTP ${status}` : ''})${detail}`,
      { cause: err },
    );
  }

  return {
    type: opts.type ?? 's3',
    bucket,
    prefix,
    describe: () => described,
    async list() {
      const s3 = await client();
      const out: ObjectEntry[] = [];
      let token: string | undefined;
      do {
        let page: ListObjectsV2CommandOutput;
        try {
          page = await s3.send(
            new ListObjectsV2Command({
              Bucket: bucket,
              ...(prefix !== '' ? { Prefix: prefix } : {}),
              ...(token !== undefined ? { ContinuationToken: token } : {}),
              ...(opts.pageSize !== undefined ? { MaxKeys: opts.pageSize } : {}),
            }),
          );
        } catch (err) {
          throw mapError(err, 'listing');
        }
        for (const o of page.Contents ?? []) {
          if (o.Key === undefined || !o.Key.startsWith(prefix)) continue;
          const key = o.Key.slice(prefix.length);
          if (key === '' || key.endsWith('/')) continue; // folder markers
          out.push({
            key,
            etag: unquoteEtag(o.ETag ?? ''),
            size: o.Size ?? 0,
            ...(o.LastModified !== undefined ? { lastModified: o.LastModified.toISOString() } : {}),
          });
        }
        token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
      } while (token !== undefined);
      return out;
    },
    async get(key, etag, maxBytes) {
      const s3 = await client();
      const where = `${location}${key}`;
      try {
        const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: prefix + key, ...(etag !== '' ? { IfMatch: `"${etag}"` } : {}) }));
        // Some S3-compatible services ignore If-Match: check what was actually sent.
        const got = unquoteEtag(res.ETag ?? '');
        if (got !== '' && got !== etag) {
          (res.Body as { destroy?: () => void } | undefined)?.destroy?.();
          throw changed(where);
        }
        const bytes = res.Body === undefined ? new Uint8Array() : await readCapped(res.Body as unknown as AsyncIterable<Uint8Array>, res.ContentLength, maxBytes, where);
        bytesReceived += bytes.byteLength;
        return bytes;
      } catch (err) {
        const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
        if (e.name === 'PreconditionFailed' || e.$metadata?.httpStatusCode === 412) throw changed(where);
        if (e.name === 'NoSuchKey' || (e.name === 'NotFound' && e.$metadata?.httpStatusCode === 404)) {
          throw new ObjectStoreError('not-found', `${where} was deleted after it was listed; the next poll reads the new listing`, { cause: err });
        }
        throw mapError(err, `reading ${key} of`);
      }
    },
    stats: () => ({ listRequests, getRequests, bytesReceived }),
    async close() {
      const c = clientP;
      clientP = undefined;
      if (c !== undefined) (await c.catch(() => undefined))?.destroy();
    },
  };
}

/** Refusals that mean "these credentials are not accepted here". */
const CREDENTIAL_ERRORS = new Set([
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'InvalidToken',
  'TokenRefreshRequired',
  'AllAccessDisabled',
]);

/** The region the SDK would pick by itself (AWS_REGION, shared config), if any. */
async function regionFromSdkChain(): Promise<string | undefined> {
  const probe = new S3Client({});
  try {
    return await probe.config.region();
  } catch {
    return undefined;
  } finally {
    probe.destroy();
  }
}
