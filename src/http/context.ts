/**
 * What every request carries through the middleware chain (Koa `ctx.state`), shared by the server's
 * routes and the auth methods that mount routes of their own. The layers above add their own fields
 * by module augmentation where they set them (server/pipeline/read-snapshot.ts: the snapshot read;
 * server/pipeline/errors.ts: `errorPage`; auth/middleware.ts: the caller's authentication), so this file
 * needs no type from above the http floor.
 */
import type { ParameterizedContext } from 'koa';
import type { RouterContext } from '@koa/router';
import type { Logger } from 'pino';

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
}

export type AppContext = ParameterizedContext<AppState>;
export type AppRouterContext = RouterContext<AppState>;
