/**
 * The HTTP client behind every request to the Git server (isomorphic-git's `HttpClient` shape,
 * also used directly for listing refs). Why our own rather than isomorphic-git/http/node:
 * - a deadline: a server that accepts the connection and then stalls must fail the poll, not
 *   hang it (and with it every build queued behind it);
 * - TLS settings from the config (`insecure_skip_tls`, extra CAs from `ca_cert_path`);
 * - keep-alive connections reused across polls (a no-change poll is one request on a warm socket),
 *   with the one retry Node recommends when a reused socket turns out closed by the server;
 * - counters of requests and bytes (tests count round trips; the benchmark reports them);
 * - a cap on the bytes of each response, checked as they arrive: a server (or a man in the middle)
 *   sending an endless answer fails the request instead of filling memory. Ref listings get
 *   `maxResponseBytes`; a fetch passes its own, larger cap for the pack (see pack-fetch.ts).
 * Redirects are followed (at most 5); credentials are not sent to another origin.
 */
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { rootCertificates } from 'node:tls';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';

export interface GitHttpClientOptions {
  readonly insecureSkipTls?: boolean;
  /** PEM text of extra certificate authorities (added to Node's bundled roots). */
  readonly caPem?: string;
  /** A request fails when the server sends nothing for this long (default 30 s). */
  readonly idleTimeoutMs?: number;
  /** A request fails when not complete after this long (default 10 min: large first fetches). */
  readonly totalTimeoutMs?: number;
  readonly userAgent?: string;
  /** Bytes one response may carry unless the request says otherwise (default MAX_LISTING_BYTES). */
  readonly maxResponseBytes?: number;
}

/**
 * Default cap of a response: ref advertisements and listings. A v0/v1 advertisement lists every
 * ref, pull-request refs included: ~70 bytes each, so 64 MiB is ~900,000 refs, several times what
 * the largest public repositories advertise (kubernetes/kubernetes: ~300,000 with its PR refs).
 */
export const MAX_LISTING_BYTES = 64 * 1024 * 1024;

/** GitTransportError code of a request abandoned (or refused) because the client was closed. */
export const CLOSED = 'ECLOSED';

/** GitTransportError code of a response over its cap. */
export const RESPONSE_TOO_LARGE = 'ERESPONSETOOLARGE';

/** isomorphic-git's request, plus a cap on this response's bytes. */
export type CappedGitHttpRequest = GitHttpRequest & { readonly maxResponseBytes?: number };

export interface GitHttpStats {
  /** HTTP requests sent (each redirect hop and retry counts). */
  requests: number;
  bytesSent: number;
  bytesReceived: number;
}

export interface GitHttpClient extends HttpClient {
  request(req: CappedGitHttpRequest): Promise<GitHttpResponse>;
  readonly stats: GitHttpStats;
  /**
   * Abandons the requests in flight (they fail with GitTransportError code `ECLOSED`), refuses
   * new ones the same way, and closes every connection: shutting down never waits on a Git
   * server that stopped answering.
   */
  close(): void;
}

/** Thrown for transport failures (connection, TLS, timeout), with a message fit for status pages. */
export class GitTransportError extends Error {
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.name = 'GitTransportError';
    this.code = code;
  }
}

const MAX_REDIRECTS = 5;

export function createGitHttpClient(opts: GitHttpClientOptions = {}): GitHttpClient {
  const idleTimeoutMs = opts.idleTimeoutMs ?? 30_000;
  const totalTimeoutMs = opts.totalTimeoutMs ?? 600_000;
  const stats: GitHttpStats = { requests: 0, bytesSent: 0, bytesReceived: 0 };
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const httpsAgent = new https.Agent({
    keepAlive: true,
    maxSockets: 4,
    rejectUnauthorized: opts.insecureSkipTls !== true,
    ...(opts.caPem !== undefined ? { ca: [...rootCertificates, opts.caPem] } : {}),
  });
  const userAgent = opts.userAgent ?? 'git/isomorphic-git vexil';
  const defaultMaxBytes = opts.maxResponseBytes ?? MAX_LISTING_BYTES;
  /** The `fail` of every request in flight, to abandon them on close. */
  const inFlight = new Set<(err: Error) => void>();
  let closed = false;
  const closedError = () => new GitTransportError('the git source is closed (shutting down)', CLOSED);

  function once(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    maxBytes: number,
  ): Promise<{ res: IncomingMessage; data: Buffer; reused: boolean }> {
    const isHttps = url.protocol === 'https:';
    return new Promise((resolve, reject) => {
      if (closed) {
        reject(closedError());
        return;
      }
      stats.requests++;
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        inFlight.delete(fail);
        clearTimeout(total);
        req.destroy();
        reject(err);
      };
      inFlight.add(fail);
      const req = (isHttps ? https : http).request(url, {
        method,
        headers: { 'user-agent': userAgent, ...headers, ...(body !== undefined ? { 'content-length': String(body.length) } : {}) },
        agent: isHttps ? httpsAgent : httpAgent,
      });
      const total = setTimeout(
        () => fail(new GitTransportError(`the git server at ${url.host} did not answer within ${totalTimeoutMs / 1000}s`, 'ETIMEDOUT')),
        totalTimeoutMs,
      );
      req.setTimeout(idleTimeoutMs, () =>
        fail(new GitTransportError(`the git server at ${url.host} sent nothing for ${idleTimeoutMs / 1000}s`, 'ETIMEDOUT')),
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (settled) return;
        const wrapped = transportError(err, url);
        (wrapped as { reused?: boolean }).reused = req.reusedSocket;
        fail(wrapped);
      });
      req.on('response', (res) => {
        const declared = Number(res.headers['content-length']);
        if (declared > maxBytes) {
          fail(tooLarge(url, maxBytes));
          return;
        }
        const chunks: Buffer[] = [];
        let received = 0;
        res.on('data', (c: Buffer) => {
          stats.bytesReceived += c.length;
          received += c.length;
          if (received > maxBytes) fail(tooLarge(url, maxBytes));
          else chunks.push(c);
        });
        res.on('error', (err: NodeJS.ErrnoException) => fail(transportError(err, url)));
        res.on('end', () => {
          if (settled) return;
          settled = true;
          inFlight.delete(fail);
          clearTimeout(total);
          resolve({ res, data: Buffer.concat(chunks), reused: req.reusedSocket });
        });
      });
      if (body !== undefined) stats.bytesSent += body.length;
      req.end(body);
    });
  }

  async function sendWithRetry(url: URL, method: string, headers: Record<string, string>, body: Buffer | undefined, maxBytes: number) {
    try {
      return await once(url, method, headers, body, maxBytes);
    } catch (err) {
      // A keep-alive socket the server closed meanwhile: Node's documented remedy is one retry.
      if ((err as { reused?: boolean }).reused === true && (err as GitTransportError).code === 'ECONNRESET') {
        return once(url, method, headers, body, maxBytes);
      }
      throw err;
    }
  }

  async function request(req: CappedGitHttpRequest): Promise<GitHttpResponse> {
    const method = req.method ?? 'GET';
    const maxBytes = req.maxResponseBytes ?? defaultMaxBytes;
    const body = req.body === undefined ? undefined : await collect(req.body);
    let url = new URL(req.url);
    let headers: Record<string, string> = { ...(req.headers ?? {}) };
    for (let hop = 0; ; hop++) {
      const { res, data } = await sendWithRetry(url, method, headers, body, maxBytes);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if ([301, 302, 303, 307, 308].includes(status) && location !== undefined && hop < MAX_REDIRECTS) {
        const next = new URL(location, url);
        if (next.origin !== url.origin) {
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization'));
        }
        url = next;
        continue;
      }
      return {
        url: url.toString(),
        method,
        statusCode: status,
        statusMessage: res.statusMessage ?? '',
        headers: flattenHeaders(res.headers),
        body: iterate(data),
      };
    }
  }

  return {
    request,
    stats,
    close() {
      closed = true;
      for (const fail of [...inFlight]) fail(closedError());
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

function tooLarge(url: URL, maxBytes: number): GitTransportError {
  return new GitTransportError(
    `the git server at ${url.host} sent a response of more than ${maxBytes} bytes, over the limit for one response`,
    RESPONSE_TOO_LARGE,
  );
}

function transportError(err: NodeJS.ErrnoException, url: URL): GitTransportError {
  if (err instanceof GitTransportError) return err;
  const code = err.code ?? 'EIO';
  const host = url.host;
  switch (code) {
    case 'ECONNREFUSED':
      return new GitTransportError(`cannot connect to the git server at ${host}: connection refused`, code);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new GitTransportError(`cannot resolve the git server's host name ${url.hostname}`, code);
    case 'ECONNRESET':
      return new GitTransportError(`the git server at ${host} closed the connection`, code);
    default:
      if (code.startsWith('ERR_TLS') || /CERT|SELF_SIGNED|UNABLE_TO/.test(code)) {
        return new GitTransportError(
          `TLS with the git server at ${host} failed (${code}): set storage.git.ca_cert_path to trust its certificate authority`,
          code,
        );
      }
      return new GitTransportError(`request to the git server at ${host} failed: ${err.message}`, code);
  }
}

function flattenHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

async function collect(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(Buffer.from(c.buffer, c.byteOffset, c.byteLength));
  return Buffer.concat(parts);
}

async function* iterateAsync(data: Buffer): AsyncGenerator<Uint8Array> {
  if (data.length > 0) yield data;
}

function iterate(data: Buffer): AsyncIterableIterator<Uint8Array> {
  return iterateAsync(data);
}
