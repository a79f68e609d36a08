// review-api.ts — a loopback stand-in for the two code-host APIs `vexil comment` talks to (no
// GitHub or GitLab can run here): GitHub's issue-comment endpoints and GitLab's merge-request
// notes endpoints, comments kept in memory. It mimics the behaviours a client depends on and is
// NOT either host:
//
//   GitHub (under `/`, or `/api/v3` as an Enterprise server):
//     GET   /repos/{owner}/{repo}/issues/{n}/comments?per_page&page   Link: <…>; rel="next", <…>; rel="last"
//     POST  /repos/{owner}/{repo}/issues/{n}/comments      {body}  -> 201 {id, body, user}
//     PATCH /repos/{owner}/{repo}/issues/comments/{id}     {body}  -> 200 {id, body, user}
//     auth: `Authorization: Bearer T` (or `token T`), else 401 {"message":"Bad credentials"}
//     a body over 65,536 characters -> 422 (as GitHub: "body is too long")
//   GitLab:
//     GET  /api/v4/projects/{id}/merge_requests/{iid}/notes?per_page&page   x-next-page ('' on the last page), x-page, x-total
//     POST /api/v4/projects/{id}/merge_requests/{iid}/notes      {body}  -> 201 {id, body, system}
//     PUT  /api/v4/projects/{id}/merge_requests/{iid}/notes/{id} {body}  -> 200
//     auth: `PRIVATE-TOKEN: T` or `JOB-TOKEN: T`, else 401 {"message":"401 Unauthorized"}
//   `rateLimit(n)`: the next n requests answer as the host does when rate limited (GitHub: 403,
//   x-ratelimit-remaining 0, x-ratelimit-reset in 1 s; GitLab: 429, retry-after 1).
//   Per-page sizes are capped at 100 (both hosts' maximum); `maxPerPage` caps lower to page more.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StoredComment {
  id: number;
  body: string;
  /** Who wrote it (for GitHub: user.login; the token's user for comments made through the API). */
  author: string;
  /** GitLab system notes ("added 1 commit"). */
  system?: boolean;
}

export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly status: number;
}

export interface ReviewApi {
  readonly url: string;
  /** Comments (notes) by thread key: `github:owner/repo#n` or `gitlab:project!iid`. */
  readonly threads: Map<string, StoredComment[]>;
  readonly requests: LoggedRequest[];
  /** The next `times` requests (default 1) answer as rate limited. */
  rateLimit(times?: number): void;
  close(): Promise<void>;
}

export interface ReviewApiOptions {
  readonly token: string;
  readonly maxPerPage?: number;
  readonly botLogin?: string;
}

const MAX_BODY = 65_536;

export async function startReviewApi(t: { teardown(fn: () => unknown): void }, opts: ReviewApiOptions): Promise<ReviewApi> {
  const threads = new Map<string, StoredComment[]>();
  const requests: LoggedRequest[] = [];
  let nextId = 1000;
  let limitNext = 0;
  const maxPerPage = Math.min(100, opts.maxPerPage ?? 100);

  const server = http.createServer((req, res) => {
    void handle(req, res).catch((err: Error) => send(req, res, 500, { message: err.message }));
  });

  function send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const u = new URL(req.url ?? '/', 'http://x');
    requests.push({
      method: req.method ?? '',
      path: u.pathname,
      query: u.search,
      headers: {
        authorization: req.headers.authorization,
        'private-token': req.headers['private-token'] as string | undefined,
        'job-token': req.headers['job-token'] as string | undefined,
        accept: req.headers.accept,
        'x-github-api-version': req.headers['x-github-api-version'] as string | undefined,
        'content-type': req.headers['content-type'],
      },
      status,
    });
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  async function readBody(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req as AsyncIterable<Buffer>) {
      size += c.length;
      if (size > 4 * MAX_BODY * 4) throw new Error('request too large');
      chunks.push(c);
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return undefined;
    }
  }

  function page<T>(list: readonly T[], u: URL): { items: T[]; page: number; pages: number; perPage: number } {
    const perPage = Math.max(1, Math.min(maxPerPage, Number(u.searchParams.get('per_page') ?? '30') || 30));
    const p = Math.max(1, Number(u.searchParams.get('page') ?? '1') || 1);
    const pages = Math.max(1, Math.ceil(list.length / perPage));
    return { items: list.slice((p - 1) * perPage, p * perPage), page: p, pages, perPage };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = `http://${req.headers.host}`;
    const u = new URL(req.url ?? '/', origin);
    const path = u.pathname.replace(/^\/api\/v3(?=\/repos\/)/, '');
    const gitlab = path.startsWith('/api/v4/');
    if (limitNext > 0) {
      limitNext--;
      if (gitlab) return send(req, res, 429, { message: 'Retry later' }, { 'retry-after': '1' });
      return send(req, res, 403, { message: 'API rate limit exceeded' }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 1) });
    }

    if (gitlab) {
      const given = (req.headers['private-token'] ?? req.headers['job-token']) as string | undefined;
      if (given !== opts.token) return send(req, res, 401, { message: '401 Unauthorized' });
      const m = /^\/api\/v4\/projects\/([^/]+)\/merge_requests\/(\d+)\/notes(?:\/(\d+))?$/.exec(path);
      if (!m) return send(req, res, 404, { message: '404 Not Found' });
      const key = `gitlab:${decodeURIComponent(m[1]!)}!${m[2]}`;
      const list = threads.get(key) ?? [];
      threads.set(key, list);
      const note = (c: StoredComment) => ({ id: c.id, body: c.body, system: c.system === true, author: { username: c.author } });
      if (req.method === 'GET' && m[3] === undefined) {
        const pg = page(list, u);
        return send(req, res, 200, pg.items.map(note), {
          'x-page': String(pg.page),
          'x-per-page': String(pg.perPage),
          'x-total': String(list.length),
          'x-total-pages': String(pg.pages),
          'x-next-page': pg.page < pg.pages ? String(pg.page + 1) : '',
        });
      }
      const body = (await readBody(req)) as { body?: unknown } | undefined;
      if (typeof body?.body !== 'string' || body.body === '') return send(req, res, 400, { message: '400 Bad request - body is missing' });
      if (req.method === 'POST' && m[3] === undefined) {
        const c = { id: nextId++, body: body.body, author: opts.botLogin ?? 'vexil-bot' };
        list.push(c);
        return send(req, res, 201, note(c));
      }
      if (req.method === 'PUT' && m[3] !== undefined) {
        const c = list.find((x) => x.id === Number(m[3]));
        if (!c) return send(req, res, 404, { message: '404 Not found' });
        c.body = body.body;
        return send(req, res, 200, note(c));
      }
      return send(req, res, 405, { message: '405 Method Not Allowed' });
    }

    const auth = req.headers.authorization ?? '';
    const tok = /^(?:Bearer|token) (.+)$/i.exec(auth)?.[1];
    if (tok !== opts.token) return send(req, res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
    const github = (c: StoredComment) => ({ id: c.id, body: c.body, user: { login: c.author } });
    const list = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/.exec(path);
    if (list) {
      const key = `github:${list[1]}/${list[2]}#${list[3]}`;
      const comments = threads.get(key) ?? [];
      threads.set(key, comments);
      if (req.method === 'GET') {
        const pg = page(comments, u);
        const link = (p: number) => {
          const l = new URL(u.toString());
          l.searchParams.set('per_page', String(pg.perPage));
          l.searchParams.set('page', String(p));
          return l.toString();
        };
        const links: string[] = [];
        if (pg.page < pg.pages) links.push(`<${link(pg.page + 1)}>; rel="next"`, `<${link(pg.pages)}>; rel="last"`);
        if (pg.page > 1) links.push(`<${link(1)}>; rel="first"`, `<${link(pg.page - 1)}>; rel="prev"`);
        return send(req, res, 200, pg.items.map(github), links.length > 0 ? { link: links.join(', ') } : {});
      }
      if (req.method === 'POST') {
        const body = (await readBody(req)) as { body?: unknown } | undefined;
        if (typeof body?.body !== 'string') return send(req, res, 422, { message: 'Validation Failed' });
        if (body.body.length > MAX_BODY) return send(req, res, 422, { message: 'Validation Failed', errors: [{ message: 'body is too long (maximum is 65536 characters)' }] });
        const c = { id: nextId++, body: body.body, author: opts.botLogin ?? 'github-actions[bot]' };
        comments.push(c);
        return send(req, res, 201, github(c));
      }
      return send(req, res, 404, { message: 'Not Found' });
    }
    const one = /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)$/.exec(path);
    if (one && req.method === 'PATCH') {
      const prefix = `github:${one[1]}/${one[2]}#`;
      const c = [...threads].filter(([k]) => k.startsWith(prefix)).flatMap(([, v]) => v).find((x) => x.id === Number(one[3]));
      if (!c) return send(req, res, 404, { message: 'Not Found' });
      const body = (await readBody(req)) as { body?: unknown } | undefined;
      if (typeof body?.body !== 'string') return send(req, res, 422, { message: 'Validation Failed' });
      if (body.body.length > MAX_BODY) return send(req, res, 422, { message: 'Validation Failed', errors: [{ message: 'body is too long (maximum is 65536 characters)' }] });
      c.body = body.body;
      return send(req, res, 200, github(c));
    }
    return send(req, res, 404, { message: 'Not Found' });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  t.teardown(close);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    threads,
    requests,
    rateLimit: (times = 1) => {
      limitNext = times;
    },
    close,
  };
}
