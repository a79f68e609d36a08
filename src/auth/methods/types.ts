/**
 * The one interface every client authentication method implements (token, oidc, code_host,
 * cluster, jwt). A method is one file under src/auth/methods/ exporting a factory that takes
 * `MethodDeps` and returns an `AuthMethod`; src/auth/setup.ts builds the enabled ones, the
 * `/auth/v1` routes list every method through `describe`, register each one's routes through
 * `register`, and the authentication gate asks the stateless ones (JWT) through `authenticate`.
 *
 * Two kinds of method:
 * - record-storing ones (token, oidc, code_host, cluster) create an authentication record through
 *   AuthService and hand out a client token (session-compatible ones put it in the
 *   `svc_client_token` cookie through src/auth/session.ts); the gate finds them by token lookup;
 * - stateless ones (jwt) store nothing: the gate hands them the credential of their
 *   Authorization scheme and they answer with the authentication it proves.
 */
import type Router from '@koa/router';
import type { Logger } from 'pino';
import type { AuthenticationConfig } from '../../config/types.js';
import type { AppState } from '../../http/context.js';
import type { AuditTrail } from '../audit.js';
import type { AuthService } from '../service.js';
import type { Sessions } from '../session.js';
import type { Authentication, Clock, Method } from '../types.js';

/** The method's key under `authentication.methods`. */
export type MethodConfigKey = keyof AuthenticationConfig['methods'];

/** What a method may use; built once per server process by src/auth/setup.ts. */
export interface MethodDeps {
  service: AuthService;
  /** The whole `authentication` section (a method reads its own `methods.<key>` and `session`). */
  config: AuthenticationConfig;
  /** Login state and session issuing (session-compatible methods only need it). */
  sessions: Sessions;
  logger: Logger;
  clock: Clock;
  /** Logins are recorded here (src/auth/audit.ts). */
  audit: AuditTrail;
}

/** What `describe` needs from the request: paths as the client must call them. */
export interface DescribeContext {
  /** `path` with the request's `X-Forwarded-Prefix` in front (reference §2.4). */
  prefixed(path: string): string;
}

export interface AuthMethod {
  readonly method: Method;
  readonly configKey: MethodConfigKey;
  /** Whether a browser can log in with it (it ends in the `svc_client_token` cookie). */
  readonly sessionCompatible: boolean;
  /**
   * The `metadata` of this method's entry in `GET /auth/v1/method`, snake_case keys inside
   * (reference §2.4); null when the method has none. Called even when the method is disabled.
   */
  describe(ctx: DescribeContext): Record<string, unknown> | null;
  /**
   * Adds the method's routes (e.g. `/auth/v1/method/oidc/:provider/authorize`). Called only when
   * the method is enabled. Paths under `/auth/v1/method/` other than `POST .../token` never need
   * authentication (src/auth/scope.ts).
   */
  register?(router: Router<AppState>): void;
  /**
   * Stateless methods: the Authorization scheme they answer for (`JWT`, matched case-sensitively
   * followed by one space, as Flipt does).
   */
  readonly scheme?: string;
  /**
   * Stateless methods: the authentication a credential of `scheme` proves. Rejects with a
   * VexilError (401 `request was not authenticated`) when it proves none, 503 when it cannot be
   * judged now (the keys cannot be fetched); the reason goes to the log only, never the credential. A credential already verified (a cache) may be answered
   * without a promise, as the authentication gate's decisions are (middleware.ts AuthDecision).
   */
  authenticate?(credential: string): Authentication | Promise<Authentication>;
  /**
   * Extra check of a looked-up record of this method on every request (OIDC's `email_matches`,
   * enforced per request as in Flipt, reference §2.11; the code host's memberships when a re-read
   * is due). Returns a reason to refuse, or undefined; a promise only when it must ask elsewhere.
   */
  recheck?(authentication: Authentication): string | undefined | Promise<string | undefined>;
  /** Begins work the method does ahead of requests (OIDC discovery); never throws. */
  start?(): void;
  /** Background work the method started (discovery refresh, key caches). */
  close?(): Promise<void>;
}
