/**
 * `GET /meta/audit` (vexil's extension): the audit events kept in the history store
 * (src/store/history/, src/auth/audit.ts): tokens created and deleted, logins, logouts, expiries.
 * `?since=&until=&type=&authenticationId=&limit=&pageToken=` → `{events, nextPageToken}` newest
 * first. Auth: as `/meta/history` (a token when authentication is required; unscoped tokens only,
 * auth/scope.ts) and, when `authentication.admins` is set, admins only: the events name who signed
 * in. Events are shaped here; the query is checked in audit-request.ts.
 *
 * An event reads as its log line's `audit` object with every field present (`null` when the line
 * leaves it out), plus `replica` when replicas do not coordinate. Nothing else is kept, so nothing
 * else can be shown: never a token, never its hash.
 */
import type Router from '@koa/router';
import type { AuditParty } from '../../auth/audit.js';
import type { Authentication } from '../../auth/types.js';
import type { AppState } from '../../http/context.js';
import { sendJson } from '../../http/respond.js';
import { CLUSTER_SCOPE } from '../../store/history/recorder.js';
import type { AuditEntry, HistoryStore } from '../../store/history/types.js';
import { parseAuditRequest } from './audit-request.js';
import { read } from './history-routes.js';
import { page } from './list-query.js';
import { Code, VexilError } from '../../errors.js';

const partyJson = (p: AuditParty) => ({ authenticationId: p.authenticationId, method: p.method, metadata: p.metadata, expiresAt: p.expiresAt ?? null });

export function auditEventJson(e: AuditEntry) {
  const ev = e.event;
  return {
    id: ev.id,
    type: ev.type,
    time: ev.time,
    actor: ev.actor !== undefined ? partyJson(ev.actor) : null,
    subject: partyJson(ev.subject),
    address: ev.address ?? null,
    origin: ev.origin ?? null,
    ...(e.scope !== CLUSTER_SCOPE ? { replica: e.scope } : {}),
  };
}

export interface AuditDeps {
  readonly history: HistoryStore;
  /** `cluster` or this replica's host name (history/from-config.ts). */
  readonly auditScope: string;
  /**
   * Who may read the trail beyond the gate: with `authentication.admins` set, admins only (the
   * events name who signed in, with their e-mail or login); unset, whoever the gate lets through.
   */
  readonly administersAll?: (caller: Authentication | undefined) => boolean;
}

export function registerAuditRoutes(router: Router<AppState>, deps: AuditDeps): void {
  router.get('/meta/audit', async (ctx) => {
    if (deps.administersAll !== undefined && !deps.administersAll(ctx.state.authentication)) {
      throw new VexilError(Code.PermissionDenied, 'permission denied: the audit trail is for the admins of authentication.admins');
    }
    const q = parseAuditRequest(ctx.state.query);
    const rows = await read(() => deps.history.listAudit(deps.auditScope, q));
    const { page: shown, nextPageToken } = page(rows, q.limit);
    sendJson(ctx, { events: shown.map(auditEventJson), nextPageToken });
  });
}
