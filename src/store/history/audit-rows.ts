/**
 * Encoding and decoding of audit rows (`audit_events`) shared by the SQLite and PostgreSQL stores.
 * A row is written from the event's named fields only (id, type, time, actor, subject, address,
 * origin; a party's authentication id, method, metadata and expiry), never by copying the object
 * as it comes, so nothing else an object might carry (a token, a hash) can reach the table. Texts
 * are cut to MAX_TEXT and metadata to MAX_METADATA keys; a decoded row that is not what vexil
 * writes (edited by hand) reads with the fields it lacks empty, never as a crash.
 */
import type { AuditEvent, AuditParty, AuditType } from '../../auth/audit.js';
import { cut } from './rows.js';
import type { AuditEntry } from './types.js';

/** Metadata keys kept per party (records carry a handful: name, description, email, subject). */
export const MAX_METADATA = 32;

/** The columns both stores read, in their SQL names. */
export interface RawAuditRow {
  seq: number | string;
  id: string;
  scope: string;
  type: string;
  at: number | string | Date;
  subject: string;
  actor: string | null;
  address: string | null;
  origin: string | null;
}

export const AUDIT_COLUMNS = 'seq, id, scope, type, at, subject, actor, address, origin';

/** The values of a row to insert, in column order: id, scope, type, at, subject_id, actor_id, subject, actor, address, origin. */
export interface AuditRowValues {
  readonly id: string;
  readonly scope: string;
  readonly type: string;
  /** Epoch ms. */
  readonly at: number;
  readonly subjectId: string;
  readonly actorId: string | null;
  readonly subject: string;
  readonly actor: string | null;
  readonly address: string | null;
  readonly origin: string | null;
}

function partyColumn(p: AuditParty): string {
  const metadata: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const key of Object.keys(p.metadata).sort().slice(0, MAX_METADATA)) metadata[cut(key)!] = cut(String(p.metadata[key]))!;
  return JSON.stringify({
    authenticationId: cut(p.authenticationId),
    method: cut(p.method),
    metadata,
    ...(p.expiresAt !== undefined ? { expiresAt: cut(p.expiresAt) } : {}),
  });
}

export function auditRow(scope: string, e: AuditEvent): AuditRowValues {
  const at = Date.parse(e.time);
  if (Number.isNaN(at)) throw new Error(`audit event ${e.id}: time "${e.time}" is not a time`);
  return {
    id: cut(e.id)!,
    scope,
    type: cut(e.type)!,
    at,
    subjectId: cut(e.subject.authenticationId)!,
    actorId: e.actor !== undefined ? cut(e.actor.authenticationId) : null,
    subject: partyColumn(e.subject),
    actor: e.actor !== undefined ? partyColumn(e.actor) : null,
    address: cut(e.address),
    origin: cut(e.origin),
  };
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function readParty(text: string | null): AuditParty | undefined {
  if (text === null) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object') return undefined;
  const p = parsed as Record<string, unknown>;
  const metadata: Record<string, string> = Object.create(null) as Record<string, string>;
  if (p.metadata !== null && typeof p.metadata === 'object' && !Array.isArray(p.metadata)) {
    for (const [k, v] of Object.entries(p.metadata as Record<string, unknown>)) if (typeof v === 'string') metadata[k] = v;
  }
  return {
    authenticationId: str(p.authenticationId),
    method: str(p.method),
    metadata,
    ...(typeof p.expiresAt === 'string' ? { expiresAt: p.expiresAt } : {}),
  };
}

function ms(v: number | string | Date): number {
  return v instanceof Date ? v.getTime() : Number(v);
}

export function fromAuditRow(r: RawAuditRow): AuditEntry {
  const at = ms(r.at);
  const actor = readParty(r.actor);
  const event: AuditEvent = {
    id: r.id,
    type: r.type as AuditType,
    time: new Date(at).toISOString(),
    ...(actor !== undefined ? { actor } : {}),
    subject: readParty(r.subject) ?? { authenticationId: '', method: '', metadata: {} },
    ...(r.address !== null ? { address: r.address } : {}),
    ...(r.origin === 'bootstrap' || r.origin === 'cleanup' ? { origin: r.origin } : {}),
  };
  return { seq: Number(r.seq), at, scope: r.scope, event };
}
