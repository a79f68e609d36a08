// oci-registry.ts — a throwaway OCI registry for tests: Debian's `docker-registry` (CNCF
// distribution 2.8) on 127.0.0.1:<free port>, storage in a fresh temp folder. Typed version of
// our workplace's test tool (same behaviour), plus a loopback proxy that counts requests and can
// play "registry down" without losing the registry's content.
//
// auth: 'none' (anonymous push/pull), 'basic' (htpasswd; user alice / s3cret, bcrypt hash baked
// in below so apache2-utils is not needed; distribution 2.8 accepts bcrypt only) or 'token'
// (distribution token auth: an in-process token service grants alice/s3cret what she asks for and
// anonymous callers nothing; ES256 JWTs carrying the signing certificate in `x5c`, key and
// certificate made with the openssl CLI).
//
//   const unavailable = registryUnavailableReason()   // skip (or fail under CI) when set: test/support/requirements.ts
//   const reg = await startRegistry({ auth: 'basic' }); reg.url  // http://127.0.0.1:PORT
//   await reg.close()
import { spawn, spawnSync } from 'node:child_process';
import { X509Certificate, createPrivateKey, randomUUID, sign } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

export const REGISTRY_USER = 'alice';
export const REGISTRY_PASSWORD = 's3cret';
const HTPASSWD = 'alice:$2y$05$6Xm75y1L9ZJfeYnDr9CgL.IPrleUrnixA8i7bxYD./3ntteZ.4nJi'; // alice:s3cret

export interface TokenService {
  readonly url: string;
  /** Every token request: the scope asked for and whether credentials came with it. */
  readonly requests: Array<{ scope: string; service: string; user?: string; granted: boolean }>;
  /** Lifetime of issued tokens in seconds (default 300). */
  expiresIn: number;
}

export interface TestRegistry {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** `127.0.0.1:PORT` (what references name). */
  readonly host: string;
  readonly port: number;
  /** The registry's stderr so far (for failure messages). */
  log(): string;
  /** With auth 'token'. */
  readonly tokens?: TokenService;
  close(): Promise<void>;
}

/** The `notifications:` section of the registry's config (JSON is YAML). */
function notificationsYaml(endpoints: readonly NotificationEndpoint[]): string {
  if (endpoints.length === 0) return '';
  const entries = endpoints.map((e) => ({
    name: e.name,
    url: e.url,
    headers: Object.fromEntries(Object.entries(e.headers ?? {}).map(([k, v]) => [k, [v]])),
    timeout: '2s',
    threshold: 3,
    backoff: '1s',
  }));
  return `notifications: ${JSON.stringify({ endpoints: entries })}\n`;
}

function findBinary(name: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '/usr/bin').split(delimiter)) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return existsSync(`/usr/bin/${name}`) ? `/usr/bin/${name}` : undefined;
}

/** Why the registry tests cannot run here, or undefined when they can. */
export function registryUnavailableReason(): string | undefined {
  if (findBinary('docker-registry') === undefined) {
    return 'docker-registry not found (Debian package `docker-registry`; scripts/test-setup.sh installs it when run as root)';
  }
  return undefined;
}

/** Why token auth cannot be tested here (it needs the openssl CLI for the signing certificate). */
export function tokenAuthUnavailableReason(): string | undefined {
  return findBinary('openssl') === undefined ? 'openssl not found (Debian package `openssl`)' : undefined;
}

/**
 * A `notifications.endpoints` entry: the registry POSTs its event envelopes to `url` with these
 * headers (each a single value here), retrying failed deliveries after `backoff` (default 1s).
 */
export interface NotificationEndpoint {
  readonly name: string;
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export async function startRegistry(
  opts: { auth?: 'none' | 'basic' | 'token'; startTimeoutMs?: number; notifications?: readonly NotificationEndpoint[] } = {},
): Promise<TestRegistry> {
  const bin = findBinary('docker-registry');
  if (bin === undefined) throw new Error(registryUnavailableReason());
  const dir = mkdtempSync(join(tmpdir(), 'vexil-registry-'));
  let authYaml = '';
  let tokens: (TokenService & { close(): Promise<void> }) | undefined;
  if (opts.auth === 'basic') {
    writeFileSync(join(dir, 'htpasswd'), `${HTPASSWD}\n`);
    authYaml = `auth:\n  htpasswd: { realm: test-registry, path: ${JSON.stringify(join(dir, 'htpasswd'))} }\n`;
  } else if (opts.auth === 'token') {
    tokens = await startTokenService(dir);
    authYaml = `auth:\n  token: { realm: ${JSON.stringify(`${tokens.url}/token`)}, service: ${SERVICE}, issuer: ${ISSUER}, rootcertbundle: ${JSON.stringify(join(dir, 'cert.pem'))} }\n`;
  }
  writeFileSync(
    join(dir, 'config.yml'),
    `version: 0.1
log: { level: info, accesslog: { disabled: true } }
storage:
  filesystem: { rootdirectory: ${JSON.stringify(join(dir, 'data'))} }
  delete: { enabled: true }
http: { addr: "127.0.0.1:0", secret: test-secret }
${authYaml}${notificationsYaml(opts.notifications ?? [])}`,
  );
  const child = spawn(bin, ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const startTimeoutMs = opts.startTimeoutMs ?? 15_000;
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`registry did not start in ${startTimeoutMs} ms:\n${log}`)), startTimeoutMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`registry exited ${code}:\n${log}`));
      });
      child.stderr.on('data', (d: Buffer) => {
        log = (log + d.toString()).slice(-20_000);
        const m = /listening on 127\.0\.0\.1:(\d+)/.exec(log); // 2.8 logs the real port when addr is :0
        if (m !== null) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
    });
  } catch (err) {
    child.kill('SIGKILL');
    await tokens?.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    port,
    log: () => log,
    ...(tokens !== undefined ? { tokens } : {}),
    async close() {
      await tokens?.close();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM'); // a graceful stop can take ~2 s
        const t = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface LoggedRegistryRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization?: string;
  status?: number;
}

export interface RegistryProxy {
  readonly url: string;
  /** `127.0.0.1:PORT`. */
  readonly host: string;
  /** Every request forwarded or refused, in order (clear with `requests.length = 0`). */
  readonly requests: LoggedRegistryRequest[];
  /** While down, connections are dropped without an answer (like a registry that went away). */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

/** A loopback HTTP proxy in front of `target` (an http:// base URL) that logs every request. */
export async function startRegistryProxy(target: string): Promise<RegistryProxy> {
  const requests: LoggedRegistryRequest[] = [];
  const targetUrl = new URL(target);
  let down = false;
  const sockets = new Set<Socket>();
  let selfHost = '';
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const entry: LoggedRegistryRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      ...(req.headers.authorization !== undefined ? { authorization: req.headers.authorization } : {}),
    };
    requests.push(entry);
    if (down) {
      req.socket.destroy();
      return;
    }
    const headers = { ...req.headers, host: targetUrl.host };
    const upstream = http.request(
      { host: targetUrl.hostname, port: targetUrl.port, method: req.method, path: req.url, headers },
      (up) => {
        entry.status = up.statusCode;
        const out = { ...up.headers };
        // Upload locations are absolute URLs of the registry: point them back at the proxy.
        if (typeof out.location === 'string') out.location = out.location.replace(targetUrl.host, selfHost);
        res.writeHead(up.statusCode ?? 502, out);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (s: Socket) => {
    if (down) {
      s.destroy();
      return;
    }
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  selfHost = `127.0.0.1:${port}`;
  return {
    url: `http://${selfHost}`,
    host: selfHost,
    requests,
    setDown(d) {
      down = d;
      if (d) for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const SERVICE = 'vexil-registry';
const ISSUER = 'vexil-test-issuer';
const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

async function startTokenService(dir: string): Promise<TokenService & { close(): Promise<void> }> {
  const made = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=vexil-test', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  if (made.status !== 0) throw new Error(`openssl could not make the token signing certificate: ${made.stderr.toString()}`);
  const key = createPrivateKey(readFileSync(join(dir, 'key.pem')));
  const der = new X509Certificate(readFileSync(join(dir, 'cert.pem'))).raw.toString('base64');
  const requests: TokenService['requests'] = [];
  const service = {
    url: '',
    requests,
    expiresIn: 300,
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const scope = url.searchParams.get('scope') ?? '';
    const auth = req.headers.authorization ?? '';
    const basic = auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString() : undefined;
    const user = basic?.slice(0, basic.indexOf(':'));
    const granted = basic === `${REGISTRY_USER}:${REGISTRY_PASSWORD}`;
    requests.push({ scope, service: url.searchParams.get('service') ?? '', ...(user !== undefined ? { user } : {}), granted });
    if (basic !== undefined && !granted) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"details":"bad credentials"}');
      return;
    }
    // repository:<name>:<actions>; anonymous callers get a token with no access (the registry then answers 401).
    const m = /^repository:([^:]+):(.+)$/.exec(scope);
    const access = granted && m !== null ? [{ type: 'repository', name: m[1], actions: (m[2] as string).split(',') }] : [];
    const now = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', x5c: [der] }));
    const claims = b64url(
      JSON.stringify({ iss: ISSUER, sub: user ?? '', aud: SERVICE, exp: now + service.expiresIn, nbf: now - 10, iat: now, jti: randomUUID(), access }),
    );
    const signature = sign('sha256', Buffer.from(`${header}.${claims}`), { key, dsaEncoding: 'ieee-p1363' });
    const token = `${header}.${claims}.${b64url(signature)}`;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ token, access_token: token, expires_in: service.expiresIn, issued_at: new Date(now * 1000).toISOString() }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  service.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(service, {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
