/**
 * Who may log in through the code host, and what the authentication record says about them.
 * Pure: the memberships come from the code host's API (./api.ts), the policy from the config.
 *
 * The rule is Flipt's (reference §2.8): no `allowed_organizations` = anyone with an account;
 * otherwise the user must belong to at least one allowed organization and, when `allowed_teams` is
 * not empty, to one of the teams listed for that organization (an allowed organization without a
 * teams entry then admits nobody). Unlike Flipt, names are compared case-insensitively, as the code
 * host treats them (`Acme` and `acme` are one organization).
 */
import type { Authentication } from '../types.js';
import type { CodeHostUser, TeamMembership } from './api.js';

export interface AccessPolicy {
  readonly allowedOrganizations: readonly string[];
  /** Organization → team slugs. */
  readonly allowedTeams: Readonly<Record<string, readonly string[]>>;
}

export interface Memberships {
  readonly organizations: readonly string[];
  readonly teams: readonly TeamMembership[];
}

export type AccessDecision =
  | {
      readonly allowed: true;
      /** The allowed organizations the user is in (all of theirs without an allow-list). */
      readonly organizations: string[];
      /** Organization → the user's team slugs there, for the organizations above. */
      readonly teams: Record<string, string[]>;
    }
  | { readonly allowed: false; readonly reason: string };

const fold = (s: string) => s.toLowerCase();

/** True when the policy needs the user's organizations (and so the `read:org` scope). */
export function needsMemberships(policy: AccessPolicy): boolean {
  return policy.allowedOrganizations.length > 0;
}

/** True when the policy needs the user's teams. */
export function needsTeams(policy: AccessPolicy): boolean {
  return policy.allowedOrganizations.length > 0 && Object.keys(policy.allowedTeams).length > 0;
}

export function decideAccess(policy: AccessPolicy, login: string, memberships: Memberships): AccessDecision {
  const userOrgs = new Map(memberships.organizations.map((o) => [fold(o), o]));
  const userTeams = new Map<string, Set<string>>();
  for (const t of memberships.teams) {
    const org = fold(t.org);
    if (!userTeams.has(org)) userTeams.set(org, new Set());
    userTeams.get(org)!.add(fold(t.slug));
  }
  const teamsOf = (org: string): string[] =>
    memberships.teams.filter((t) => fold(t.org) === fold(org)).map((t) => t.slug);

  if (policy.allowedOrganizations.length === 0) {
    const organizations = [...userOrgs.values()];
    return { allowed: true, organizations, teams: Object.fromEntries(organizations.map((o) => [o, teamsOf(o)])) };
  }

  const teamRule = Object.keys(policy.allowedTeams).length > 0;
  const allowedTeams = new Map(Object.entries(policy.allowedTeams).map(([org, teams]) => [fold(org), teams.map(fold)]));
  const admitting = policy.allowedOrganizations.filter((org) => {
    if (!userOrgs.has(fold(org))) return false;
    if (!teamRule) return true;
    const mine = userTeams.get(fold(org));
    return (allowedTeams.get(fold(org)) ?? []).some((team) => mine?.has(team) === true);
  });
  if (admitting.length === 0) {
    const reason = teamRule
      ? `code host user "${login}" is not in an allowed team of an allowed organization`
      : `code host user "${login}" is not a member of an allowed organization`;
    return { allowed: false, reason };
  }
  // The code host's spelling of each name, as the user's own listing has it.
  const organizations = admitting.map((org) => userOrgs.get(fold(org))!);
  return { allowed: true, organizations, teams: Object.fromEntries(organizations.map((o) => [o, teamsOf(o)])) };
}

/** Metadata keys of a code-host authentication record. */
export const CODE_HOST_METADATA = {
  login: 'io.svc.auth.code_host.login',
  name: 'io.svc.auth.code_host.name',
  email: 'io.svc.auth.code_host.email',
  picture: 'io.svc.auth.code_host.picture',
  id: 'io.svc.auth.code_host.id',
  /** JSON array: the organizations that admitted the user (all of theirs without an allow-list). */
  organizations: 'io.svc.auth.code_host.organizations',
  /** JSON object: organization → the user's team slugs there. */
  teams: 'io.svc.auth.code_host.teams',
  /** The method-neutral copies the UI reads whatever the login method (Flipt's io.flipt.auth.*). */
  sharedEmail: 'io.svc.auth.email',
  sharedName: 'io.svc.auth.name',
  sharedPicture: 'io.svc.auth.picture',
} as const;

/**
 * The record's metadata: only non-empty values, as Flipt stores them. `email` is the primary
 * verified address when it could be read, else the profile's public one. Memberships are written
 * only when they were read (the `read:org` scope).
 */
export function codeHostMetadata(user: CodeHostUser, email: string, access?: Extract<AccessDecision, { allowed: true }>): Record<string, string> {
  const m: Record<string, string> = Object.create(null) as Record<string, string>;
  const put = (key: string, value: string) => {
    if (value !== '') m[key] = value;
  };
  put(CODE_HOST_METADATA.login, user.login);
  put(CODE_HOST_METADATA.id, user.id);
  put(CODE_HOST_METADATA.name, user.name);
  put(CODE_HOST_METADATA.email, email);
  put(CODE_HOST_METADATA.picture, user.avatarUrl);
  put(CODE_HOST_METADATA.sharedName, user.name);
  put(CODE_HOST_METADATA.sharedEmail, email);
  put(CODE_HOST_METADATA.sharedPicture, user.avatarUrl);
  if (access) {
    m[CODE_HOST_METADATA.organizations] = JSON.stringify(access.organizations);
    m[CODE_HOST_METADATA.teams] = JSON.stringify(access.teams);
  }
  return m;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The memberships recorded at login, or undefined when none were (no `read:org`). */
export function recordedMemberships(a: Authentication): Memberships | undefined {
  const orgs = parseJson(a.metadata[CODE_HOST_METADATA.organizations]);
  if (!Array.isArray(orgs)) return undefined;
  const organizations = orgs.filter((o): o is string => typeof o === 'string');
  const teams: TeamMembership[] = [];
  const byOrg = parseJson(a.metadata[CODE_HOST_METADATA.teams]);
  if (byOrg !== null && typeof byOrg === 'object' && !Array.isArray(byOrg)) {
    for (const [org, slugs] of Object.entries(byOrg as Record<string, unknown>)) {
      if (Array.isArray(slugs)) for (const slug of slugs) if (typeof slug === 'string') teams.push({ org, slug });
    }
  }
  return { organizations, teams };
}
