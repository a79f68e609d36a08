/**
 * GitHub's REST API as a ReviewThread: a pull request's conversation comments are issue comments
 * (`GET/POST /repos/{owner}/{repo}/issues/{number}/comments`, `PATCH
 * /repos/{owner}/{repo}/issues/comments/{id}`), listed 100 a page by following the `Link` header's
 * `rel="next"` (only while it stays on the API's own origin: the token goes with every request).
 * Headers: `Authorization: Bearer`, `Accept: application/vnd.github+json`, `X-GitHub-Api-Version:
 * 2022-11-28`. The API base is https://api.github.com or an Enterprise server's `/api/v3`.
 */
import { apiRequest, ApiError, type ApiClient } from './api-request.js';
import { MAX_PAGES, type ReviewThread, type ThreadComment } from './review-thread.js';

export interface GithubThreadOptions {
  readonly apiUrl: string;
  /** `owner/name`. */
  readonly repository: string;
  readonly number: number;
  readonly token: string;
  readonly sleep?: (ms: number) => Promise<void>;
}

interface GithubComment {
  readonly id: number;
  readonly body?: string | null;
}

export function githubThread(opts: GithubThreadOptions): ReviewThread {
  const base = opts.apiUrl.replace(/\/+$/, '');
  const [owner, name] = opts.repository.split('/') as [string, string];
  const repo = `${base}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
  const client: ApiClient = {
    host: 'GitHub',
    headers: {
      Authorization: `Bearer ${opts.token}`,
      Accept: 'application/vnd.github+json',
      'X-GitHub-Api-Version': '2022-11-28',
      'User-Agent': 'vexil-comment',
    },
    ...(opts.sleep ? { sleep: opts.sleep } : {}),
  };
  const origin = new URL(base).origin;
  const toComment = (c: GithubComment): ThreadComment => ({ id: String(c.id), body: c.body ?? '' });
  return {
    async *list() {
      let url: string | undefined = `${repo}/issues/${opts.number}/comments?per_page=100`;
      for (let page = 0; url !== undefined && page < MAX_PAGES; page++) {
        const answer: { body: GithubComment[]; headers: Headers } = await apiRequest<GithubComment[]>(client, 'GET', url);
        if (!Array.isArray(answer.body)) throw new ApiError('GitHub API: the comment list is not an array', 200);
        for (const c of answer.body) yield toComment(c);
        const next = nextLink(answer.headers.get('link'));
        url = next !== undefined && new URL(next).origin === origin ? next : undefined;
      }
    },
    async create(body) {
      return toComment((await apiRequest<GithubComment>(client, 'POST', `${repo}/issues/${opts.number}/comments`, { body })).body);
    },
    async update(id, body) {
      return toComment((await apiRequest<GithubComment>(client, 'PATCH', `${repo}/issues/comments/${encodeURIComponent(id)}`, { body })).body);
    },
  };
}

/** The `rel="next"` target of an RFC 8288 Link header (`<url>; rel="next", <url>; rel="last"`). */
export function nextLink(header: string | null): string | undefined {
  if (header === null) return undefined;
  for (const part of header.split(',')) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (m && /(?:^|;)\s*rel\s*=\s*"?(?:[^";]*\s)?next(?:\s[^";]*)?"?\s*(?:;|$)/i.test(m[2]!)) return m[1];
  }
  return undefined;
}
