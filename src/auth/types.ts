/**
 * The authentication record (interface §2.9) and the names vexil uses on the wire. Method names
 * and metadata keys use the neutral word `svc` where Flipt embeds its own name.
 */

/** Stored methods, in the order `GET /auth/v1/method` lists them. */
export const METHODS = ['METHOD_TOKEN', 'METHOD_CODE_HOST', 'METHOD_OIDC', 'METHOD_CLUSTER', 'METHOD_JWT'] as const;
export type Method = (typeof METHODS)[number];

/** Numeric enum values, as Flipt numbers them (the `method` query filter accepts either form). */
export const METHOD_NUMBERS: Readonly<Record<Method, number>> = {
  METHOD_TOKEN: 1,
  METHOD_OIDC: 2,
  METHOD_CLUSTER: 3,
  METHOD_CODE_HOST: 4,
  METHOD_JWT: 5,
};

/**
 * The metadata keys each method writes on the records it creates. Kept here, below the methods,
 * because other parts read them too (principal.ts, admins.ts, config-recheck.ts); the code-host
 * method's keys live with its access rules (code-host/access.ts).
 */
export const TOKEN_METADATA = {
  name: 'io.svc.auth.token.name',
  description: 'io.svc.auth.token.description',
  namespace: 'io.svc.auth.token.namespace',
} as const;

export const OIDC_METADATA = {
  email: 'io.svc.auth.oidc.email',
  emailVerified: 'io.svc.auth.oidc.email_verified',
  name: 'io.svc.auth.oidc.name',
  picture: 'io.svc.auth.oidc.picture',
  provider: 'io.svc.auth.oidc.provider',
  sub: 'io.svc.auth.oidc.sub',
} as const;

export const CLUSTER_METADATA = {
  namespace: 'io.svc.auth.cluster.namespace',
  podName: 'io.svc.auth.cluster.pod.name',
  podUid: 'io.svc.auth.cluster.pod.uid',
  serviceAccountName: 'io.svc.auth.cluster.serviceaccount.name',
  serviceAccountUid: 'io.svc.auth.cluster.serviceaccount.uid',
} as const;

export const JWT_METADATA = {
  issuer: 'io.svc.auth.jwt.issuer',
  email: 'io.svc.auth.jwt.email',
  sub: 'io.svc.auth.jwt.sub',
  picture: 'io.svc.auth.jwt.picture',
  name: 'io.svc.auth.jwt.name',
  role: 'io.svc.auth.jwt.role',
} as const;

/** The cookie a browser presents instead of an Authorization header. */
export const CLIENT_TOKEN_COOKIE = 'svc_client_token';
/** The OIDC / code-host login state cookie. */
export const STATE_COOKIE = 'svc_client_state';

export interface Authentication {
  readonly id: string;
  readonly method: Method;
  /** Milliseconds since the epoch; undefined = never expires. */
  readonly expiresAt?: number;
  /**
   * Set when the credential is accepted past `expiresAt` (a JWT, within its leeway): the moment
   * (ms since the epoch) from which it is refused. Not stored, not shown.
   */
  readonly acceptedUntil?: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly metadata: Readonly<Record<string, string>>;
  /**
   * The principal that created the record (src/auth/principal.ts); absent for the bootstrap token
   * and records stored before vexil kept it. Not part of the JSON (Flipt has no such field).
   */
  readonly createdBy?: string;
}

/** After this moment (ms since the epoch) a check of the credential fails; undefined = never. */
export function acceptedUntil(a: Authentication): number | undefined {
  return a.acceptedUntil ?? a.expiresAt;
}

/** Milliseconds since the epoch. Injected everywhere time matters, so tests need no sleeps. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

/** The JSON of an authentication record: no `expiresAt` key when it never expires, map keys sorted. */
export function authenticationJson(a: Authentication): Record<string, unknown> {
  const metadata: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const key of Object.keys(a.metadata).sort()) metadata[key] = a.metadata[key]!;
  return {
    id: a.id,
    method: a.method,
    ...(a.expiresAt !== undefined ? { expiresAt: new Date(a.expiresAt).toISOString() } : {}),
    createdAt: new Date(a.createdAt).toISOString(),
    updatedAt: new Date(a.updatedAt).toISOString(),
    metadata,
  };
}

/** The namespace a token is limited to, or undefined for an unscoped one (blank = unscoped, as in Flipt). */
export function scopedNamespace(a: Authentication): string | undefined {
  if (a.method !== 'METHOD_TOKEN') return undefined;
  const ns = a.metadata[TOKEN_METADATA.namespace];
  return ns === undefined || ns.trim() === '' ? undefined : ns;
}
