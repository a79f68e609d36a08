/**
 * Code-host memberships re-read while a session lives: with `allowed_organizations` set, a user
 * removed from the organization (or team) at the code host is refused at the session's next
 * request after the re-read, not only at the next login.
 *
 * Bounds: at most one re-read (the organizations, and the teams when `allowed_teams` is set: a few
 * paged API calls, see ./api.ts) per session per `code_host.recheck_interval`; requests arriving
 * while one runs wait for it instead of starting another; at most `maxSessions` sessions are held
 * (the oldest beyond are dropped). The re-read uses the access token of the session's login, held
 * in this process's memory only (never stored, logged or sent anywhere but the code host's API)
 * until the session expires. A session this process did not log in (another replica, or before a
 * restart) is judged on the memberships recorded at login (src/auth/config-recheck.ts).
 *
 * A code host that does not answer keeps the session on its last known memberships (logged at
 * warn) until the next re-read: an outage there must not log everyone out. A code host that
 * refuses the access token (401: the user revoked vexil's authorization) ends the session.
 */
import type { Logger } from 'pino';
import type { Authentication, Clock } from '../types.js';
import { decideAccess, needsTeams, type AccessPolicy } from './access.js';
import { CodeHostError, type CodeHostClient } from './api.js';

export interface MembershipRecheckOptions {
  readonly api: Pick<CodeHostClient, 'organizations' | 'teams'>;
  readonly policy: AccessPolicy;
  /** ms between two re-reads of one session. */
  readonly intervalMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Sessions held at once (default 10,000). */
  readonly maxSessions?: number;
}

interface Held {
  accessToken: string;
  readonly login: string;
  readonly until: number;
  checkedAt: number;
  refused?: string;
  running?: Promise<string | undefined>;
}

export class MembershipRecheck {
  private readonly held = new Map<string, Held>();
  private readonly maxSessions: number;

  constructor(private readonly opts: MembershipRecheckOptions) {
    this.maxSessions = opts.maxSessions ?? 10_000;
  }

  /** After a login: hold the session's access token until `until` (the session's expiry). */
  hold(authenticationId: string, login: string, accessToken: string, until: number): void {
    this.held.set(authenticationId, { accessToken, login, until, checkedAt: this.opts.clock() });
    while (this.held.size > this.maxSessions) {
      const oldest = this.held.keys().next();
      if (oldest.done) break;
      this.held.delete(oldest.value);
    }
  }

  /** A reason to refuse the session, or undefined; a promise while a due re-read runs. */
  check(a: Authentication): string | undefined | Promise<string | undefined> {
    const h = this.held.get(a.id);
    if (h === undefined) return undefined;
    const now = this.opts.clock();
    if (h.until <= now) {
      this.held.delete(a.id);
      return undefined;
    }
    if (h.refused !== undefined) return h.refused;
    if (h.running !== undefined) return h.running;
    if (now - h.checkedAt < this.opts.intervalMs) return undefined;
    const running = this.reread(a.id, h).finally(() => {
      h.running = undefined;
    });
    h.running = running;
    return running;
  }

  /** Number of sessions held (for tests and the bound). */
  get size(): number {
    return this.held.size;
  }

  clear(): void {
    this.held.clear();
  }

  private async reread(id: string, h: Held): Promise<string | undefined> {
    const { api, policy, logger } = this.opts;
    try {
      const [organizations, teams] = await Promise.all([
        api.organizations(h.accessToken),
        needsTeams(policy) ? api.teams(h.accessToken) : Promise.resolve([]),
      ]);
      h.checkedAt = this.opts.clock();
      const decision = decideAccess(policy, h.login, { organizations, teams });
      if (decision.allowed) return undefined;
      return this.refuse(id, h, decision.reason);
    } catch (err) {
      h.checkedAt = this.opts.clock();
      if (err instanceof CodeHostError && err.kind === 'status' && err.status === 401) {
        return this.refuse(id, h, `the code host no longer accepts the access token of "${h.login}" (authorization revoked)`);
      }
      logger.warn(
        { authenticationId: id, login: h.login, error: err instanceof Error ? err.message : 'unknown error' },
        'code host membership re-check failed: the session keeps its last known memberships until the next re-check',
      );
      return undefined;
    }
  }

  private refuse(id: string, h: Held, reason: string): string {
    h.refused = reason;
    // Not needed any more: the session stays refused.
    h.accessToken = '';
    this.opts.logger.info({ authenticationId: id, login: h.login, reason }, 'code host session refused after a membership re-check');
    return reason;
  }
}
