/**
 * The query of `GET /meta/audit`, checked: the list window `since`, `until`, `limit`, `pageToken`
 * (list-query.ts, shared with `/meta/history`), `type` (one of the audit event types,
 * src/auth/audit.ts) and `authenticationId` (events whose subject or actor is that record). Anything
 * wrong is a 400 naming the parameter; inputs are bounded before they are read.
 */
import { AUDIT_TYPES, type AuditType } from '../../auth/audit.js';
import type { AuditListQuery } from '../../store/history/types.js';
import { MAX_PARAM_LENGTH, badParameter, parseListWindow } from './list-query.js';

const TYPES: ReadonlySet<string> = new Set(Object.values(AUDIT_TYPES));

export function parseAuditRequest(query: ReadonlyMap<string, string>): AuditListQuery {
  const window = parseListWindow(query);
  const type = query.get('type');
  if (type !== undefined && !TYPES.has(type)) badParameter('type', `must be one of ${[...TYPES].join(', ')}`);
  const authenticationId = query.get('authenticationId');
  if (authenticationId !== undefined && (authenticationId === '' || authenticationId.length > MAX_PARAM_LENGTH)) {
    badParameter('authenticationId', `must be an authentication id (1 to ${MAX_PARAM_LENGTH} characters)`);
  }
  return {
    ...window,
    ...(type !== undefined ? { type: type as AuditType } : {}),
    ...(authenticationId !== undefined ? { authenticationId } : {}),
  };
}
