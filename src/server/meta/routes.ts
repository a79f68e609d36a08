/**
 * Operational endpoints: `/health` (liveness), `/ready` (the default reference has a snapshot that
 * is not stale), `/meta/info`, `/meta/snapshots` (vexil's extension: per-reference load status),
 * `POST /meta/refresh` (vexil's extension: look at the backend now, coalesced and at most once a
 * second; push webhooks from Git hosts are src/server/hooks/) and `/metrics`
 * (unless `server.metrics_address` serves it on a listener of its own, src/server/meta/metrics-listener.ts).
 */
import type Router from '@koa/router';
import type { StoreStatus } from '../../auth/store-health.js';
import { Code, VexilError } from '../../errors.js';
import type { RefStatus, SnapshotStore } from '../../store/types.js';
import type { AppState } from '../../http/context.js';
import type { Health } from '../pipeline/health.js';
import type { ServerMetrics } from '../pipeline/metrics.js';
import { sendJson } from '../../http/respond.js';

export interface VersionInfo {
  version: string;
  commit?: string;
  buildDate?: string;
}

export interface MetaDeps {
  store: SnapshotStore;
  health: Health;
  metrics: ServerMetrics;
  version: VersionInfo;
  storageType: string;
  authenticationRequired: boolean;
  /** The authentication store's availability, when one is in use (a field of /ready). */
  authStore?: () => StoreStatus;
  /** Serve `/metrics` here (false when `server.metrics_address` serves it on its own listener). */
  metricsRoute: boolean;
}

/** /ready's `authenticationStore` field: public, so no address and no error text. */
function authStoreJson(status: StoreStatus) {
  if (status.available) return { status: 'AVAILABLE' };
  return {
    status: 'UNAVAILABLE',
    since: new Date(status.since ?? 0).toISOString(),
    reason: 'the authentication store cannot be reached: requests that need it answer 503; tokens this process found in it recently are still accepted (outage_grace)',
  };
}

/** Go's GOARCH names, as Flipt reports them. */
const GO_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386', arm: 'arm', arm64: 'arm64' };

function statusJson(s: RefStatus, defaultReference: string) {
  return {
    reference: s.reference,
    default: s.reference === defaultReference,
    ...(s.revision ? { revision: s.revision } : {}),
    ...(s.loadedAt !== undefined ? { loadedAt: s.loadedAt } : {}),
    ...(s.lastRejected ? { lastRejected: s.lastRejected } : {}),
    ...(s.lastError ? { lastError: s.lastError } : {}),
    ...(s.checkedAt !== undefined ? { checkedAt: s.checkedAt } : {}),
    ...(s.stale !== undefined ? { stale: s.stale } : {}),
    ...(s.clusterRevision !== undefined ? { clusterRevision: s.clusterRevision } : {}),
    ...(s.lagging !== undefined ? { lagging: s.lagging } : {}),
  };
}

function snapshotsJson(store: SnapshotStore) {
  const def = store.defaultReference;
  const coordination = store.coordination?.();
  return {
    defaultReference: def,
    ...(coordination !== undefined ? { coordination } : {}),
    references: store.status().map((s) => statusJson(s, def)),
  };
}

/** Why not ready; `detailed` (a caller allowed to read revisions) names the rejected revision. */
function notReadyReason(store: SnapshotStore, detailed: boolean): string {
  const ref = store.defaultReference;
  const status = store.status().find((s) => s.reference === ref);
  let why = `no snapshot of reference "${ref}" has been loaded yet`;
  if (status?.lastRejected) {
    const n = status.lastRejected.problems.length;
    const revision = detailed ? `revision ${status.lastRejected.revision.id}` : 'its latest revision';
    why += `: ${revision} was rejected with ${n} problem${n === 1 ? '' : 's'} (see /meta/snapshots)`;
  } else if (status?.lastError) {
    // /ready is public: the error itself (hosts, ports) stays in /meta/snapshots and the log.
    why += ': the state backend could not be read (lastError in /meta/snapshots)';
  }
  return why;
}

export function registerMetaRoutes(router: Router<AppState>, deps: MetaDeps): void {
  const { store, health, metrics } = deps;

  router.get('/health', (ctx) => {
    if (!health.serving) throw new VexilError(Code.Unavailable, 'NOT_SERVING');
    sendJson(ctx, { status: 'SERVING' });
  });

  // Public: ready or not, and why. The reference and revision served only to a caller who may
  // read them anyway (an open server, or a valid credential presented): with authentication
  // required, strangers learn no commit id here.
  router.get('/ready', (ctx) => {
    if (!health.serving) throw new VexilError(Code.Unavailable, 'shutting down');
    const detailed = !deps.authenticationRequired || ctx.state.authentication !== undefined;
    const snapshot = store.get();
    if (!snapshot) throw new VexilError(Code.Unavailable, notReadyReason(store, detailed));
    // A polled backend unreachable for longer than its max staleness: still serving, but not ready.
    const own = store.status().find((s) => s.reference === store.defaultReference);
    if (own?.stale !== undefined) throw new VexilError(Code.Unavailable, own.stale);
    // cluster.coordination.max_lag: serving another revision than the cluster's for too long.
    if (own?.lagging !== undefined) throw new VexilError(Code.Unavailable, own.lagging);
    const authenticationStore = deps.authStore ? { authenticationStore: authStoreJson(deps.authStore()) } : {};
    sendJson(
      ctx,
      detailed
        ? { status: 'READY', reference: snapshot.reference, revision: snapshot.revision, ...authenticationStore }
        : { status: 'READY', ...authenticationStore },
    );
  });

  router.get('/meta/info', (ctx) => {
    const v = deps.version;
    const isRelease = /^\d+\.\d+\.\d+$/.test(v.version);
    sendJson(ctx, {
      version: v.version,
      ...(v.commit ? { commit: v.commit } : {}),
      ...(v.buildDate ? { buildDate: v.buildDate } : {}),
      isRelease,
      updateAvailable: false,
      os: process.platform,
      arch: GO_ARCH[process.arch] ?? process.arch,
      authentication: { required: deps.authenticationRequired },
      storage: { type: deps.storageType, readOnly: true },
      reference: store.defaultReference,
      revision: store.get()?.revision ?? '',
    });
  });

  router.get('/meta/snapshots', (ctx) => {
    sendJson(ctx, snapshotsJson(store));
  });

  // Answers once a look at the backend started after the request has run, with every
  // reference's status (revisions, errors) after it. Calls coalesce: however many arrive, the
  // backend is looked at most once a second (src/store/refresh-gate.ts).
  router.post('/meta/refresh', async (ctx) => {
    if (store.requestRefresh !== undefined) await store.requestRefresh();
    else if (store.refresh !== undefined) await store.refresh();
    else throw new VexilError(Code.Unimplemented, 'this storage cannot be refreshed');
    sendJson(ctx, snapshotsJson(store));
  });

  if (!deps.metricsRoute) return;
  router.get('/metrics', async (ctx) => {
    const text = await metrics.registry.metrics();
    ctx.status = 200;
    ctx.type = metrics.registry.contentType;
    ctx.body = text;
  });
}
