/**
 * The evaluation fast path: `POST /evaluate/v1/{variant,boolean,batch}` and the namespaced
 * variant alias, answered by a plain node:http listener in front of Koa. Koa's per-request
 * machinery (context objects, middleware promises, router matching) cost more than the
 * evaluation itself; this path does the same steps as the Koa chain of app.ts, in the same
 * order, through the same functions:
 *
 *   request id + start time (request-log.ts) → strict URL/query checks (http/url.ts) →
 *   authentication (the auth middleware's own gate) → body (http/body.ts: limits, depth,
 *   charset) → validation and evaluation (the evaluation core in server/evaluation/, which the
 *   Koa routes use too) → errors through errors.ts → X-Request-Id, X-Vexil-Revision, metrics and
 *   the request log line, and the CORS headers when `cors.enabled` (preflights are OPTIONS: Koa).
 *
 * Anything it does not recognise exactly (another method, a trailing slash, percent-encoding in
 * the path, a fragment) returns false and goes to Koa unchanged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { AuthGate } from '../auth/middleware.js';
import type { RequestLogging } from '../config/types.js';
import type { Snapshot } from '../state/model.js';
import type { SnapshotStore } from '../store/types.js';
import type { CorsPolicy } from './cors.js';
import { readJson, readJsonWith, type JsonSink } from '../http/body.js';
import { monotonicMs, nanosSince } from '../http/clock.js';
import { checkPathEncoding, parseQueryString } from '../http/url.js';
import { serializeErrorBody, toErrorResponse } from './errors.js';
import type { Health } from './health.js';
import type { HistogramSeries, ServerMetrics } from './metrics.js';
import { logsRequest, requestIdFor, requestLine, requestLineWriter, writeRequestLine } from './request-log.js';
import { parseEvaluation, referenceOf, type EvaluationKind, type ParsedEvaluation } from './evaluation/parse-evaluation.js';
import { evaluationResponseText, type ResponseText } from './evaluation/respond-evaluation.js';

export interface FastPathDeps {
  store: SnapshotStore;
  metrics: ServerMetrics;
  health: Health;
  logger: Logger;
  /** Authentication decisions, in the order the Koa app runs its middleware. */
  gates: readonly AuthGate[];
  /** `log.requests`: which requests get a log line (default `all`). */
  requests?: RequestLogging;
  /** A request cookie, read exactly as Koa's `ctx.cookies.get` reads it. */
  cookie: (req: IncomingMessage, res: ServerResponse, name: string) => string | undefined;
  /** `cors.*` when on (cors.ts); its headers go on every answer, errors included. */
  cors?: CorsPolicy;
}

/** Returns true when it took the request; false leaves it to Koa. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

interface Route {
  kind: EvaluationKind;
  /** The URL path, without the query. */
  path: string;
  /** The router's pattern: the `route` label of the request metric. */
  pattern: string;
  pathNamespace?: string;
}

const FIXED: ReadonlyMap<string, Route> = new Map([
  ['/evaluate/v1/variant', { kind: 'variant', path: '/evaluate/v1/variant', pattern: '/evaluate/v1/variant' }],
  ['/evaluate/v1/boolean', { kind: 'boolean', path: '/evaluate/v1/boolean', pattern: '/evaluate/v1/boolean' }],
  ['/evaluate/v1/batch', { kind: 'batch', path: '/evaluate/v1/batch', pattern: '/evaluate/v1/batch' }],
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
  return { kind: 'variant', path, pattern: NAMESPACED_PATTERN, pathNamespace: ns };
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function createFastPath(deps: FastPathDeps): FastPath {
  const { store, metrics, health, logger, gates, cookie, cors } = deps;
  const requests = deps.requests ?? 'all';
  const requestLines = requestLineWriter(logger, 'POST', requests);
  /** The request histogram's series of each route pattern's 200s, in this server's metrics. */
  const okSeries = new Map<string, HistogramSeries>();
  const observeOk = (pattern: string, seconds: number): void => {
    let series = okSeries.get(pattern);
    if (series === undefined) okSeries.set(pattern, (series = metrics.requestSeries({ method: 'POST', route: pattern, status: 200 })));
    series.observe(seconds);
  };

  /**
   * One request on its way through. When no authentication gate needs to look at the request
   * (no gates, or an open server: the default) the whole path runs on callbacks: the body's
   * 'end' event evaluates and answers synchronously when the default reference is built, with
   * no promise made per request. Otherwise it awaits the gates first, as the Koa chain does.
   * Both ways end in one `answer` (through `onJsonError` for a failure).
   */
  class Exchange implements JsonSink {
    readonly requestId: string;
    readonly startedAt: number;
    pretty = false;
    /** Errors before routing (URL, authentication) are 'unmatched', as in the Koa chain. */
    matched = false;
    snapshot: Snapshot | undefined;
    child: Logger | undefined;
    jsonBody: Promise<unknown> | undefined;

    constructor(
      readonly req: IncomingMessage,
      readonly res: ServerResponse,
      readonly url: string,
      readonly route: Route,
    ) {
      this.requestId = requestIdFor(req.headers['x-request-id'] as string | undefined);
      this.startedAt = monotonicMs();
    }

    /** The request id when the server made it up (it then also names the response body). */
    get generatedId(): string | undefined {
      return this.requestId !== this.req.headers['x-request-id'] ? this.requestId : undefined;
    }

    log(): Logger {
      return (this.child ??= logger.child({ reqId: this.requestId }));
    }

    /** After the URL checks: authenticate (when gated), then read the body and evaluate. */
    start(): void {
      const path = this.route.path;
      for (const gate of gates) {
        if (gate.passes?.('POST', path) === true) continue;
        const fail = (err: unknown) => this.onJsonError(err);
        this.authenticate().then(() => (this.jsonBody ?? readJson(this.req)).then((body) => this.onJson(body), fail), fail);
        return;
      }
      this.matched = true;
      readJsonWith(this.req, this);
    }

    async authenticate(): Promise<void> {
      const { req, res } = this;
      const path = this.route.path;
      const readBody = () => (this.jsonBody ??= readJson(req));
      const log = () => this.log();
      for (const gate of gates) {
        if (gate.passes?.('POST', path) === true) continue;
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
      this.matched = true;
    }

    /** The body arrived: validate, then evaluate against the request's snapshot. */
    onJson(body: unknown): void {
      let p: ParsedEvaluation;
      let ref: string | undefined;
      try {
        p = parseEvaluation(this.route.kind, body, this.route.pathNamespace);
        ref = referenceOf(p);
      } catch (err) {
        this.onJsonError(err);
        return;
      }
      // The default reference is built before serving and never evicted: when it is there,
      // resolve() would return exactly store.get(), one promise later.
      const ready = ref === undefined || ref === '' ? store.get() : undefined;
      if (ready !== undefined) this.evaluate(p, ready);
      else store.resolve(ref === '' ? undefined : ref).then(
        (snapshot) => this.evaluate(p, snapshot),
        (err: unknown) => this.onJsonError(err),
      );
    }

    evaluate(p: ParsedEvaluation, snapshot: Snapshot): void {
      let body: ResponseText;
      try {
        this.snapshot = snapshot;
        body = evaluationResponseText(p, snapshot, this.startedAt, metrics, this.pretty, this.generatedId);
      } catch (err) {
        this.onJsonError(err);
        return;
      }
      this.answer(200, body.text, undefined, body.ascii);
    }

    /** Any failure on the way (not only the body's): answered as the Koa chain answers it. */
    onJsonError(err: unknown): void {
      const r = toErrorResponse(err);
      if (r.status >= 500) this.log().error({ err }, 'request failed');
      this.answer(r.status, serializeErrorBody(r.body, this.pretty), r.headers);
    }

    /**
     * Metrics, the log line, then the response in one writeHead + end. A body known to be ASCII
     * is sized by its length and sent as latin1 (the same bytes): neither needs the text
     * flattened or scanned first.
     */
    answer(status: number, body: string, headers: Record<string, string> | undefined, ascii = false): void {
      const { req, res, requestId } = this;
      const nanos = nanosSince(this.startedAt);
      const seconds = nanos / 1e9;
      if (status === 200) observeOk(this.route.pattern, seconds);
      else metrics.observeRequest({ method: 'POST', route: this.matched ? this.route.pattern : 'unmatched', status }, seconds);
      if (logsRequest(requests, status)) {
        if (this.child === undefined) requestLines(status, this.url, nanos, req.socket.remoteAddress, requestId);
        else writeRequestLine(this.child, requestLine('POST', this.url, status, nanos, req.socket.remoteAddress));
      }
      if (res.destroyed || res.writableEnded) return;
      // A flat [name, value, ...] list goes to the socket without building a header map.
      const head: string[] = [
        'Content-Type',
        JSON_TYPE,
        'Content-Length',
        String(ascii ? body.length : Buffer.byteLength(body)),
        'X-Request-Id',
        requestId,
        'X-Vexil-Revision',
        this.snapshot?.revision ?? store.get()?.revision ?? '',
      ];
      if (headers !== undefined) for (const name in headers) head.push(name, headers[name]!);
      if (cors !== undefined) cors.appendResponseHeaders(head, req.headers.origin);
      if (!health.serving && headers?.Connection === undefined) head.push('Connection', 'close');
      res.writeHead(status, head);
      if (ascii) res.end(body, 'latin1');
      else res.end(body);
    }
  }

  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    if (url.includes('#')) return false;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const route = routeOf(path);
    if (route === undefined) return false;
    const exchange = new Exchange(req, res, url, route);
    try {
      checkPathEncoding(path);
      if (q !== -1 && q !== url.length - 1) exchange.pretty = parseQueryString(url.slice(q + 1)).has('pretty');
    } catch (err) {
      exchange.onJsonError(err);
      return true;
    }
    exchange.start();
    return true;
  };
}
