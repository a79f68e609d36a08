/**
 * In-process servers with authentication for the auth tests: a temp folder holding a copy of the
 * `api` state fixture, a YAML config (written to disk and read by the real loader), an injected
 * clock, and every log line captured so tests can search it.
 */
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAuthentication, type AuthRuntime } from '../../src/auth/setup.js';
import type { Clock } from '../../src/auth/types.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { startHttpServer, type RunningHttpServer } from '../../src/server/listen.js';
import { createLocalSource } from '../../src/sources/local.js';
import { createSnapshotStore } from '../../src/store/snapshot-store.js';
import { FIXTURES, call, type JsonResponse } from '../server/support.js';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

export interface FakeClock {
  readonly clock: Clock;
  now: number;
  advance(ms: number): void;
}

export const T0 = Date.parse('2030-01-01T00:00:00.000Z');

export function fakeClock(start = T0): FakeClock {
  const c = {
    now: start,
    clock: () => c.now,
    advance(ms: number) {
      c.now += ms;
    },
  };
  return c;
}

export interface LogCapture {
  readonly logger: Logger;
  readonly lines: string[];
  text(): string;
  entries(): Array<Record<string, unknown>>;
}

export function captureLogs(): LogCapture {
  const lines: string[] = [];
  const logger = createLogger({ level: 'trace', encoding: 'json', destination: { write: (s: string) => void lines.push(s) } });
  return {
    logger,
    lines,
    text: () => lines.join(''),
    entries: () => lines.flatMap((l) => l.split('\n')).filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export function tempDir(t: Teardown, prefix = 'vexil-auth-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface AuthServerOptions {
  /** YAML appended to the config (the `authentication:` block, `data_dir`...). */
  yaml?: string;
  clock?: FakeClock;
  /** Folder holding the config, the state copy and `data_dir` (default: a new temp folder). */
  dir?: string;
  logs?: LogCapture;
  /** Run the periodic cleanup (default false: tests call it directly). */
  cleanup?: boolean;
}

export interface AuthServer {
  readonly url: string;
  readonly dir: string;
  readonly config: Config;
  readonly runtime: AuthRuntime;
  readonly logs: LogCapture;
  readonly clock: FakeClock;
  readonly http: RunningHttpServer;
  /** Stops the server and closes the auth store (idempotent; also run at teardown). */
  stop(): Promise<void>;
}

export async function startAuthServer(t: Teardown, opts: AuthServerOptions = {}): Promise<AuthServer> {
  const dir = opts.dir ?? tempDir(t);
  const state = join(dir, 'state');
  // A second server on the same folder (a replica) reuses the state: rewriting files the first
  // one watches would make it reload mid-test.
  if (!existsSync(state)) cpSync(join(FIXTURES, 'api'), state, { recursive: true });
  const file = join(dir, 'vexil.yml');
  writeFileSync(file, `data_dir: data\nstorage:\n  local:\n    path: state\n${opts.yaml ?? ''}`);
  const config = loadConfig({ file, cwd: dir, env: {} });
  const logs = opts.logs ?? captureLogs();
  const clock = opts.clock ?? fakeClock();

  const source = createLocalSource({ path: state, maxFileSize: config.storage.max_file_size });
  const store = createSnapshotStore({ source, debounceMs: 20 });
  await store.start();
  const runtime = await startAuthentication({ config, logger: logs.logger, cwd: dir, clock: clock.clock, cleanup: opts.cleanup ?? false });
  const http = await startHttpServer({
    store,
    config,
    logger: logs.logger,
    authGate: runtime.gate,
    auth: runtime.routes,
    host: '127.0.0.1',
    port: 0,
  });
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await http.close();
      await store.close();
      await runtime.close();
    })());
  t.teardown(stop);
  return { url: http.url, dir, config, runtime, logs, clock, http, stop };
}

export interface RequestOptions {
  method?: string;
  token?: string;
  cookie?: string;
  /** A raw Authorization header (wins over `token`). */
  authorization?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export function request(url: string, opts: RequestOptions = {}): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.authorization !== undefined) headers.authorization = opts.authorization;
  else if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  if (opts.cookie !== undefined) headers.cookie = `svc_client_token=${opts.cookie}`;
  const init: RequestInit = { method: opts.method ?? (opts.body !== undefined ? 'POST' : 'GET'), headers };
  if (opts.body !== undefined) init.body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  return call(url, init);
}

/** Config YAML: authentication required, static tokens on (the bootstrap token is logged at start). */
export const REQUIRED = `
authentication:
  required: true
  methods:
    token:
      enabled: true
`;

export const UNAUTHENTICATED = { code: 16, message: 'request was not authenticated', details: [] };

export function denied(namespace: string) {
  return { code: 7, message: `permission denied: token is scoped to namespace "${namespace}"`, details: [] };
}

/** The bootstrap token from the captured log (the one line that carries it). */
export function bootstrapTokenFrom(logs: LogCapture): string | undefined {
  const e = logs.entries().find((l) => l.msg === 'access token created');
  return typeof e?.client_token === 'string' ? e.client_token : undefined;
}

/** Creates a token through the API with `creator` and returns the raw token and record. */
export async function createToken(
  url: string,
  creator: string | undefined,
  body: Record<string, unknown>,
): Promise<{ clientToken: string; authentication: Record<string, unknown> }> {
  const res = await request(`${url}/auth/v1/method/token`, { ...(creator !== undefined ? { token: creator } : {}), body });
  if (res.status !== 200) throw new Error(`token creation failed: ${res.status} ${res.text}`);
  return res.body as { clientToken: string; authentication: Record<string, unknown> };
}
