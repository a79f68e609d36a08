// git-http-server.ts — serve bare Git repositories over the *smart HTTP* protocol
// for tests, using the real `git http-backend` (CGI) behind a tiny node:http bridge.
// Copied from our workplace's test tool shared/tools/git-http-server.mjs (same behaviour), typed,
// plus a request log so tests can count round trips and answer hooks to simulate a slow or
// failing server. Dependency-free; needs only the `git` CLI (git-http-backend lives in
// $(git --exec-path), e.g. /usr/lib/git-core/git-http-backend).
//
// Serves every repo under ROOT (GIT_HTTP_EXPORT_ALL): http://127.0.0.1:PORT/<name>.git
// Supports clone/fetch (upload-pack, protocol v0/v1/v2 via the Git-Protocol header) and
// push (receive-pack, enabled with {push:true}). Optional auth:
//   user: 'NAME:PASS'   HTTP Basic (401 + WWW-Authenticate: Basic if missing/wrong)
//   token: 'TOKEN'      "Authorization: Bearer TOKEN" (also accepts Basic with password=TOKEN)
// If both are given, either one is accepted. Without either, no auth. Both can be changed while
// running (srv.setAuth) to simulate rotated or revoked credentials. {tls: {key, cert}} serves HTTPS.
//
// API:   const srv = await startGitHttpServer({ root, user: 'u:p', token: 't', push: true })
//        srv.url  // 'http://127.0.0.1:PORT'  -> clone srv.url + '/flags.git'
//        srv.requests  // every request seen: { method, path, query, gitProtocol, status }
//        await srv.close()
//
// The bridge runs in the test process: never call execFileSync('git', ...) against it from the
// same process (the event loop could not answer); use async execFile.
import { execFileSync, spawn } from 'node:child_process';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';

export interface GitHttpServerOptions {
  /** Folder holding the bare repositories. */
  readonly root: string;
  readonly port?: number;
  readonly host?: string;
  /** `name:password` accepted as HTTP Basic. */
  readonly user?: string;
  /** Accepted as `Bearer TOKEN` or as the password of HTTP Basic. */
  readonly token?: string;
  /** Allow pushes (receive-pack). */
  readonly push?: boolean;
  /** Serve HTTPS with this PEM key and certificate (chain). */
  readonly tls?: { readonly key: string; readonly cert: string };
}

export interface LoggedRequest {
  readonly method: string;
  /** Path without the query, e.g. `/flags.git/git-upload-pack`. */
  readonly path: string;
  readonly query: string;
  /** The Git-Protocol header (`version=2`) when sent. */
  readonly gitProtocol?: string;
  readonly authorization?: string;
  status?: number;
}

/**
 * Runs before the request is served. Return a status to answer with instead (e.g. 503), a
 * promise to delay it (a slow server), or undefined to serve it normally.
 */
export type RequestHook = (req: LoggedRequest) => number | undefined | Promise<number | undefined>;

export interface GitHttpServer {
  readonly server: Server;
  readonly port: number;
  readonly url: string;
  /** Every request received, in order (tests clear it with `requests.length = 0`). */
  readonly requests: LoggedRequest[];
  /** Replace the accepted credentials (undefined = none required for that kind). */
  setAuth(auth: { user?: string; token?: string }): void;
  /** Install (or remove with undefined) a hook run before each request. */
  setHook(hook: RequestHook | undefined): void;
  close(): Promise<void>;
}

const backendPath = (): string => {
  const execPath = execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim();
  return path.join(execPath, 'git-http-backend');
};

function checkAuth(req: IncomingMessage, { user, token }: { user?: string; token?: string }): { ok: boolean; remoteUser?: string } {
  if (!user && !token) return { ok: true, remoteUser: 'anonymous' };
  const h = req.headers.authorization || '';
  const [scheme = '', value = ''] = h.split(/\s+/, 2);
  if (token && /^bearer$/i.test(scheme) && value === token) return { ok: true, remoteUser: 'token' };
  if (/^basic$/i.test(scheme)) {
    const dec = Buffer.from(value, 'base64').toString('utf8');
    const i = dec.indexOf(':');
    const u = dec.slice(0, i),
      p = dec.slice(i + 1);
    if (user && dec === user) return { ok: true, remoteUser: u };
    if (token && p === token) return { ok: true, remoteUser: u || 'token' };
  }
  return { ok: false };
}

export function startGitHttpServer(opts: GitHttpServerOptions): Promise<GitHttpServer> {
  const { root, port = 0, host = '127.0.0.1', push = false } = opts;
  if (!root) throw new Error('root (directory holding bare repos) is required');
  const backend = backendPath();
  const log = process.env.GIT_HTTP_SERVER_LOG === '1';
  const auth: { user?: string; token?: string } = {
    ...(opts.user !== undefined ? { user: opts.user } : {}),
    ...(opts.token !== undefined ? { token: opts.token } : {}),
  };
  let hook: RequestHook | undefined;
  const requests: LoggedRequest[] = [];

  const serve = (req: IncomingMessage, res: ServerResponse, entry: LoggedRequest): void => {
    const ok = checkAuth(req, auth);
    if (log) process.stderr.write(`${req.method} ${req.url} auth=${ok.ok}\n`);
    if (!ok.ok) {
      entry.status = 401;
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' });
      res.end('authentication required\n');
      return;
    }
    const u = new URL(req.url ?? '/', 'http://x');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME || os.tmpdir(),
      GIT_PROJECT_ROOT: path.resolve(root),
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: decodeURIComponent(u.pathname),
      QUERY_STRING: u.search.slice(1),
      REQUEST_METHOD: req.method,
      CONTENT_TYPE: req.headers['content-type'] || '',
      REMOTE_USER: ok.remoteUser,
      REMOTE_ADDR: req.socket.remoteAddress || '',
      GATEWAY_INTERFACE: 'CGI/1.1',
      SERVER_PROTOCOL: 'HTTP/1.1',
      // receive-pack (push) is allowed only when http.receivepack=true
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.receivepack',
      GIT_CONFIG_VALUE_0: push ? 'true' : 'false',
    };
    if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length'];
    if (req.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = String(req.headers['content-encoding']);
    const gitProtocol = req.headers['git-protocol'];
    if (typeof gitProtocol === 'string') env.GIT_PROTOCOL = env.HTTP_GIT_PROTOCOL = gitProtocol;
    const cgi = spawn(backend, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    req.pipe(cgi.stdin);
    cgi.stdin.on('error', () => {});
    cgi.stderr.on('data', (d: Buffer) => {
      if (log) process.stderr.write(`[http-backend] ${d.toString()}`);
    });
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      let sep = head.indexOf('\r\n\r\n');
      let sepLen = 4;
      if (sep < 0) {
        sep = head.indexOf('\n\n');
        sepLen = 2;
      }
      if (sep < 0) return;
      headersDone = true;
      let status = 200;
      let statusText: string | undefined;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, sep).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const k = line.slice(0, i).trim(),
          v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') {
          status = parseInt(v, 10);
          statusText = v.slice(4) || undefined;
        } else headers[k] = v;
      }
      entry.status = status;
      if (statusText !== undefined) res.writeHead(status, statusText, headers);
      else res.writeHead(status, headers);
      const rest = head.subarray(sep + sepLen);
      if (rest.length) res.write(rest);
    });
    cgi.on('close', (code) => {
      if (!headersDone) {
        entry.status = 500;
        res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(`git http-backend exited ${code}\n`);
        return;
      }
      res.end();
    });
    res.on('close', () => {
      if (cgi.exitCode === null) cgi.kill('SIGTERM');
    });
  };

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const gp = req.headers['git-protocol'];
    const entry: LoggedRequest = {
      method: req.method ?? 'GET',
      path: u.pathname,
      query: u.search.slice(1),
      ...(typeof gp === 'string' ? { gitProtocol: gp } : {}),
      ...(req.headers.authorization !== undefined ? { authorization: req.headers.authorization } : {}),
    };
    requests.push(entry);
    const h = hook;
    if (h === undefined) return serve(req, res, entry);
    req.pause();
    Promise.resolve(h(entry)).then(
      (status) => {
        if (status === undefined) {
          req.resume();
          return serve(req, res, entry);
        }
        entry.status = status;
        req.resume();
        res.writeHead(status, { 'Content-Type': 'text/plain' });
        res.end(`${http.STATUS_CODES[status] ?? 'error'}\n`);
      },
      () => {
        entry.status = 500;
        res.writeHead(500);
        res.end();
      },
    );
  };
  const server: Server = opts.tls !== undefined ? https.createServer({ key: opts.tls.key, cert: opts.tls.cert }, handler) : http.createServer(handler);
  const scheme = opts.tls !== undefined ? 'https' : 'http';
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      const p = typeof address === 'object' && address !== null ? address.port : port;
      resolve({
        server,
        port: p,
        url: `${scheme}://${host}:${p}`,
        requests,
        setAuth(next) {
          delete auth.user;
          delete auth.token;
          if (next.user !== undefined) auth.user = next.user;
          if (next.token !== undefined) auth.token = next.token;
        },
        setHook(next) {
          hook = next;
        },
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections?.();
            server.close(() => r());
          }),
      });
    });
  });
}
