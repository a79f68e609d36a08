// code-host-fake.ts — a stand-in for GitHub's OAuth web flow and the user API an OAuth login reads,
// for tests of the code-host login (no real GitHub-compatible server can run here). It mimics the
// endpoint shapes and behaviours an OAuth client depends on; it is NOT GitHub.
// Copied from our workplace's test tool shared/tools/github-oauth-fake.mjs (same behaviour), typed,
// plus: a request log (tests count calls and check which credential each carried), users whose
// organizations and teams tests change while it runs, a base path so everything can sit under an
// Enterprise-style server URL (`<url>/ghe/login/oauth/...`, API at `<url>/ghe/api/v3/...`), paging
// of /user/orgs and /user/teams (`per_page`, `page`), and a hook that answers a request itself
// (a failing, slow or oversized code host).
//
//   GET  /login/oauth/authorize?client_id&redirect_uri&state&scope[&code_challenge&code_challenge_method=S256][&login=USER]
//        -> auto-approves as ?login= (or the first user): 302 redirect_uri?code=…&state=…
//           unknown client -> 404; redirect_uri not registered -> 302 …?error=redirect_uri_mismatch&state=…
//   POST /login/oauth/access_token   body form or JSON: client_id, client_secret (or HTTP Basic), code, redirect_uri, [code_verifier]
//        -> `Accept: application/json` ? JSON : application/x-www-form-urlencoded  (GitHub's default is form!)
//           {access_token, token_type:'bearer', scope} | HTTP 200 {error:'bad_verification_code'|'incorrect_client_credentials'|…}
//           codes are single-use and expire after 10 min.
//   GET  /user              Authorization: Bearer T | token T  -> user JSON; 401 {"message":"Bad credentials"}
//   GET  /user/emails       needs scope user:email or user, else 404 (as GitHub)
//   GET  /user/orgs, /user/teams   need scope read:org (or user for orgs)
//   Everything also answers under /api/v3 (GitHub Enterprise style API base), and all of it under `basePath`.
import crypto from 'node:crypto';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface FakeClient {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Registered callback URLs; omitted = any redirect_uri is accepted. */
  readonly redirectUris?: readonly string[];
}

export interface FakeEmail {
  email: string;
  primary: boolean;
  verified: boolean;
  visibility?: string | null;
}

/** Mutable on purpose: a test moves a user between organizations and teams while the fake runs. */
export interface FakeUser {
  login: string;
  id: number;
  name?: string | null;
  /** The public email /user shows (null = none public). */
  email?: string | null;
  avatarUrl?: string;
  /** What /user/emails lists; default: `email` as the primary verified address. */
  emails?: FakeEmail[];
  orgs?: string[];
  teams?: Array<{ org: string; slug: string }>;
}

export interface FakeRequest {
  readonly method: string;
  /** Path without the base path and the query, `/api/v3` kept (e.g. `/api/v3/user/orgs`). */
  readonly path: string;
  readonly query: string;
  readonly authorization?: string;
  readonly accept?: string;
  /** The request body (the token exchange's form or JSON). */
  body: string;
  status?: number;
}

/** What a hook answers instead of the fake; `delayMs` alone delays the normal answer. */
export interface HookAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as is; a function is called with the response to stream a large body. */
  body?: string | ((res: ServerResponse) => void);
  delayMs?: number;
}

/** Runs before each request (the path without base path or /api/v3); undefined = serve normally. */
export type FakeHook = (req: FakeRequest & { route: string }) => HookAnswer | undefined;

export interface CodeHostFakeOptions {
  clients?: FakeClient[];
  users?: FakeUser[];
  /** Prefix of every path, e.g. `/ghe` (an Enterprise server not at the root of its host). */
  basePath?: string;
  host?: string;
  port?: number;
  hook?: FakeHook;
}

export interface CodeHostFake {
  /** `http://127.0.0.1:PORT` (without the base path). */
  readonly url: string;
  /** `url + basePath`: the code host's `server_url`. */
  readonly serverUrl: string;
  /** The API base: `serverUrl + /api/v3` with a base path, else `serverUrl` (github.com-style api host). */
  readonly apiUrl: string;
  readonly server: Server;
  readonly users: FakeUser[];
  /** Issued access tokens → who holds them. */
  readonly tokens: Map<string, { login: string; scope: string; clientId: string }>;
  readonly requests: FakeRequest[];
  hook: FakeHook | undefined;
  close(): Promise<void>;
}

export const DEFAULT_FAKE_USER: FakeUser = {
  login: 'alice',
  id: 1001,
  name: 'Alice Test',
  email: 'alice@example.test',
  orgs: ['acme'],
  teams: [{ org: 'acme', slug: 'flag-admins' }],
};

const MAX_BODY = 1 << 20;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => {
      body += d;
      if (body.length > MAX_BODY) req.destroy(new Error('request body too large'));
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(value));
}

const scopeList = (scope: string) => scope.split(/[ ,]+/).filter(Boolean);

/** One page of a list, as GitHub pages: `per_page` (default 30, at most 100) and `page` (from 1). */
function page<T>(items: T[], q: URLSearchParams): T[] {
  const perPage = Math.min(Math.max(Number(q.get('per_page') ?? 30) || 30, 1), 100);
  const n = Math.max(Number(q.get('page') ?? 1) || 1, 1);
  return items.slice((n - 1) * perPage, n * perPage);
}

export async function startCodeHostFake(opts: CodeHostFakeOptions = {}): Promise<CodeHostFake> {
  const clients = opts.clients ?? [{ clientId: 'test-client', clientSecret: 'test-secret' }];
  const users = opts.users ?? [structuredClone(DEFAULT_FAKE_USER)];
  const basePath = (opts.basePath ?? '').replace(/\/+$/, '');
  const host = opts.host ?? '127.0.0.1';
  const codes = new Map<string, { clientId: string; login: string; scope: string; redirectUri: string | null; challenge: string | null; method: string; exp: number }>();
  const tokens = new Map<string, { login: string; scope: string; clientId: string }>();
  const requests: FakeRequest[] = [];
  const rand = (n = 20) => crypto.randomBytes(n).toString('hex');
  const findUser = (login: string) => users.find((u) => u.login === login);

  const serve = (req: IncomingMessage, res: ServerResponse, u: URL, route: string, body: string): void => {
    const q = u.searchParams;
    if (req.method === 'GET' && route === '/login/oauth/authorize') {
      const client = clients.find((c) => c.clientId === q.get('client_id'));
      if (!client) {
        res.writeHead(404);
        res.end('unknown client_id');
        return;
      }
      const redirectUri = q.get('redirect_uri') ?? client.redirectUris?.[0];
      if (!redirectUri) {
        res.writeHead(400);
        res.end('redirect_uri required');
        return;
      }
      const to = new URL(redirectUri);
      if (client.redirectUris && !client.redirectUris.includes(redirectUri)) {
        to.searchParams.set('error', 'redirect_uri_mismatch');
        to.searchParams.set('error_description', 'The redirect_uri MUST match the registered callback URL for this application.');
      } else {
        const login = q.get('login') ?? users[0]!.login;
        if (!findUser(login)) {
          res.writeHead(404);
          res.end('unknown login');
          return;
        }
        const code = rand(10);
        codes.set(code, {
          clientId: client.clientId,
          login,
          scope: q.get('scope') ?? '',
          redirectUri: q.get('redirect_uri'),
          challenge: q.get('code_challenge'),
          method: q.get('code_challenge_method') ?? 'plain',
          exp: Date.now() + 600_000,
        });
        to.searchParams.set('code', code);
      }
      if (q.has('state')) to.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { Location: to.href });
      res.end();
      return;
    }
    if (req.method === 'POST' && route === '/login/oauth/access_token') {
      const ct = req.headers['content-type'] ?? '';
      let b: Record<string, string | undefined>;
      try {
        b = ct.includes('json') ? (JSON.parse(body || '{}') as Record<string, string>) : Object.fromEntries(new URLSearchParams(body || u.search));
      } catch {
        json(res, 400, { message: 'Problems parsing JSON' });
        return;
      }
      const authorization = req.headers.authorization ?? '';
      if (authorization.startsWith('Basic ')) {
        const [id, secret] = Buffer.from(authorization.slice(6), 'base64').toString().split(':');
        b.client_id ??= decodeURIComponent(id ?? '');
        b.client_secret ??= decodeURIComponent(secret ?? '');
      }
      const wantsJson = (req.headers.accept ?? '').includes('json');
      const reply = (obj: Record<string, string>) => {
        if (wantsJson) return json(res, 200, obj);
        res.writeHead(200, { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' });
        res.end(new URLSearchParams(obj).toString());
      };
      const client = clients.find((c) => c.clientId === b.client_id);
      if (!client || client.clientSecret !== b.client_secret) {
        return reply({ error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.' });
      }
      const c = codes.get(b.code ?? '');
      codes.delete(b.code ?? '');
      const bad = () => reply({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      if (!c || c.exp < Date.now() || c.clientId !== client.clientId) return bad();
      if (c.redirectUri && b.redirect_uri && b.redirect_uri !== c.redirectUri) {
        return reply({ error: 'redirect_uri_mismatch', error_description: 'The redirect_uri MUST match the registered callback URL for this application.' });
      }
      if (c.challenge) {
        const v = b.code_verifier ?? '';
        const calc = c.method === 'S256' ? crypto.createHash('sha256').update(v).digest('base64url') : v;
        if (calc !== c.challenge) return bad();
      }
      const token = 'gho_' + rand(18);
      tokens.set(token, { login: c.login, scope: c.scope, clientId: client.clientId });
      return reply({ access_token: token, token_type: 'bearer', scope: scopeList(c.scope).join(',') }); // GitHub: comma-separated
    }
    if (req.method === 'GET' && (route === '/user' || route.startsWith('/user/'))) {
      const m = /^(?:bearer|token)\s+(\S+)$/i.exec(req.headers.authorization ?? '');
      const t = m ? tokens.get(m[1]!) : undefined;
      const user = t ? findUser(t.login) : undefined;
      if (!t || !user) return json(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.example.test/rest' });
      res.setHeader('X-OAuth-Scopes', scopeList(t.scope).join(', '));
      const scopes = new Set(scopeList(t.scope));
      if (route === '/user') {
        return json(res, 200, {
          login: user.login,
          id: user.id,
          node_id: `U_${user.id}`,
          type: 'User',
          name: user.name ?? null,
          email: user.email ?? null,
          avatar_url: user.avatarUrl ?? '',
          html_url: `${serverUrl}/${user.login}`,
        });
      }
      if (route === '/user/emails') {
        if (!scopes.has('user:email') && !scopes.has('user')) return json(res, 404, { message: 'Not Found' });
        const emails = user.emails ?? (user.email ? [{ email: user.email, primary: true, verified: true, visibility: 'private' }] : []);
        return json(res, 200, page(emails, q));
      }
      if (route === '/user/orgs') {
        if (!scopes.has('read:org') && !scopes.has('user')) return json(res, 200, []);
        return json(res, 200, page((user.orgs ?? []).map((o, i) => ({ login: o, id: 5000 + i })), q));
      }
      if (route === '/user/teams') {
        if (!scopes.has('read:org')) return json(res, 403, { message: 'Resource not accessible by integration' });
        const teams = (user.teams ?? []).map((tm, i) => ({ id: 7000 + i, slug: tm.slug, name: tm.slug, organization: { login: tm.org } }));
        return json(res, 200, page(teams, q));
      }
    }
    json(res, 404, { message: 'Not Found' });
  };

  const fake: { hook: FakeHook | undefined } = { hook: opts.hook };
  const server = http.createServer((req, res) => {
    void (async () => {
      const u = new URL(req.url ?? '/', 'http://x');
      let path = u.pathname;
      if (basePath !== '') {
        if (path !== basePath && !path.startsWith(`${basePath}/`)) return json(res, 404, { message: 'Not Found' });
        path = path.slice(basePath.length) || '/';
      }
      const route = path.replace(/^\/api\/v3(?=\/)/, '');
      const body = req.method === 'POST' ? await readBody(req) : '';
      const logged: FakeRequest = {
        method: req.method ?? '',
        path,
        query: u.search,
        ...(req.headers.authorization !== undefined ? { authorization: req.headers.authorization } : {}),
        ...(req.headers.accept !== undefined ? { accept: req.headers.accept } : {}),
        body,
      };
      requests.push(logged);
      res.on('finish', () => (logged.status = res.statusCode));
      const answer = fake.hook?.({ ...logged, route });
      if (answer?.delayMs !== undefined) await new Promise((r) => setTimeout(r, answer.delayMs));
      if (res.destroyed) return;
      if (answer?.status !== undefined || answer?.body !== undefined) {
        res.writeHead(answer.status ?? 200, answer.headers ?? { 'Content-Type': 'application/json; charset=utf-8' });
        if (typeof answer.body === 'function') answer.body(res);
        else res.end(answer.body ?? '');
        return;
      }
      serve(req, res, u, route, body);
    })().catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { message: String(err) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(opts.port ?? 0, host, resolve));
  const url = `http://${host}:${(server.address() as { port: number }).port}`;
  const serverUrl = url + basePath;
  const apiUrl = basePath === '' ? serverUrl : `${serverUrl}/api/v3`;
  return Object.assign(fake, {
    url,
    serverUrl,
    apiUrl,
    server,
    users,
    tokens,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
