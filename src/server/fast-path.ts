/**
 * The evaluation fast path: `POST /evaluate/v1/{variant,boolean,batch}` and the namespaced
 * variant alias, answered by a plain node:http listener in front of Koa. Koa's per-request
 * machinery (context objects, middleware promises, router matching) cost more than the
 * evaluation itself; this path does the same steps as the Koa chain of app.ts, in the same
 * order, through the same functions:
 *
 *   request id + start time (request-log.ts) → strict URL/query checks (url.ts) → authentication
 *   (the auth middleware's own gate) → body (body.ts: limits, depth, charset) → validation and
 *   evaluation (routes/evaluation.ts) → errors through errors.ts → X-Request-Id,
 *   X-Vexil-Revision, metrics and the request log line.
 *
 * Anything it does not recognise exactly (another method, a trailing slash, percent-encoding in
 * the path, a fragment) returns false and goes to Koa unchanged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { AuthGate } from '../auth/middleware.js';
import type { Snapshot } from '../state/model.js';
import type { SnapshotStore } from '../store/types.js';
import { readJson } from './body.js';
import { serializeErrorBody, toErrorResponse } from './errors.js';
import type { Health } from './health.js';
import type { ServerMetrics } from './metrics.js';
import { requestIdFor, requestLine, writeRequestLine } from './request-log.js';
import { evaluationResponse, parseEvaluation, referenceOf, type EvaluationKind } from './routes/evaluation.js';
import { checkPathEncoding, parseQueryString } from './url.js';

export interface FastPathDeps {
  store: SnapshotStore;
  metrics: ServerMetrics;
  health: Health;
  logger: Logger;
  /** Authentication decisions, in the order the Koa app runs its middleware. */
  gates: readonly AuthGate[];
  /** A request cookie, read exactly as Koa's `ctx.cookies.get` reads it. */
  cookie: (req: IncomingMessage, res: ServerResponse, name: string) => string | undefined;
}

/** Returns true when it took the request; false leaves it to Koa. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

interface Route {
  kind: EvaluationKind;
  /** The router's pattern: the `route` label of the request metric. */
  pattern: string;
  pathNamespace?: string;
}

const FIXED: ReadonlyMap<string, Route> = new Map([
  ['/evaluate/v1/variant', { kind: 'variant', pattern: '/evaluate/v1/variant' }],
  ['/evaluate/v1/boolean', { kind: 'boolean', pattern: '/evaluate/v1/boolean' }],
  ['/evaluate/v1/batch', { kind: 'batch', pattern: '/evaluate/v1/batch' }],
]);

const NAMESPACED_PREFIX = '/evaluate/v1/namespaces/';
const NAMESPACED_SUFFIX = '/variant';
const NAMESPACED_PATTERN = '/evaluate/v1/namespaces/:namespaceKey/variant';
/** Segments that need no decoding, so the router would read them as they are. */
const PLAIN_SEGMENT = /^[A-Za-z0-9_.~-]+$/;

function routeOf(path: string): Route | undefined {
  const fixed = FIXED.get(path);
  if (fixed !== undefined) return fixed;
  if (!path.startsWith(NAMESPACED_PREFIX) || !path.endsWith(NAMESPACED_SUFFIX)) return undefined;
  const ns = path.slice(NAMESPACED_PREFIX.length, path.length - NAMESPACED_SUFFIX.length);
  if (!PLAIN_SEGMENT.test(ns)) return undefined;
  return { kind: 'variant', pattern: NAMESPACED_PATTERN, pathNamespace: ns };
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function createFastPath(deps: FastPathDeps): FastPath {
  const { store, metrics, health, logger, gates, cookie } = deps;

  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    if (url.includes('#')) return false;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const route = routeOf(path);
    if (route === undefined) return false;
    void handle(req, res, url, path, q === -1 ? '' : url.slice(q + 1), route);
    return true;
  };

  async function handle(req: IncomingMessage, res: ServerResponse, url: string, path: string, querystring: string, route: Route): Promise<void> {
    const requestId = requestIdFor(req.headers['x-request-id'] as string | undefined);
    const startedAt = process.hrtime.bigint();
    let pretty = false;
    let snapshot: Snapshot | undefined;
    // Errors before routing (URL, authentication) are 'unmatched', as in the Koa chain.
    let matched = false;
    let child: Logger | undefined;
    const log = () => (child ??= logger.child({ reqId: requestId }));
    let status: number;
    let body: string;
    let headers: Record<string, string> | undefined;
    try {
      checkPathEncoding(path);
      if (querystring !== '') pretty = parseQueryString(querystring).has('pretty');
      let jsonBody: Promise<unknown> | undefined;
      const readBody = () => (jsonBody ??= readJson(req));
      for (const gate of gates) {
        await gate({
          method: 'POST',
          path,
          authorization: req.headers.authorization,
          cookie: (name) => cookie(req, res, name),
          body: readBody,
          setCookies: (values) => res.setHeader('Set-Cookie', values),
          log,
        });
      }
      matched = true;
      const p = parseEvaluation(route.kind, await readBody(), route.pathNamespace);
      const ref = referenceOf(p);
      snapshot = await store.resolve(ref === undefined || ref === '' ? undefined : ref);
      const out = evaluationResponse(p, snapshot, startedAt, metrics);
      status = 200;
      body = pretty ? JSON.stringify(out, null, 2) : JSON.stringify(out);
    } catch (err) {
      const r = toErrorResponse(err);
      if (r.status >= 500) log().error({ err }, 'request failed');
      status = r.status;
      headers = r.headers;
      body = serializeErrorBody(r.body, pretty);
    }
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    metrics.observeRequest({ method: 'POST', route: matched ? route.pattern : 'unmatched', status }, seconds);
    const line = requestLine('POST', url, status, seconds, req.socket.remoteAddress);
    if (child !== undefined) writeRequestLine(child, line);
    else writeRequestLine(logger, { reqId: requestId, method: line.method, url: line.url, status: line.status, durationMs: line.durationMs, remoteAddress: line.remoteAddress });
    if (res.destroyed || res.writableEnded) return;
    // A flat [name, value, ...] list goes to the socket without building a header map.
    const head: string[] = [
      'Content-Type',
      JSON_TYPE,
      'Content-Length',
      String(Buffer.byteLength(body)),
      'X-Request-Id',
      requestId,
      'X-Vexil-Revision',
      snapshot?.revision ?? store.get()?.revision ?? '',
    ];
    if (headers !== undefined) for (const name in headers) head.push(name, headers[name]!);
    if (!health.serving && headers?.Connection === undefined) head.push('Connection', 'close');
    res.writeHead(status, head);
    res.end(body);
  }
}
