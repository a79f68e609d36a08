/**
 * The Koa application: (the server span, when tracing) → request log → CORS (when on; answers preflights) → error catalogue →
 * strict URL decoding → authentication (the auth gate) → 404/405 translation → routes (the hot
 * routes of hot-routes.ts among them). Routes stay thin: check
 * input, read one snapshot, shape output.
 */
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import type { Logger } from 'pino';
import { Code, VexilError, notFound } from '../errors.js';
import { authMiddleware, type AuthGate } from '../auth/middleware.js';
import type { AuthRoutesDeps } from '../auth/setup.js';
import type { Config } from '../config/types.js';
import type { SnapshotStore } from '../store/types.js';
import { VERSION } from '../version.js';
import { checkPathEncoding, parseQueryString } from '../http/url.js';
import type { AppState } from '../http/context.js';
import { compressLargeReads } from './pipeline/compress.js';
import { corsMiddleware, createCorsPolicy } from './pipeline/cors.js';
import { createDiffSlices } from './diff/slices.js';
import { errorMiddleware } from './pipeline/errors.js';
import { createHealth, type Health } from './pipeline/health.js';
import { registerAuthStoreMetrics } from './auth/store-metrics.js';
import { createServerMetrics, type ServerMetrics } from './pipeline/metrics.js';
import { ofrepErrors } from './ofrep/errors.js';
import { requestLog } from './pipeline/request-log.js';
import { traceRequests, type RequestTracing } from './pipeline/request-span.js';
import { registerAuthRoutes } from './auth/routes.js';
import { registerCheckRoutes } from './checks/routes.js';
import { registerOutlineRoutes } from './outline/routes.js';
import { registerLastChangeRoute } from './outline/last-change-route.js';
import { registerDiffRoutes } from './diff/routes.js';
import { registerHookRoutes } from './hooks/routes.js';
import { readWebhookSecrets, type WebhookSecrets } from './hooks/secrets.js';
import { parseOciReference } from '../sources/oci/reference.js';
import type { ServedRepository } from './hooks/registry-events.js';
import { registerExplainRoutes } from './evaluation/routes.js';
import { hotRoutes } from './hot-routes.js';
import type { AnyHotRoute } from './pipeline/hot-route.js';
import { mountHotRoute } from './pipeline/mount-hot-route.js';
import { registerLegacyEvaluationRoutes } from './legacy-evaluation/routes.js';
import { registerManagementRoutes } from './management/routes.js';
import { registerMetaRoutes, type VersionInfo } from './meta/routes.js';
import { registerAuditRoutes } from './meta/audit-routes.js';
import { registerHistoryRoutes, type HistoryDeps } from './meta/history-routes.js';
import { registerNotificationMetrics, registerNotificationsRoutes } from './meta/notifications-routes.js';
import type { Notifier } from '../store/notifications/notifier.js';
import { registerOfrepRoutes } from './ofrep/routes.js';
import { registerWriteRoutes } from './management/write-routes.js';
import { registerStreamRoutes } from './streams/routes.js';
import { loadUiAssets, uiMiddleware, type UiAssets } from './ui-assets.js';
import { createStreamHub, type StreamHub } from './streams/hub.js';

export type { VersionInfo } from './meta/routes.js';

export interface AppDeps {
  store: SnapshotStore;
  config: Config;
  logger: Logger;
  /** Defaults to the package version. */
  version?: string | VersionInfo;
  /** Reported by `/meta/info`; defaults to `config.storage.type`. */
  storageType?: string;
  /** Pass one to share it; otherwise the app makes its own (see `VexilApp.vexil.dispose`). */
  metrics?: ServerMetrics;
  health?: Health;
  /**
   * The authentication decision (src/auth/middleware.ts), asked after the URL checks and before
   * routing, by the Koa chain, the node:http fast path, and a stream's re-checks. None: every
   * request is let through.
   */
  authGate?: AuthGate;
  /** Serves `/auth/v1` when given (see src/auth/setup.ts). */
  auth?: AuthRoutesDeps;
  /** The built web UI; default: dist/ui when `ui.enabled` (null: none). */
  ui?: UiAssets | null;
  /** `webhooks.*` secrets already read (vexil serve reads them before starting); default: read from `config.webhooks`. */
  webhookSecrets?: WebhookSecrets;
  /** Serves `GET /meta/history` and `GET /meta/audit` when given (src/store/history/; vexil serve opens it). */
  history?: Omit<HistoryDeps, 'defaultReference'> & { readonly auditScope?: string };
  /** Serves `GET /meta/notifications` and the notification metrics when given (src/store/notifications/). */
  notifier?: Notifier;
  /** Traces requests when given (server/tracing.ts; pipeline/request-span.ts). */
  requestTracing?: RequestTracing;
}

/** The repository and tag the OCI backend serves, for registry notifications (undefined: not OCI). */
function servedRepository(config: Config): ServedRepository | undefined {
  const repository = config.storage.oci.repository;
  if (config.storage.type !== 'oci' || repository === undefined) return undefined;
  const ref = parseOciReference(repository, { insecure: config.storage.oci.insecure });
  return ref.digest !== undefined ? { repository: ref.repository } : { repository: ref.repository, tag: ref.tag ?? 'latest' };
}

export type VexilApp = Koa<AppState> & {
  readonly vexil: {
    readonly metrics: ServerMetrics;
    readonly health: Health;
    /** The live-update streams (the server ends them all when it starts shutting down). */
    readonly streams: StreamHub;
    /** The hot routes the router mounts (server/hot-routes.ts): the node:http fast path serves the same rows. */
    readonly hotRoutes: readonly AnyHotRoute[];
    /** Releases what the app made itself (its metrics' store subscription, the stream hub's). */
    dispose(): void;
  };
};

/** Unknown path → 404 "Not Found"; a known path with another method → 405 with `Allow`. */
const translateUnrouted: Middleware<AppState> = async (ctx, next) => {
  await next();
  if (ctx.status === 405 || ctx.status === 501) {
    // Set by router.allowedMethods(); 501 is its answer for methods no route uses at all.
    const allow = ctx.response.get('Allow');
    if (allow === '') throw notFound('Not Found');
    throw new VexilError(Code.Unimplemented, 'Method Not Allowed', { httpStatus: 405, headers: { Allow: allow } });
  }
  if (ctx.status === 404 && ctx.body == null) throw notFound('Not Found');
};

const strictUrl: Middleware<AppState> = async (ctx, next) => {
  checkPathEncoding(ctx.path);
  const query = parseQueryString(ctx.querystring);
  ctx.state.query = query;
  ctx.state.pretty = query.has('pretty');
  await next();
};

export function createApp(deps: AppDeps): VexilApp {
  const ownMetrics = deps.metrics === undefined;
  const metrics = deps.metrics ?? createServerMetrics(deps.store);
  const health = deps.health ?? createHealth();
  const version: VersionInfo =
    typeof deps.version === 'string' ? { version: deps.version } : (deps.version ?? { version: VERSION });

  const app = new Koa<AppState>();
  app.silent = true;

  const router = new Router<AppState>({ sensitive: true });
  const authService = deps.auth?.service;
  const authStore = authService && authService.store.kind !== 'none' ? () => authService.storeStatus() : undefined;
  if (authStore) registerAuthStoreMetrics(metrics.registry, authStore);
  registerMetaRoutes(router, {
    store: deps.store,
    health,
    metrics,
    version,
    storageType: deps.storageType ?? deps.config.storage.type,
    authenticationRequired: deps.config.authentication.required,
    ...(authStore ? { authStore } : {}),
    metricsRoute: deps.config.server.metrics_address === undefined,
  });
  if (deps.history !== undefined) registerHistoryRoutes(router, { ...deps.history, defaultReference: deps.store.defaultReference });
  if (deps.notifier !== undefined) {
    registerNotificationsRoutes(router, { notifier: deps.notifier });
    registerNotificationMetrics(metrics.registry, deps.notifier);
  }
  if (deps.history !== undefined) {
    const administration = deps.auth?.administration;
    registerAuditRoutes(router, {
      history: deps.history.history,
      auditScope: deps.history.auditScope ?? deps.history.scope,
      ...(administration !== undefined ? { administersAll: (caller) => administration.administersAll(caller) } : {}),
    });
  }
  registerManagementRoutes(router, { store: deps.store });
  registerCheckRoutes(router, { store: deps.store });
  registerOutlineRoutes(router, { store: deps.store });
  registerLastChangeRoute(router, { store: deps.store });
  registerDiffRoutes(router, { store: deps.store, slices: createDiffSlices({ maxConcurrent: deps.config.diff.max_concurrent, sliceMs: deps.config.diff.slice }) });
  registerLegacyEvaluationRoutes(router, { store: deps.store, metrics });
  registerWriteRoutes(router);
  const hot = hotRoutes({ store: deps.store, metrics, environments: deps.config.environments });
  for (const route of hot) mountHotRoute(router, route, deps.store);
  registerExplainRoutes(router, { store: deps.store });
  registerOfrepRoutes(router, { store: deps.store, metrics, config: deps.config });
  const streams = createStreamHub({ store: deps.store, logger: deps.logger, registry: metrics.registry, limits: deps.config.server });
  registerStreamRoutes(router, { store: deps.store, hub: streams, environments: deps.config.environments, ...(deps.authGate ? { authGate: deps.authGate } : {}), ...(deps.auth ? { authClock: deps.auth.service.clock } : {}) });
  if (deps.auth) registerAuthRoutes(router, deps.auth);
  const served = servedRepository(deps.config);
  registerHookRoutes(router, {
    store: deps.store,
    secrets: deps.webhookSecrets ?? readWebhookSecrets(deps.config.webhooks),
    logger: deps.logger,
    registry: metrics.registry,
    ...(served !== undefined ? { served } : {}),
  });

  if (deps.requestTracing !== undefined) app.use(traceRequests(deps.requestTracing));
  app.use(
    requestLog({
      logger: deps.logger,
      store: deps.store,
      metrics,
      health,
      requests: deps.config.log.requests,
      hideRevision: deps.config.authentication.required,
    }),
  );
  // Before everything that can fail, so error answers carry the CORS headers too, and before
  // authentication, which a preflight never passes (browsers send no credentials with one).
  const cors = createCorsPolicy(deps.config.cors);
  if (cors !== undefined) app.use(corsMiddleware(cors));
  app.use(errorMiddleware({ logger: deps.logger, pretty: (ctx) => (ctx.state as Partial<AppState>).pretty === true }));
  app.use(ofrepErrors(deps.logger)); // errors under /ofrep/ in the OFREP schema
  app.use(strictUrl);
  if (deps.authGate) app.use(authMiddleware(deps.authGate));
  const ui = deps.ui !== undefined ? deps.ui : deps.config.ui.enabled ? loadUiAssets() : null;
  if (ui === undefined && deps.config.ui.enabled) {
    deps.logger.warn('the web UI is not built (no dist/ui/index.html; run npm run build:ui): / and /ui answer 404');
  }
  if (ui) app.use(uiMiddleware(ui));
  app.use(translateUnrouted);
  app.use(compressLargeReads());
  app.use(router.routes());
  app.use(router.allowedMethods());

  return Object.assign(app, {
    vexil: {
      metrics,
      health,
      streams,
      hotRoutes: hot,
      dispose: () => {
        streams.close();
        if (ownMetrics) metrics.dispose();
      },
    },
  });
}
