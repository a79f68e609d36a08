/**
 * Who an authentication stands for, as one stable string: the identity recorded as the creator of
 * the tokens it creates (`created_by`), and compared to decide which records a principal that is not
 * an admin may list and delete (src/auth/administration.ts). Pure: read from the record's method and
 * metadata only.
 *
 * One identity per person or workload, not per session: an OIDC user logging in twice, or a pod
 * exchanging its service-account token again, is the same principal and sees the same tokens.
 * - static token: its record id (a token is its own principal);
 * - OIDC: provider and `sub` (the email when the provider sends no `sub`);
 * - code host: the user's numeric id (the login when the id is unknown; logins can be renamed);
 * - cluster: namespace and service-account name;
 * - JWT: issuer and the `user.sub` claim (else `user.email`).
 * Undefined when the record names nobody (a JWT without user claims): such a principal creates
 * tokens no one but the admins can see.
 */
import { CODE_HOST_METADATA } from './code-host/access.js';
import { CLUSTER_METADATA, JWT_METADATA, OIDC_METADATA, type Authentication } from './types.js';

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);

/** A JSON array of the parts: unambiguous whatever characters a provider name or subject holds. */
const key = (...parts: string[]): string => JSON.stringify(parts);

export function principalOf(a: Authentication): string | undefined {
  const m = a.metadata;
  switch (a.method) {
    case 'METHOD_TOKEN':
      return a.id === '' ? undefined : key('token', a.id);
    case 'METHOD_OIDC': {
      const provider = m[OIDC_METADATA.provider] ?? '';
      const sub = nonEmpty(m[OIDC_METADATA.sub]);
      if (sub !== undefined) return key('oidc', provider, 'sub', sub);
      const email = nonEmpty(m[OIDC_METADATA.email]);
      return email !== undefined ? key('oidc', provider, 'email', email.toLowerCase()) : undefined;
    }
    case 'METHOD_CODE_HOST': {
      const id = nonEmpty(m[CODE_HOST_METADATA.id]);
      if (id !== undefined) return key('code_host', 'id', id);
      const login = nonEmpty(m[CODE_HOST_METADATA.login]);
      return login !== undefined ? key('code_host', 'login', login.toLowerCase()) : undefined;
    }
    case 'METHOD_CLUSTER': {
      const namespace = nonEmpty(m[CLUSTER_METADATA.namespace]);
      const account = nonEmpty(m[CLUSTER_METADATA.serviceAccountName]);
      return namespace !== undefined && account !== undefined ? key('cluster', namespace, account) : undefined;
    }
    case 'METHOD_JWT': {
      const issuer = m[JWT_METADATA.issuer] ?? '';
      const sub = nonEmpty(m[JWT_METADATA.sub]);
      if (sub !== undefined) return key('jwt', issuer, 'sub', sub);
      const email = nonEmpty(m[JWT_METADATA.email]);
      return email !== undefined ? key('jwt', issuer, 'email', email.toLowerCase()) : undefined;
    }
  }
}
