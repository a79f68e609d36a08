/**
 * `authentication.admins`: whether an authentication may administer tokens it did not create
 * (list, read and delete every record). Pure: decided from the record's method and metadata and
 * the configured lists, so it costs nothing per request and holds on every replica alike.
 *
 * Unset, every principal is an admin (Flipt's behaviour; src/auth/startup-checks.ts says at start
 * who that is). Set, a principal is an admin when its record matches one entry:
 * - static token: its id, or its name; names listed here are reserved (only an admin may give a
 *   new token such a name), else anyone who may create tokens could name one into an admin;
 * - OIDC: its email (case-insensitive), or a stored claim (`sub`, `email`, `name`, `provider`)
 *   with one of the listed values;
 * - code host: its login, or one of the organizations (teams) recorded at login: with
 *   `allowed_organizations` set, those are the allowed ones the user belongs to;
 * - cluster: `namespace/name` of its service account, or `namespace/*`;
 * - JWT: a claim with one of the listed values (`iss`, the `user` claim's `sub`, `email`, `name`,
 *   `role`, or a full `io.svc.auth.*` claim name).
 * A request without a credential (`required: false`) is never an admin when the list is set.
 */
import type { AuthenticationAdmins } from '../config/types.js';
import { CODE_HOST_METADATA, recordedMemberships } from './code-host/access.js';
import { CLUSTER_METADATA, TOKEN_METADATA, type Authentication } from './types.js';

export interface AdminPolicy {
  /** True when `authentication.admins` is set (else everyone administers every token). */
  readonly configured: boolean;
  isAdmin(a: Authentication | undefined): boolean;
  /** True when a new static token may not be given this name by a principal that is not an admin. */
  reservedName(name: string): boolean;
}

const fold = (s: string) => s.toLowerCase();

/** A claim's value as the record stores it: `io.svc.auth.<method>.<claim>`, or the full key. */
function claimValue(a: Authentication, prefix: string, claim: string): string | undefined {
  const name = prefix === 'jwt' && claim === 'iss' ? 'issuer' : claim;
  return a.metadata[`io.svc.auth.${prefix}.${name}`] ?? (claim.startsWith('io.svc.auth.') ? a.metadata[claim] : undefined);
}

function claimsMatch(a: Authentication, prefix: string, claims: Readonly<Record<string, readonly string[]>>): boolean {
  return Object.entries(claims).some(([claim, values]) => {
    const v = claimValue(a, prefix, claim);
    return v !== undefined && values.includes(v);
  });
}

function codeHostAdmin(a: Authentication, cfg: AuthenticationAdmins['code_host']): boolean {
  const login = a.metadata[CODE_HOST_METADATA.login];
  if (login !== undefined && cfg.logins.some((l) => fold(l) === fold(login))) return true;
  const recorded = recordedMemberships(a);
  if (recorded === undefined) return false;
  const orgs = recorded.organizations.map(fold);
  if (cfg.organizations.some((o) => orgs.includes(fold(o)))) return true;
  const teams = new Set(recorded.teams.map((m) => `${fold(m.org)}/${fold(m.slug)}`));
  return Object.entries(cfg.teams).some(([org, slugs]) => slugs.some((slug) => teams.has(`${fold(org)}/${fold(slug)}`)));
}

function clusterAdmin(a: Authentication, accounts: readonly string[]): boolean {
  const namespace = a.metadata[CLUSTER_METADATA.namespace] ?? '';
  const name = a.metadata[CLUSTER_METADATA.serviceAccountName] ?? '';
  if (namespace === '' || name === '') return false;
  return accounts.includes(`${namespace}/${name}`) || accounts.includes(`${namespace}/*`);
}

export function createAdminPolicy(admins: AuthenticationAdmins | undefined): AdminPolicy {
  if (admins === undefined) return { configured: false, isAdmin: () => true, reservedName: () => false };
  const tokens = new Set(admins.tokens);
  const emails = new Set(admins.oidc.emails.map(fold));
  const isAdmin = (a: Authentication | undefined): boolean => {
    if (a === undefined) return false;
    switch (a.method) {
      case 'METHOD_TOKEN': {
        const name = a.metadata[TOKEN_METADATA.name];
        return tokens.has(a.id) || (name !== undefined && name !== '' && tokens.has(name));
      }
      case 'METHOD_OIDC': {
        const email = a.metadata['io.svc.auth.oidc.email'];
        return (email !== undefined && emails.has(fold(email))) || claimsMatch(a, 'oidc', admins.oidc.claims);
      }
      case 'METHOD_CODE_HOST':
        return codeHostAdmin(a, admins.code_host);
      case 'METHOD_CLUSTER':
        return clusterAdmin(a, admins.cluster.service_accounts);
      case 'METHOD_JWT':
        return claimsMatch(a, 'jwt', admins.jwt.claims);
    }
  };
  return { configured: true, isAdmin, reservedName: (name) => tokens.has(name) };
}
