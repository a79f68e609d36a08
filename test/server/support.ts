/**
 * Real servers for the HTTP tests: a temp copy of a fixture state folder (next to this file),
 * the local source and snapshot store over it, and the HTTP server on a random loopback port.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino, type Logger } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import type { RequestLogging } from '../../src/config/types.js';
import { startHttpServer, type RunningHttpServer } from '../../src/server/listen.js';
import { createLocalSource } from '../../src/sources/local.js';
import { createSnapshotStore, type ManagedSnapshotStore } from '../../src/store/snapshot-store.js';
import { STATE_LIMITS, STORE_DEFAULTS } from '../support/config-defaults.js';

export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

export interface TestServer {
  readonly url: string;
  readonly dir: string;
  readonly store: ManagedSnapshotStore;
  readonly server: RunningHttpServer;
}

export interface TestServerOptions {
  /** Fixture folder under test/server/fixtures (default `api`). */
  fixture?: string;
  /** Build the first snapshot before listening (default true). */
  startStore?: boolean;
  /** Default: a silent pino logger. */
  logger?: Logger;
  /** Serve evaluations through the node:http fast path (default true, as `vexil serve`). */
  fastPath?: boolean;
  /** `log.requests` (default: the config default, `errors`). */
  requests?: RequestLogging;
}

/** A copy of a fixture folder served by a local-source snapshot store (closed at teardown). */
export async function startTestStore(t: Teardown, opts: Pick<TestServerOptions, 'fixture' | 'startStore'> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-http-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(FIXTURES, opts.fixture ?? 'api'), dir, { recursive: true });

  const config = loadConfig({ env: {}, cwd: dir, defaultLocalPath: dir });
  const source = createLocalSource({ ...STATE_LIMITS, path: dir, maxFileSize: config.storage.max_file_size });
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source, debounceMs: 20 });
  t.teardown(() => store.close());
  if (opts.startStore !== false) await store.start();
  return { dir, config, store };
}

export async function startTestServer(t: Teardown, opts: TestServerOptions = {}): Promise<TestServer> {
  const { dir, config, store } = await startTestStore(t, opts);
  if (opts.requests !== undefined) config.log.requests = opts.requests;
  const server = await startHttpServer({
    store,
    config,
    logger: opts.logger ?? pino({ level: 'silent' }),
    storageType: 'local',
    version: { version: '1.2.3', commit: 'abc123' },
    host: '127.0.0.1',
    port: 0,
    ...(opts.fastPath !== undefined ? { fastPath: opts.fastPath } : {}),
  });
  t.teardown(() => server.close());
  return { url: server.url, dir, store, server };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** fetch + JSON parse (body is undefined when the text is not JSON). */
export async function call(url: string, init: RequestInit = {}): Promise<JsonResponse> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

export const get = (url: string) => call(url);

export const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  call(url, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers });

/** A request with exactly the given path bytes and headers (fetch normalizes some of these). */
export function rawRequest(
  url: string,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** Writes raw bytes on a fresh TCP connection and returns everything the server answers. */
export function rawExchange(url: string, bytes: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
    socket.setTimeout(5000, () => {
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    socket.write(bytes);
  });
}

/** Splits a raw HTTP/1.1 response into status, lower-cased headers and body. */
export function parseRawResponse(raw: string): { status: number; headers: Map<string, string>; body: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = split === -1 ? raw : raw.slice(0, split);
  const body = split === -1 ? '' : raw.slice(split + 4);
  const [statusLine, ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
  const headers = new Map<string, string>();
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return { status, headers, body };
}

/** The catalogue's error body: exactly code, message, details. */
export function isErrorBody(body: unknown): body is { code: number; message: string; details: unknown[] } {
  if (body === null || typeof body !== 'object') return false;
  const b = body as Record<string, unknown>;
  return (
    typeof b.code === 'number' &&
    typeof b.message === 'string' &&
    Array.isArray(b.details) &&
    Object.keys(b).sort().join(',') === 'code,details,message'
  );
}
