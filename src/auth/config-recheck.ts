/**
 * Tightened configuration applies to sessions and tokens made before it: on every request the
 * authentication gate asks this check about the looked-up record, and refuses it (401) with the
 * reason it returns. Pure and cheap (the record's method and metadata against the config):
 * - a record of a method no longer enabled (its tokens and sessions stop working with it);
 * - an OIDC session of a provider no longer configured;
 * - a code-host session the current `allowed_organizations` / `allowed_teams` would not admit,
 *   judged on the memberships recorded at login (the allowed organizations the user belonged to,
 *   and the user's teams there); a session with no recorded memberships is refused once an
 *   allow-list is set. Memberships that change at the code host are src/auth/code-host/recheck.ts's.
 * OIDC's `email_matches` is re-checked by the OIDC method itself (src/auth/methods/oidc.ts).
 * JWTs are not stored: their method's current settings verify each one.
 */
import type { AuthenticationConfig } from '../config/types.js';
import { CODE_HOST_METADATA, decideAccess, needsMemberships, recordedMemberships, type AccessPolicy } from './code-host/access.js';
import { OIDC_METADATA, type Authentication, type Method } from './types.js';

const CONFIG_KEY: Readonly<Record<Exclude<Method, 'METHOD_JWT'>, keyof AuthenticationConfig['methods']>> = {
  METHOD_TOKEN: 'token',
  METHOD_OIDC: 'oidc',
  METHOD_CODE_HOST: 'code_host',
  METHOD_CLUSTER: 'cluster',
};

/** A reason to refuse a record under the current configuration, or undefined. */
export type ConfigRecheck = (a: Authentication) => string | undefined;

export function createConfigRecheck(auth: AuthenticationConfig): ConfigRecheck {
  const m = auth.methods;
  const providers = new Set(Object.keys(m.oidc.providers));
  const policy: AccessPolicy = { allowedOrganizations: m.code_host.allowed_organizations, allowedTeams: m.code_host.allowed_teams };
  const membershipsNeeded = needsMemberships(policy);
  // The verdict on a code-host record, once per record object (the lookup cache hands out the same
  // object until it is reloaded): no JSON parsing on every request of a session.
  const codeHostVerdicts = new WeakMap<Authentication, { reason: string | undefined }>();
  const codeHostVerdict = (a: Authentication): string | undefined => {
    const known = codeHostVerdicts.get(a);
    if (known !== undefined) return known.reason;
    const memberships = recordedMemberships(a);
    let reason: string | undefined;
    if (memberships === undefined) reason = 'the session recorded no organization memberships, and allowed_organizations is now set';
    else {
      const decision = decideAccess(policy, a.metadata[CODE_HOST_METADATA.login] ?? '', memberships);
      reason = decision.allowed ? undefined : decision.reason;
    }
    codeHostVerdicts.set(a, { reason });
    return reason;
  };
  return (a) => {
    if (a.method === 'METHOD_JWT') return undefined;
    if (!m[CONFIG_KEY[a.method]].enabled) return `authentication method ${a.method} is no longer enabled`;
    if (a.method === 'METHOD_OIDC') {
      const provider = a.metadata[OIDC_METADATA.provider] ?? '';
      return providers.has(provider) ? undefined : `oidc provider ${JSON.stringify(provider)} is no longer configured`;
    }
    if (a.method === 'METHOD_CODE_HOST' && membershipsNeeded) return codeHostVerdict(a);
    return undefined;
  };
}
