/**
 * Authentication for one server process, from the resolved config: open the store (SQLite file,
 * PostgreSQL, or an empty one when nothing uses authentication), create the bootstrap
 * token, start the cleanup loops, and build the authentication gate and the route dependencies.
 */
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { AuthenticationConfig, Config } from '../config/types.js';
import { TokenAdministration } from './administration.js';
import { AuditTrail, type AuditEvent } from './audit.js';
import { createAdminPolicy } from './admins.js';
import { bootstrapToken } from './bootstrap.js';
import { createConfigRecheck } from './config-recheck.js';
import { startCleanup, type Cleaner, type CleanupSchedule } from './cleanup.js';
import { resolveDataDir } from '../config/data-dir.js';
import { clientAddressReader } from '../http/client-address.js';
import { loginStateKey } from './login-state.js';
import { createClusterMethod } from './methods/cluster.js';
import { createCodeHostMethod } from './methods/code-host.js';
import { createJwtMethod } from './methods/jwt.js';
import { createOidcMethod } from './methods/oidc.js';
import type { AuthMethod, MethodDeps } from './methods/types.js';
import { createAuthGate, type AuthGate } from './middleware.js';
import { AuthService } from './service.js';
import { Sessions } from './session.js';
import { startupFindings } from './startup-checks.js';
import { emptyAuthStore } from './store/empty.js';
import type { AuthStore } from './store/types.js';
import { systemClock, type Clock, type Method } from './types.js';

export class AuthSetupError extends Error {
  override readonly name = 'AuthSetupError';
}

/** What the `/auth/v1` routes need (server/auth/routes.ts registers them with it). */
export interface AuthRoutesDeps {
  service: AuthService;
  config: AuthenticationConfig;
  /** The enabled methods; each registers its own routes. */
  methods: readonly AuthMethod[];
  /** Who may do what with the records (`authentication.admins` and the rules that always hold). */
  administration: TokenAdministration;
  /** Where token creation, deletion and logouts are recorded. */
  audit: AuditTrail;
}

/** Each method file's factory; a disabled method is not built. */
const METHOD_FACTORIES: ReadonlyArray<readonly [keyof AuthenticationConfig['methods'], (deps: MethodDeps) => AuthMethod]> = [
  ['oidc', createOidcMethod],
  ['code_host', createCodeHostMethod],
  ['cluster', createClusterMethod],
  ['jwt', createJwtMethod],
];

export interface AuthRuntime {
  readonly service: AuthService;
  /** The authentication decision every request and stream re-check asks (src/auth/middleware.ts). */
  readonly gate: AuthGate;
  readonly routes: AuthRoutesDeps;
  /** The audit events of this process (src/auth/audit.ts). */
  readonly audit: AuditTrail;
  /** Where records are kept, for the start-up log (no credentials). */
  readonly location: string;
  /** Stops the cleanup loops (waiting for a pass under way) and closes the store. */
  close(): Promise<void>;
}

export interface StartAuthenticationOptions {
  config: Config;
  logger: Logger;
  /** Base of relative paths (data_dir, storage.sqlite.path); default process.cwd(). */
  cwd?: string;
  clock?: Clock;
  /** Run the periodic cleanup (default true). */
  cleanup?: boolean;
  /** Audit listeners subscribed before anything is recorded (the bootstrap token, a first cleanup pass). */
  auditListeners?: ReadonlyArray<(event: AuditEvent) => void>;
}

/** Config key of each method that stores authentications → its record method. */
const STORED_METHODS: ReadonlyArray<readonly ['token' | 'oidc' | 'code_host' | 'cluster', Method]> = [
  ['token', 'METHOD_TOKEN'],
  ['oidc', 'METHOD_OIDC'],
  ['code_host', 'METHOD_CODE_HOST'],
  ['cluster', 'METHOD_CLUSTER'],
];

/** The PostgreSQL URL without user, password or query (safe to log). */
export function describePostgresUrl(url: string): string {
  try {
    const u = new URL(url);
    return `postgres://${u.host}${u.pathname}`;
  } catch {
    return 'postgres (unparsable URL)';
  }
}

export async function startAuthentication(opts: StartAuthenticationOptions): Promise<AuthRuntime> {
  const { config, logger } = opts;
  const auth = config.authentication;
  const clock = opts.clock ?? systemClock;
  const cwd = opts.cwd ?? process.cwd();
  const inUse = auth.required || STORED_METHODS.some(([key]) => auth.methods[key].enabled);
  // Said (or, with authentication.strict, refused) before anything is opened.
  const findings = startupFindings(auth);
  const refused = auth.strict ? findings.filter((f) => f.strict) : [];
  if (refused.length > 0) {
    throw new AuthSetupError(`authentication.strict is true and: ${refused.map((f) => `${f.key}: ${f.message}`).join('; ')}`);
  }
  for (const f of findings) logger.warn({ key: f.key }, f.message);

  let store: AuthStore;
  let location: string;
  let outageGraceMs = 0;
  if (!inUse) {
    store = emptyAuthStore();
    location = 'none (authentication not in use)';
  } else if (auth.storage.type === 'postgres') {
    const pgConfig = auth.storage.postgres;
    const url = pgConfig.url;
    if (url === undefined) throw new AuthSetupError('authentication.storage.postgres.url: required when authentication.storage.type is postgres');
    for (const key of ['connect_timeout', 'query_timeout', 'pool_wait_timeout'] as const) {
      if (!(pgConfig[key] > 0)) throw new AuthSetupError(`authentication.storage.postgres.${key}: must be above 0 (a bound on how long a request waits for the database)`);
    }
    location = describePostgresUrl(url);
    outageGraceMs = pgConfig.outage_grace;
    try {
      // Loaded on demand: a deployment uses one store driver, never both.
      const { openPostgresAuthStore } = await import('./store/postgres.js');
      store = await openPostgresAuthStore({
        url,
        connectTimeoutMs: pgConfig.connect_timeout,
        queryTimeoutMs: pgConfig.query_timeout,
        poolWaitTimeoutMs: pgConfig.pool_wait_timeout,
      });
    } catch (err) {
      throw new AuthSetupError(`cannot open the authentication database ${location}: ${(err as Error).message}`);
    }
  } else {
    const path =
      auth.storage.sqlite.path !== undefined ? resolve(cwd, auth.storage.sqlite.path) : join(resolveDataDir(config.data_dir, cwd), 'auth.db');
    location = path;
    try {
      const { openSqliteAuthStore } = await import('./store/sqlite.js');
      store = openSqliteAuthStore({ path });
    } catch (err) {
      throw new AuthSetupError(`cannot open the authentication database ${path}: ${(err as Error).message}`);
    }
  }

  const service = new AuthService({ store, clock, cacheTtlMs: auth.cache_ttl, outageGraceMs, logger });
  const audit = new AuditTrail(logger, clock, clientAddressReader(config.server.trusted_proxies));
  for (const listener of opts.auditListeners ?? []) audit.onEvent(listener);
  if (inUse) logger.info({ store: store.kind, location }, 'authentication store opened');
  let cleaner: Cleaner | undefined;
  try {
    if (auth.methods.token.enabled) await bootstrapToken(service, auth.methods.token.bootstrap, logger, audit);
    if (inUse && opts.cleanup !== false) {
      const schedules: CleanupSchedule[] = STORED_METHODS.filter(([key]) => auth.methods[key].enabled).map(([key, method]) => ({
        method,
        interval: auth.methods[key].cleanup.interval,
        gracePeriod: auth.methods[key].cleanup.grace_period,
      }));
      cleaner = startCleanup(service.store, schedules, { clock, logger, audit });
    }
  } catch (err) {
    await service.close().catch(() => undefined);
    throw new AuthSetupError(`cannot prepare authentication (${location}): ${(err as Error).message}`);
  }
  if (auth.required && !STORED_METHODS.some(([key]) => auth.methods[key].enabled) && !auth.methods.jwt.enabled) {
    logger.warn({}, 'authentication.required is true but no authentication method is enabled: no request can authenticate');
  }

  let methods: AuthMethod[];
  try {
    // The login state key is derived from the configuration, so every worker and replica shares it.
    const sessions = new Sessions({ service, session: auth.session, clock, stateKey: loginStateKey(auth) });
    const deps: MethodDeps = { service, config: auth, sessions, logger, clock, audit };
    methods = METHOD_FACTORIES.filter(([key]) => auth.methods[key].enabled).map(([, create]) => create(deps));
    for (const m of methods) m.start?.();
  } catch (err) {
    await cleaner?.stop();
    await service.close().catch(() => undefined);
    throw new AuthSetupError(`cannot prepare the authentication methods: ${(err as Error).message}`);
  }

  // The UI logs in through a session-compatible method; without one it can still use a pasted static token.
  if (auth.required && !methods.some((m) => m.sessionCompatible)) {
    logger.warn(
      {},
      'authentication.required is true and no session-compatible method (oidc, code_host) is enabled: the UI then needs a static client token',
    );
  }

  const gate = createAuthGate({
    service,
    required: auth.required,
    exclude: auth.exclude,
    ...(auth.session.domain !== undefined ? { sessionDomain: auth.session.domain } : {}),
    statelessMethods: methods.filter((m) => m.scheme !== undefined),
    csrf: auth.session.csrf,
    recheckMethods: methods.filter((m) => m.recheck !== undefined),
    configRecheck: createConfigRecheck(auth),
  });

  let closing: Promise<void> | undefined;
  return {
    service,
    gate,
    routes: { service, config: auth, methods, administration: new TokenAdministration(service, createAdminPolicy(auth.admins)), audit },
    audit,
    location,
    close() {
      closing ??= (async () => {
        await cleaner?.stop();
        await Promise.all(methods.map((m) => m.close?.()));
        await service.close();
      })();
      return closing;
    },
  };
}
