/**
 * The Azure Blob Storage provider (`storage.object.type: azblob`, `@azure/storage-blob`): List
 * Blobs (flat) over the prefix, Get Blob pinned to the listed ETag.
 *
 * - Credentials come from the environment only, with Flipt's variables: AZURE_STORAGE_CONNECTION_STRING,
 *   or AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY (Shared Key). They never reach a message: the
 *   description is the container, prefix and the endpoint's host and path (no query: a connection
 *   string's SAS token would be there).
 * - Endpoint: `endpoint` when set (Azurite: `http://127.0.0.1:10000/devstoreaccount1`), else the
 *   connection string's, else `https://<account>.blob.core.windows.net`.
 * - ETags: the service quotes them in response headers and not in listings; both are compared
 *   without quotes. A read sends `If-Match` and also checks the ETag answered.
 * - Retries: a few quick ones (the SDK's default waits up to minutes per request, which would hold
 *   a poll that long during an outage); the poller backs off between failed polls.
 * - Errors become ObjectStoreErrors whose messages say what to check, never a credential; the
 *   SDK's error is not kept as their cause (it carries the signed request), so a logger cannot print it.
 */
import { BlobServiceClient, StorageSharedKeyCredential, type ContainerClient, type StoragePipelineOptions } from '@azure/storage-blob';
import { ObjectStoreError, type ObjectEntry, type ObjectProvider } from './provider.js';
import { changed, networkCode, normalizePrefix, readCapped, unquoteEtag } from './transport.js';

export const AZURE_ENV = {
  connectionString: 'AZURE_STORAGE_CONNECTION_STRING',
  account: 'AZURE_STORAGE_ACCOUNT',
  key: 'AZURE_STORAGE_KEY',
} as const;

export type AzureCredentials =
  | { readonly kind: 'connection-string'; readonly connectionString: string }
  | { readonly kind: 'shared-key'; readonly account: string; readonly key: string };

/** The credentials the environment names, or why there are none (variable names only, never values). */
export function azureCredentialsFromEnv(env: NodeJS.ProcessEnv): { credentials?: AzureCredentials; problem?: string } {
  const conn = env[AZURE_ENV.connectionString];
  if (conn !== undefined && conn !== '') return { credentials: { kind: 'connection-string', connectionString: conn } };
  const account = env[AZURE_ENV.account];
  const key = env[AZURE_ENV.key];
  if (account !== undefined && account !== '' && key !== undefined && key !== '') return { credentials: { kind: 'shared-key', account, key } };
  const missing = account !== undefined && account !== '' ? AZURE_ENV.key : key !== undefined && key !== '' ? AZURE_ENV.account : undefined;
  return {
    problem:
      `azblob needs credentials from the environment: ${AZURE_ENV.connectionString}, or ${AZURE_ENV.account} and ${AZURE_ENV.key}` +
      (missing !== undefined ? ` (${missing} is not set)` : ''),
  };
}

export interface AzureBlobProviderOptions {
  readonly container: string;
  /** A folder: `prod` and `prod/` both mean the blobs under `prod/`; empty = the whole container. */
  readonly prefix?: string;
  /** Blob service URL; default the connection string's, else https://<account>.blob.core.windows.net. */
  readonly endpoint?: string;
  readonly credentials: AzureCredentials;
  /** Blobs per listing page (default: the service's, 5000). */
  readonly pageSize?: number;
  /** Tries per request, the first included (default 3). */
  readonly maxTries?: number;
  /** Give up on one try after this long (default 30 s). */
  readonly tryTimeoutMs?: number;
}

export interface AzureBlobProviderStats {
  /** List Blobs pages requested (the SDK's retries not counted). */
  readonly listRequests: number;
  /** Get Blob requests made (the SDK's retries not counted). */
  readonly getRequests: number;
  /** Blob bytes downloaded. */
  readonly bytesReceived: number;
}

export interface AzureBlobProvider extends ObjectProvider {
  readonly type: 'azblob';
  readonly container: string;
  /** Normalized: empty, or ending with `/`. */
  readonly prefix: string;
  stats(): AzureBlobProviderStats;
}

/** The blob service URL's host and path, for messages (no user info, no query). */
function serviceLocation(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname.replace(/\/+$/, '')}`;
  } catch {
    return '(invalid endpoint)';
  }
}

/** Throws ObjectStoreError (kind credentials) when the connection string cannot be used; its text is never repeated. */
function serviceClient(opts: AzureBlobProviderOptions): BlobServiceClient {
  const pipeline: StoragePipelineOptions = {
    retryOptions: { maxTries: opts.maxTries ?? 3, retryDelayInMs: 200, maxRetryDelayInMs: 2_000, tryTimeoutInMs: opts.tryTimeoutMs ?? 30_000 },
  };
  const creds = opts.credentials;
  if (creds.kind === 'shared-key') {
    const endpoint = opts.endpoint ?? `https://${creds.account}.blob.core.windows.net`;
    return new BlobServiceClient(endpoint, new StorageSharedKeyCredential(creds.account, creds.key), pipeline);
  }
  let client: BlobServiceClient;
  try {
    client = BlobServiceClient.fromConnectionString(creds.connectionString, pipeline);
  } catch {
    // The SDK's message may quote the string: not passed on, not kept as the cause.
    throw new ObjectStoreError('credentials', `${AZURE_ENV.connectionString} is not a usable connection string (expected AccountName, AccountKey or SharedAccessSignature, and BlobEndpoint or EndpointSuffix)`);
  }
  return client;
}

export function createAzureBlobProvider(opts: AzureBlobProviderOptions): AzureBlobProvider {
  const { container } = opts;
  const prefix = normalizePrefix(opts.prefix);
  const service = serviceClient(opts);
  const containerClient: ContainerClient = service.getContainerClient(container);
  const location = `azblob://${container}/${prefix}`;
  const host = serviceLocation(service.url);
  const described = `${location} at ${host}`;
  let listRequests = 0;
  let getRequests = 0;
  let bytesReceived = 0;

  function mapError(err: unknown, what: string): ObjectStoreError {
    if (err instanceof ObjectStoreError) return err;
    const e = err as { name?: string; code?: string; statusCode?: number; message?: string };
    const code = e.code;
    const status = e.statusCode;
    if (code === 'ContainerNotFound') {
      return new ObjectStoreError('no-bucket', `container "${container}" does not exist (${described})`);
    }
    if (status === 401 || status === 403 || code === 'AuthenticationFailed' || code === 'AuthorizationFailure') {
      return new ObjectStoreError(
        'credentials',
        `credentials refused by ${described} (${code ?? 'Forbidden'}${status !== undefined ? `, HTTP ${status}` : ''}): ` +
          `check ${AZURE_ENV.connectionString}, or ${AZURE_ENV.account} and ${AZURE_ENV.key}, and that they grant read and list on the container`,
      );
    }
    const net = networkCode(err);
    if (status === undefined && (net !== undefined || code === 'REQUEST_SEND_ERROR' || e.name === 'AbortError')) {
      return new ObjectStoreError('unreachable', `unreachable ${host} (${net ?? code ?? e.name}) while ${what} ${location}`);
    }
    const label = code ?? e.name ?? 'Error';
    return new ObjectStoreError('other', `${what} ${described} failed (${label}${status !== undefined ? `, HTTP ${status}` : ''})`);
  }

  return {
    type: 'azblob',
    container,
    prefix,
    describe: () => described,
    async list() {
      const out: ObjectEntry[] = [];
      const pages = containerClient.listBlobsFlat(prefix !== '' ? { prefix } : {}).byPage(opts.pageSize !== undefined ? { maxPageSize: opts.pageSize } : {});
      try {
        for (;;) {
          listRequests++;
          const next = await pages.next();
          if (next.done === true) {
            listRequests--; // the end of the pages is known without a request
            break;
          }
          for (const b of next.value.segment.blobItems) {
            if (!b.name.startsWith(prefix) || b.deleted === true) continue;
            const key = b.name.slice(prefix.length);
            if (key === '' || key.endsWith('/')) continue; // folder markers
            out.push({
              key,
              etag: unquoteEtag(b.properties.etag ?? ''),
              size: b.properties.contentLength ?? 0,
              lastModified: b.properties.lastModified.toISOString(),
            });
          }
        }
      } catch (err) {
        throw mapError(err, 'listing');
      }
      return out;
    },
    async get(key, etag, maxBytes) {
      const where = `${location}${key}`;
      getRequests++;
      try {
        const res = await containerClient.getBlobClient(prefix + key).download(0, undefined, etag !== '' ? { conditions: { ifMatch: `"${etag}"` } } : {});
        const body = res.readableStreamBody as (NodeJS.ReadableStream & AsyncIterable<Uint8Array> & { destroy?: () => void }) | undefined;
        const got = unquoteEtag(res.etag ?? '');
        if (got !== '' && etag !== '' && got !== etag) {
          body?.destroy?.();
          throw changed(where);
        }
        const bytes = body === undefined ? new Uint8Array() : await readCapped(body, res.contentLength, maxBytes, where);
        bytesReceived += bytes.byteLength;
        return bytes;
      } catch (err) {
        if (err instanceof ObjectStoreError) throw err;
        const e = err as { code?: string; statusCode?: number };
        if (e.statusCode === 412 || e.code === 'ConditionNotMet') throw changed(where);
        if (e.code === 'BlobNotFound' || (e.statusCode === 404 && e.code !== 'ContainerNotFound')) {
          throw new ObjectStoreError('not-found', `${where} was deleted after it was listed; the next poll reads the new listing`);
        }
        throw mapError(err, `reading ${key} of`);
      }
    },
    stats: () => ({ listRequests, getRequests, bytesReceived }),
  };
}
