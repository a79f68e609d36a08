/**
 * The authentication configurations that hand out more than an operator may think, said at start:
 * each finding is a warning, or with `authentication.strict: true` a refusal to start (the first
 * three below; the last two stay warnings, an unset `admins` being Flipt's behaviour). Pure: the
 * config in, findings out; src/auth/setup.ts logs or refuses.
 *
 * - `code_host` without `allowed_organizations`: anyone with an account on the code host logs in;
 * - `cluster` without `audiences`: a service-account token minted for any other service is accepted;
 * - methods enabled while `required` is false: no request needs the credentials they hand out, and
 *   anyone reaching the server may create, list and delete tokens;
 * - `admins` unset: every unscoped principal may list and delete every token; the finding names
 *   exactly who that is under this configuration;
 * - `admins.code_host` naming organizations outside `allowed_organizations` (they match nobody).
 */
import type { AuthenticationConfig } from '../config/types.js';

export interface StartupFinding {
  /** The config key the finding is about. */
  readonly key: string;
  readonly message: string;
  /** Refused at start with `authentication.strict: true`. */
  readonly strict: boolean;
}

/** The warning about the token method with required: false (its wording predates the others; kept). */
export const OPEN_TOKEN_MANAGEMENT =
  'authentication.methods.token is enabled while authentication.required is false: anyone who can reach this server can create, list and delete client tokens, and with a shared PostgreSQL store the tokens created here are accepted by replicas that require authentication; set authentication.required: true (create the first tokens with the bootstrap token), or disable the token method on this server';

const list = (xs: readonly string[]) => xs.map((x) => JSON.stringify(x)).join(', ');

/** Who is an unscoped principal under this configuration, one phrase per way in. */
export function unscopedPrincipals(auth: AuthenticationConfig): string[] {
  const m = auth.methods;
  const who: string[] = [];
  if (!auth.required) who.push('anyone who can reach this server, without a credential (authentication.required is false)');
  if (m.token.enabled) who.push('every holder of a static token created without a namespace (the bootstrap token among them)');
  if (m.oidc.enabled) {
    const providers = Object.keys(m.oidc.providers).sort();
    const emails = m.oidc.email_matches.length > 0 ? ` whose email matches one of ${list(m.oidc.email_matches)}` : ' (any email: email_matches is empty)';
    who.push(`every user who logs in through the OIDC provider${providers.length === 1 ? '' : 's'} ${list(providers)}${emails}`);
  }
  if (m.code_host.enabled) {
    const host = m.code_host.server_url;
    if (m.code_host.allowed_organizations.length === 0) who.push(`anyone with an account on ${host} (allowed_organizations is empty)`);
    else {
      const teams = Object.keys(m.code_host.allowed_teams).length > 0 ? ' in the teams listed in allowed_teams' : '';
      who.push(`every member of the organization(s) ${list(m.code_host.allowed_organizations)} on ${host}${teams}`);
    }
  }
  if (m.cluster.enabled) {
    const aud = m.cluster.audiences.length > 0 ? `minted for the audience(s) ${list(m.cluster.audiences)}` : 'minted for any audience';
    who.push(`every pod of the cluster at ${m.cluster.discovery_url} holding a service-account token ${aud}`);
  }
  if (m.jwt.enabled) {
    const from = m.jwt.jwks_url !== undefined ? `a key of ${m.jwt.jwks_url}` : `the key in ${m.jwt.public_key_file ?? '(no key)'}`;
    const iss = m.jwt.validate_claims.issuer !== undefined ? ` with issuer ${JSON.stringify(m.jwt.validate_claims.issuer)}` : ' from any issuer';
    who.push(`every holder of a JWT signed with ${from}${iss}`);
  }
  return who;
}

export function startupFindings(auth: AuthenticationConfig): StartupFinding[] {
  const m = auth.methods;
  const out: StartupFinding[] = [];
  if (m.code_host.enabled && m.code_host.allowed_organizations.length === 0) {
    out.push({
      key: 'authentication.methods.code_host.allowed_organizations',
      message: `authentication.methods.code_host has no allowed_organizations: anyone with an account on ${m.code_host.server_url} can log in and create tokens; list the organizations (with the read:org scope)`,
      strict: true,
    });
  }
  if (m.cluster.enabled && m.cluster.audiences.length === 0) {
    out.push({
      key: 'authentication.methods.cluster.audiences',
      message:
        'authentication.methods.cluster has no audiences: a service-account token minted for any other service (aud=vault, ...) is accepted; set audiences and mint the projected tokens for it',
      strict: true,
    });
  }
  if (!auth.required) {
    if (m.token.enabled) out.push({ key: 'authentication.required', message: OPEN_TOKEN_MANAGEMENT, strict: true });
    const others = (['oidc', 'code_host', 'cluster', 'jwt'] as const).filter((k) => m[k].enabled);
    if (others.length > 0) {
      out.push({
        key: 'authentication.required',
        message: `authentication.methods ${others.join(', ')} ${others.length === 1 ? 'is' : 'are'} enabled while authentication.required is false: no request needs the credentials ${others.length === 1 ? 'it hands' : 'they hand'} out; set authentication.required: true`,
        strict: true,
      });
    }
  }
  // Only the allowed organizations a user belongs to are recorded at login: an admin organization
  // outside allowed_organizations can never match.
  const allowed = new Set(m.code_host.allowed_organizations.map((o) => o.toLowerCase()));
  const adminOrgs = auth.admins === undefined ? [] : [...auth.admins.code_host.organizations, ...Object.keys(auth.admins.code_host.teams)];
  const unmatched = allowed.size === 0 ? [] : adminOrgs.filter((o) => !allowed.has(o.toLowerCase()));
  if (m.code_host.enabled && unmatched.length > 0) {
    out.push({
      key: 'authentication.admins.code_host',
      message: `authentication.admins.code_host names organization(s) ${list(unmatched)} that are not in allowed_organizations: their members cannot log in, so these entries match nobody`,
      strict: false,
    });
  }
  const inUse = auth.required || (['token', 'oidc', 'code_host', 'cluster', 'jwt'] as const).some((k) => m[k].enabled);
  if (auth.admins === undefined && inUse) {
    out.push({
      key: 'authentication.admins',
      message: `authentication.admins is not set: every unscoped principal may list, read and delete every authentication (other users' sessions and tokens included), that is: ${unscopedPrincipals(auth).join('; ')}; set authentication.admins to limit that to the principals listed there`,
      strict: false,
    });
  }
  return out;
}
