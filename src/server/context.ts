/** What every request carries through the middleware chain (Koa `ctx.state`). */
import type { ParameterizedContext } from 'koa';
import type { RouterContext } from '@koa/router';
import type { Logger } from 'pino';
import type { Snapshot } from '../model/snapshot.js';

export interface AppState {
  /** Echoed in `X-Request-Id` and in every log line of the request. */
  requestId: string;
  /** Child logger bound to the request id. */
  log: Logger;
  /** The query string, strictly decoded (first value wins for a repeated name). */
  query: ReadonlyMap<string, string>;
  /** http/clock.ts `monotonicMs()` when the request entered the app. */
  startedAt: number;
  /** `?pretty` was given: indent JSON. */
  pretty: boolean;
  /** The JSON body, once read: authentication may read it before routing; the route reuses it. */
  jsonBody?: Promise<unknown>;
  /** The snapshot the request read, once resolved (one per request). */
  snapshot?: Snapshot;
}

export type AppContext = ParameterizedContext<AppState>;
export type AppRouterContext = RouterContext<AppState>;
