/**
 * The initial token (interface §5.3, reference §2.3): when the token method is enabled and no
 * token-method record exists at all (even an expired one), create `initial_bootstrap_token`,
 * from `bootstrap.token` when set, expiring after `bootstrap.expiration` when set, and write it
 * to the log once as the `client_token` field. The check and the insert are one atomic step in
 * the store, so replicas starting together create one token between them.
 */
import type { Logger } from 'pino';
import { AUDIT_TYPES, type AuditTrail } from './audit.js';
import { BOOTSTRAP_DESCRIPTION, BOOTSTRAP_NAME, tokenMetadata } from './methods/token.js';
import type { AuthService, Created } from './service.js';

export interface BootstrapConfig {
  token?: string;
  /** ms; absent or 0 = never expires. */
  expiration?: number;
}

export async function bootstrapToken(
  service: AuthService,
  config: BootstrapConfig,
  logger: Logger,
  audit: AuditTrail,
): Promise<Created | undefined> {
  const expiration = config.expiration ?? 0;
  const created = await service.createIfMethodEmpty({
    method: 'METHOD_TOKEN',
    metadata: tokenMetadata({ name: BOOTSTRAP_NAME, description: BOOTSTRAP_DESCRIPTION, namespaceKey: '', metadata: {} }),
    ...(expiration > 0 ? { expiresAt: service.clock() + expiration } : {}),
    ...(config.token !== undefined ? { token: config.token } : {}),
  });
  // The one place a raw token is logged, on purpose: the operator needs it to create others.
  if (created) {
    logger.info({ client_token: created.clientToken, authenticationId: created.authentication.id }, 'access token created');
    audit.record({ type: AUDIT_TYPES.tokenCreated, subject: created.authentication, origin: 'bootstrap' });
  }
  return created;
}
