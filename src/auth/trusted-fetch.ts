/**
 * A small fetch for key material (OIDC discovery documents, JSON Web Key Sets): HTTPS trusting
 * exactly the CA certificates of a configured file (a cluster's own CA), an optional bearer token
 * re-read from a file on every request (a pod's projected service-account token rotates on disk,
 * and is never sent over plain http except to a loopback address), a bounded response size and no
 * redirects. It returns a WHATWG `Response`, so jose's
 * `createRemoteJWKSet` can use it through its `customFetch` option.
 *
 * node:https is used instead of the global fetch because Node's fetch takes a custom CA only
 * through an undici dispatcher, which is not a public module of Node itself.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isLoopbackHost } from '../http/loopback.js';

/** Key sets and discovery documents are small; anything bigger is refused unread. */
export const MAX_KEY_DOCUMENT_BYTES = 1024 * 1024;

export interface TrustedFetchOptions {
  /** PEM file holding the CA certificates trusted for HTTPS (default: Node's built-in roots). */
  caPath?: string;
  /** File whose contents are sent as `Authorization: Bearer …` on every request (re-read each time). */
  bearerTokenPath?: string;
  /** Per-request timeout when the caller passes no signal (ms). */
  timeoutMs?: number;
}

export type KeyFetch = (url: string, init?: { headers?: Headers | Record<string, string>; signal?: AbortSignal }) => Promise<Response>;

export class TrustedFetchSetupError extends Error {
  override readonly name = 'TrustedFetchSetupError';
}

/** Reads the CA file once (at start), refusing a file without a certificate as Flipt does. */
export function readCaFile(caPath: string): string {
  let pem: string;
  try {
    pem = readFileSync(caPath, 'utf8');
  } catch (err) {
    throw new TrustedFetchSetupError(`cannot read the CA file "${caPath}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new TrustedFetchSetupError(`the CA file "${caPath}" holds no PEM certificate`);
  return pem;
}

export function createTrustedFetch(opts: TrustedFetchOptions): KeyFetch {
  const ca = opts.caPath !== undefined ? readCaFile(opts.caPath) : undefined;
  const timeoutMs = opts.timeoutMs ?? 5000;

  return (url, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const target = new URL(url);
      const headers: Record<string, string> = { accept: 'application/json' };
      new Headers(init.headers).forEach((value, name) => (headers[name] = value));
      if (opts.bearerTokenPath !== undefined && target.protocol === 'http:' && !isLoopbackHost(target.hostname)) {
        reject(new Error(`refusing to send the bearer token over plain http to ${target.host}`));
        return;
      }
      if (opts.bearerTokenPath !== undefined && headers.authorization === undefined) {
        // A missing token file is not fatal: a cluster whose discovery is public needs none.
        const token = readOptionalToken(opts.bearerTokenPath);
        if (token !== undefined) headers.authorization = `Bearer ${token}`;
      }
      const signal = init.signal ?? AbortSignal.timeout(timeoutMs);
      const requestFn = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = requestFn(target, { method: 'GET', headers, signal, ...(ca !== undefined && target.protocol === 'https:' ? { ca } : {}) }, (res) =>
        collect(res).then(
          (body) => resolve(new Response(body, { status: res.statusCode ?? 502, headers: { 'content-type': String(res.headers['content-type'] ?? '') } })),
          reject,
        ),
      );
      req.on('error', reject);
      req.end();
    });
}

function readOptionalToken(path: string): string | undefined {
  try {
    const token = readFileSync(path, 'utf8').trim();
    return token === '' ? undefined : token;
  } catch {
    return undefined;
  }
}

function collect(res: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(res.headers['content-length']);
    if (declared > MAX_KEY_DOCUMENT_BYTES) {
      res.destroy();
      return reject(new Error(`key document larger than ${MAX_KEY_DOCUMENT_BYTES} bytes`));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_KEY_DOCUMENT_BYTES) {
        res.destroy();
        reject(new Error(`key document larger than ${MAX_KEY_DOCUMENT_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
  });
}
