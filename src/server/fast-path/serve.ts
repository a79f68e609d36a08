/**
 * The fast path: the hot routes (server/hot-routes.ts) answered by a plain node:http listener in
 * front of Koa. Koa's per-request machinery (context objects, middleware promises, router
 * matching) costs more than the work of these requests itself. This shell knows no route: it
 * matches the table's patterns (match.ts), checks the URL as the Koa chain does (http/url.ts:
 * path encoding, strict query), and hands the request to an Exchange (exchange.ts), which does the
 * rest of the Koa chain's steps through the same functions. An answer differs from Koa's only in
 * its request id and Date (test/server/fast-path.test.ts holds the two paths to that, for every
 * row of the table).
 *
 * Anything it does not recognise exactly (another method, a trailing slash, percent-encoding in
 * the path, a fragment) returns false and goes to Koa unchanged; so do preflights (OPTIONS).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { AuthGate } from '../../auth/middleware.js';
import type { RequestLogging } from '../../config/types.js';
import type { SnapshotStore } from '../../store/types.js';
import { checkPathEncoding, parseQueryString } from '../../http/url.js';
import type { CorsPolicy } from '../pipeline/cors.js';
import type { Health } from '../pipeline/health.js';
import type { AnyHotRoute } from '../pipeline/hot-route.js';
import type { ServerMetrics } from '../pipeline/metrics.js';
import { Exchange, fastPathContext } from './exchange.js';
import { hotRouteMatcher } from './match.js';
import { startServerSpan, type RequestTracing } from '../pipeline/request-span.js';

export interface FastPathDeps {
  /** The rows to serve: the Koa app's own table (`app.vexil.hotRoutes`). */
  routes: readonly AnyHotRoute[];
  store: SnapshotStore;
  metrics: ServerMetrics;
  health: Health;
  logger: Logger;
  /** The authentication decision the Koa chain asks too; none: every request is let through. */
  gate?: AuthGate;
  /** `log.requests`: which requests get a log line. */
  requests: RequestLogging;
  /** A request cookie, read exactly as Koa's `ctx.cookies.get` reads it. */
  cookie: (req: IncomingMessage, res: ServerResponse, name: string) => string | undefined;
  /** `cors.*` when on (pipeline/cors.ts); its headers go on every answer, errors included. */
  cors?: CorsPolicy;
  /** `authentication.required`: X-Vexil-Revision as pipeline/request-log.ts's revisionFor gives it. */
  hideRevision?: boolean;
  /**
   * Traces requests (pipeline/request-span.ts) when given. Without one the shell starts no span
   * and checks nothing per request for it.
   */
  tracing?: RequestTracing;
}

/** Returns true when it took the request; false leaves it to Koa. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

export function createFastPath(deps: FastPathDeps): FastPath {
  const matcher = hotRouteMatcher(deps.routes);
  const cx = fastPathContext({
    store: deps.store,
    metrics: deps.metrics,
    health: deps.health,
    logger: deps.logger,
    gate: deps.gate,
    requests: deps.requests,
    cookie: deps.cookie,
    cors: deps.cors,
    hideRevision: deps.hideRevision === true,
  });
  const tracing = deps.tracing;
  return (req, res) => {
    const method = req.method;
    if (method !== 'POST' && method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url ?? '';
    if (url.includes('#')) return false;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const found = matcher.match(method, path);
    if (found === undefined) return false;
    const exchange = new Exchange(cx, req, res, method, url, path, found.route, found.params);
    if (tracing !== undefined) exchange.span = startServerSpan(tracing, req, path, found.route.pattern);
    try {
      checkPathEncoding(path);
      if (q !== -1 && q !== url.length - 1) {
        exchange.query = parseQueryString(url.slice(q + 1));
        exchange.pretty = exchange.query.has('pretty');
      }
    } catch (err) {
      exchange.fail(err);
      return true;
    }
    exchange.start();
    return true;
  };
}
