/**
 * GitLab's notes API as a ReviewThread: a merge request's notes (`GET/POST
 * /api/v4/projects/:id/merge_requests/:iid/notes`, `PUT .../notes/:note_id`), listed 100 a page,
 * oldest first, by following the `x-next-page` header (empty on the last page). The credential is
 * a personal, project or group access token in `PRIVATE-TOKEN`, or a CI job token in `JOB-TOKEN`.
 * System notes (GitLab's own "added 1 commit") are skipped. The API base is the server's URL with
 * `/api/v4` (CI_API_V4_URL in a GitLab job).
 */
import { apiRequest, ApiError, type ApiClient } from './api-request.js';
import { MAX_PAGES, type ReviewThread, type ThreadComment } from './review-thread.js';

export interface GitlabThreadOptions {
  readonly apiUrl: string;
  /** Numeric id or `group/project` path (URL-encoded here). */
  readonly project: string;
  readonly iid: number;
  readonly token: string;
  readonly tokenHeader: 'PRIVATE-TOKEN' | 'JOB-TOKEN';
  readonly sleep?: (ms: number) => Promise<void>;
}

interface GitlabNote {
  readonly id: number;
  readonly body?: string | null;
  readonly system?: boolean;
}

export function gitlabThread(opts: GitlabThreadOptions): ReviewThread {
  const base = opts.apiUrl.replace(/\/+$/, '');
  const notes = `${base}/projects/${encodeURIComponent(opts.project)}/merge_requests/${opts.iid}/notes`;
  const client: ApiClient = {
    host: 'GitLab',
    headers: { [opts.tokenHeader]: opts.token, Accept: 'application/json', 'User-Agent': 'vexil-comment' },
    ...(opts.sleep ? { sleep: opts.sleep } : {}),
  };
  const toComment = (n: GitlabNote): ThreadComment => ({ id: String(n.id), body: n.body ?? '' });
  return {
    async *list() {
      let page: string | undefined = '1';
      for (let i = 0; page !== undefined && i < MAX_PAGES; i++) {
        const answer: { body: GitlabNote[]; headers: Headers } = await apiRequest<GitlabNote[]>(client, 'GET', `${notes}?sort=asc&order_by=created_at&per_page=100&page=${page}`);
        if (!Array.isArray(answer.body)) throw new ApiError('GitLab API: the note list is not an array', 200);
        for (const n of answer.body) if (n.system !== true) yield toComment(n);
        const next = answer.headers.get('x-next-page')?.trim() ?? '';
        page = /^\d+$/.test(next) ? next : undefined;
      }
    },
    async create(body) {
      return toComment((await apiRequest<GitlabNote>(client, 'POST', notes, { body })).body);
    },
    async update(id, body) {
      return toComment((await apiRequest<GitlabNote>(client, 'PUT', `${notes}/${encodeURIComponent(id)}`, { body })).body);
    },
  };
}
