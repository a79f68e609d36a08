/**
 * Audit events for what changes vexil's own state: client tokens created and deleted, logins by
 * method (OIDC and code-host sessions, cluster service-account exchanges), logouts and expiries a
 * holder asks for, and the records the cleanup deletes once expired. Each event says who (the
 * authentication record: id, method, non-secret metadata), to whom, when, and from where (the
 * request's address read as `server.trusted_proxies` says, src/http/client-address.ts). Never a
 * token: events are built from records, which hold only the token's hash, and the hash is left out.
 *
 * Written as one structured log line per event with a stable shape: `msg: "audit"` and the event
 * under `audit` (docs/authentication/audit.md). Listeners (`onEvent`) receive the same object for
 * other destinations. Event types follow CloudEvents naming (`io.vexil.auth.*`): the same names
 * are used wherever the events are delivered.
 *
 * A JWT presented with a request creates nothing (the method is stateless): it is not an event.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { ClientAddress } from '../http/client-address.js';
import type { Authentication, Clock } from './types.js';

export const AUDIT_TYPES = {
  tokenCreated: 'io.vexil.auth.token.created',
  tokenDeleted: 'io.vexil.auth.token.deleted',
  login: 'io.vexil.auth.login',
  logout: 'io.vexil.auth.logout',
  expiryShortened: 'io.vexil.auth.expiry.shortened',
  expired: 'io.vexil.auth.expired',
} as const;
export type AuditType = (typeof AUDIT_TYPES)[keyof typeof AUDIT_TYPES];

/** An authentication record as an event names it: no token, no hash. */
export interface AuditParty {
  readonly authenticationId: string;
  readonly method: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly expiresAt?: string;
}

export interface AuditEvent {
  /** Unique per event (a UUID): a destination that receives an event twice can tell. */
  readonly id: string;
  readonly type: AuditType;
  /** RFC 3339, when vexil made the change. */
  readonly time: string;
  /** Who asked for it; absent when nobody did (the bootstrap token, the expiry cleanup) or the request carried no credential. */
  readonly actor?: AuditParty;
  /** The record created, deleted, logged in, logged out or expired. */
  readonly subject: AuditParty;
  /** The client's address; absent for changes no request asked for. */
  readonly address?: string;
  /** `bootstrap` or `cleanup` for changes vexil makes itself; absent for requests. */
  readonly origin?: 'bootstrap' | 'cleanup';
}

export const AUDIT_MESSAGE = 'audit';

export function auditParty(a: Authentication): AuditParty {
  const metadata: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const key of Object.keys(a.metadata).sort()) metadata[key] = a.metadata[key]!;
  return {
    authenticationId: a.id,
    method: a.method,
    metadata,
    ...(a.expiresAt !== undefined ? { expiresAt: new Date(a.expiresAt).toISOString() } : {}),
  };
}

export interface AuditInput {
  readonly type: AuditType;
  readonly subject: Authentication;
  /** The caller; a stateless or absent credential with no record id is left out. */
  readonly actor?: Authentication;
  /** The request that asked for the change (its address is recorded). */
  readonly request?: IncomingMessage;
  readonly origin?: AuditEvent['origin'];
  /** The log to write to (a request's, so its request id goes along); default the trail's own. */
  readonly log?: Logger;
}

export class AuditTrail {
  private readonly listeners: Array<(event: AuditEvent) => void> = [];

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly clientAddress: ClientAddress,
  ) {}

  /** Calls `listener` with every event recorded from now on (a throwing listener is logged, not fatal). */
  onEvent(listener: (event: AuditEvent) => void): void {
    this.listeners.push(listener);
  }

  record(input: AuditInput): AuditEvent {
    const address = input.request === undefined ? undefined : this.clientAddress(input.request.socket.remoteAddress, input.request.headers['x-forwarded-for']);
    const event: AuditEvent = {
      id: randomUUID(),
      type: input.type,
      time: new Date(this.clock()).toISOString(),
      ...(input.actor !== undefined && input.actor.id !== '' ? { actor: auditParty(input.actor) } : {}),
      subject: auditParty(input.subject),
      ...(address !== undefined ? { address } : {}),
      ...(input.origin !== undefined ? { origin: input.origin } : {}),
    };
    (input.log ?? this.logger).info({ audit: event }, AUDIT_MESSAGE);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.logger.error({ err, auditId: event.id }, 'an audit event listener failed');
      }
    }
    return event;
  }
}
