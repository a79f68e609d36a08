/**
 * `GET /meta/history` (vexil's extension): what each reference served when, and the revisions it
 * rejected, from the history store (src/store/history/). `?reference=&since=&until=&limit=&pageToken=`
 * → `{entries, nextPageToken}` newest first; `?reference=&at=<RFC 3339>` → `{entry}` served then,
 * 404 when none. Auth: as `/meta/snapshots` (a token when authentication is required; unscoped
 * tokens only, auth/scope.ts). Entries are shaped here; the query is checked in history-request.ts.
 */
import type Router from '@koa/router';
import { historyUnavailable, notFound } from '../../errors.js';
import type { AppState } from '../../http/context.js';
import { sendJson } from '../../http/respond.js';
import { CLUSTER_SCOPE } from '../../store/history/recorder.js';
import type { HistoryEntry, HistoryStore } from '../../store/history/types.js';
import { parseHistoryRequest } from './history-request.js';
import { page } from './list-query.js';

export interface HistoryDeps {
  readonly history: HistoryStore;
  /** `cluster` or this replica's instance id (history/from-config.ts). */
  readonly scope: string;
  readonly defaultReference: string;
}

/** The store's failure (a database out of reach) as a 503; the cause (hosts, ports) stays in the log. */
export async function read<T>(what: () => Promise<T>): Promise<T> {
  try {
    return await what();
  } catch (err) {
    throw historyUnavailable(err);
  }
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** One entry as the API shows it: every field present (null when unknown), `problems` on rejections only. */
export function entryJson(e: HistoryEntry) {
  const served = e.kind === 'served';
  return {
    reference: e.reference,
    revision: e.revision,
    status: e.kind,
    servedFrom: served ? iso(e.at) : null,
    servedUntil: served ? iso(e.until) : null,
    replacedBy: e.replacedBy ?? null,
    ...(served ? {} : { rejectedAt: iso(e.at) }),
    author: e.author ?? '',
    message: e.message ?? '',
    committedAt: e.committedAt ?? null,
    ...(served ? {} : { problems: e.problems ?? [], problemCount: e.problemCount ?? e.problems?.length ?? 0 }),
    ...(e.scope !== CLUSTER_SCOPE ? { replica: e.scope } : {}),
  };
}

export function registerHistoryRoutes(router: Router<AppState>, deps: HistoryDeps): void {
  router.get('/meta/history', async (ctx) => {
    const req = parseHistoryRequest(ctx.state.query, deps.defaultReference);
    if (req.kind === 'at') {
      const entry = await read(() => deps.history.servedAt(deps.scope, req.reference, req.at));
      if (entry === undefined) throw notFound(`no revision of reference "${req.reference}" was served at ${new Date(req.at).toISOString()} (in the history kept)`);
      sendJson(ctx, { entry: entryJson(entry) });
      return;
    }
    const rows = await read(() => deps.history.list(deps.scope, req));
    const { page: shown, nextPageToken } = page(rows, req.limit);
    sendJson(ctx, { entries: shown.map(entryJson), nextPageToken });
  });
}
