/**
 * Who may do what with authentication records, for the `/auth/v1` routes (which only parse and
 * shape): the rules that hold whatever the configuration, and those of `authentication.admins`.
 *
 * Always:
 * - a new static token expires no later than the credential creating it: an explicit later
 *   `expiresAt` is refused (403), none given takes the creator's expiry; a credential without
 *   expiry (the bootstrap token) may create tokens without expiry;
 * - a credential's expiry can only be brought forward (`PUT /auth/v1/self/expire`): a later time is
 *   refused (403), so a cluster token never outlives its service-account token;
 * - the new record names its creator (src/auth/principal.ts).
 * Admins (src/auth/admins.ts; everyone when the list is unset) list, read and delete every record;
 * anyone else only its own record and the ones it created (its other sessions included). Records
 * stored before vexil kept a creator, and those of the bootstrap token, have none: admins only.
 *
 * A request without a credential (authentication not required) has no expiry to bound and no
 * identity: it creates tokens without a creator and administers them as an admin would when the
 * list is unset (what the start-up warning about `required: false` says), nothing when it is set.
 */
import { Code, VexilError } from '../errors.js';
import type { AdminPolicy } from './admins.js';
import { tokenMetadata, type TokenRequest } from './methods/token.js';
import { principalOf } from './principal.js';
import type { AuthService, Created, ListPage } from './service.js';
import type { Authentication, Method } from './types.js';

const iso = (ms: number) => new Date(ms).toISOString();

function denied(message: string): VexilError {
  return new VexilError(Code.PermissionDenied, `permission denied: ${message}`);
}

const NOT_YOURS = 'only authentication.admins may read or delete authentications created by someone else';

export class TokenAdministration {
  constructor(
    private readonly service: AuthService,
    readonly policy: AdminPolicy,
  ) {}

  /** True when `caller` sees every record; undefined caller = no credential presented. */
  administersAll(caller: Authentication | undefined): boolean {
    return this.policy.isAdmin(caller);
  }

  /** Whether `caller` (not an admin) may see `record`: its own, or one it created. */
  private owns(caller: Authentication | undefined, record: Authentication): boolean {
    if (caller === undefined) return false;
    if (caller.id !== '' && record.id === caller.id) return true;
    const me = principalOf(caller);
    return me !== undefined && record.createdBy === me;
  }

  async createToken(caller: Authentication | undefined, req: TokenRequest): Promise<Created> {
    if (this.policy.reservedName(req.name) && !this.policy.isAdmin(caller)) {
      throw denied(`the token name ${JSON.stringify(req.name)} is listed in authentication.admins.tokens; only an admin may create a token with it`);
    }
    let expiresAt = req.expiresAt;
    const limit = caller?.expiresAt;
    if (limit !== undefined) {
      if (expiresAt === undefined) expiresAt = limit;
      else if (expiresAt > limit) {
        throw denied(`a token may not outlive the credential that creates it (yours expires at ${iso(limit)}; asked: ${iso(expiresAt)})`);
      }
    }
    const createdBy = caller !== undefined ? principalOf(caller) : undefined;
    return this.service.create({
      method: 'METHOD_TOKEN',
      metadata: tokenMetadata(req),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      ...(createdBy !== undefined ? { createdBy } : {}),
    });
  }

  list(caller: Authentication | undefined, q: { method?: Method; limit: number; offset: number }): Promise<ListPage> {
    if (this.administersAll(caller)) return this.service.list(q);
    if (caller === undefined) return Promise.resolve({ authentications: [], nextPageToken: '' });
    const createdBy = principalOf(caller);
    return this.service.list({ ...q, ownedBy: { id: caller.id, ...(createdBy !== undefined ? { createdBy } : {}) } });
  }

  /** The record, when `caller` may see it; undefined when there is none; 403 when it is another's. */
  async get(caller: Authentication | undefined, id: string): Promise<Authentication | undefined> {
    const record = await this.service.get(id);
    if (record === undefined) return undefined;
    if (!this.administersAll(caller) && !this.owns(caller, record)) throw denied(NOT_YOURS);
    return record;
  }

  /**
   * The deleted record (for the audit trail); undefined when there is no such record (a no-op, as in
   * Flipt); 403 when it is another's.
   */
  async delete(caller: Authentication | undefined, id: string): Promise<Authentication | undefined> {
    const record = await this.service.get(id);
    if (record === undefined) return undefined;
    if (!this.administersAll(caller) && !this.owns(caller, record)) throw denied(NOT_YOURS);
    return (await this.service.delete(id)) ? record : undefined;
  }

  /**
   * `PUT /auth/v1/self/expire`: sets the caller's expiry, never later than it is. The record as
   * changed, or undefined when nothing was stored (a stateless credential, a record already gone).
   */
  async expireSelf(caller: Authentication, at: number): Promise<Authentication | undefined> {
    // A stateless credential (JWT) has no record: its token's own `exp` rules.
    if (caller.id === '') return undefined;
    const outcome = await this.service.shorten(caller.id, at);
    if (!outcome.ok && outcome.reason === 'later') {
      throw denied(`a credential's expiry can only be brought forward (it expires at ${iso(outcome.expiresAt)}; asked: ${iso(at)})`);
    }
    return outcome.ok ? outcome.authentication : undefined;
  }
}
