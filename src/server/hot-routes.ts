/**
 * The hot routes, one table: every read endpoint clients call on each flag decision, as values
 * (pipeline/hot-route.ts). The Koa app mounts each row (pipeline/mount-hot-route.ts) and the
 * node:http fast path (fast-path/) serves the same rows, so a pattern is written once, and a row
 * added here is served by both paths and replayed by the differential test
 * (test/server/fast-path.test.ts) without further wiring.
 *
 * Order matters only to the fast path, which tries routes without parameters first (one map
 * lookup) and then the others in this order.
 */
import type { Config } from '../config/types.js';
import type { SnapshotStore } from '../store/types.js';
import { clientSnapshotHotRoutes } from './client-snapshot/hot.js';
import { evaluationHotRoutes } from './evaluation/hot.js';
import { ofrepHotRoutes } from './ofrep/hot.js';
import type { AnyHotRoute } from './pipeline/hot-route.js';
import type { ServerMetrics } from './pipeline/metrics.js';

export interface HotRoutesDeps {
  store: SnapshotStore;
  metrics: ServerMetrics;
  environments: Config['environments'];
}

export function hotRoutes(deps: HotRoutesDeps): readonly AnyHotRoute[] {
  return [...evaluationHotRoutes(deps), ...ofrepHotRoutes(deps), ...clientSnapshotHotRoutes(deps)] as AnyHotRoute[];
}
