/**
 * The fast path: the hot read endpoints, answered by a plain node:http listener in front of Koa.
 * Koa's per-request machinery (context objects, middleware promises, router matching) cost more
 * than the work of these requests itself. It serves
 *
 *   POST /evaluate/v1/{variant,boolean,batch}, /evaluate/v1/namespaces/{ns}/variant   evaluation
 *   POST /ofrep/v1/evaluate/flags/{key}                                              OFREP, one flag
 *   GET|HEAD /internal/v1/evaluation/snapshot/namespace/{key}                        client snapshot
 *   GET|HEAD /client/v2/environments/{environment}/namespaces/{namespace}/snapshot   client snapshot (v2)
 *
 * and does the same steps as the Koa chain of app.ts, in the same order, through the same
 * functions:
 *
 *   request id + start time (pipeline/request-log.ts) → strict URL/query checks (http/url.ts) →
 *   authentication (the auth middleware's own gate) → body (http/body.ts: limits, depth,
 *   charset) → the route's work, through the modules the Koa routes use too (the evaluation core
 *   in server/evaluation/, ofrep/, client-snapshot/) → errors through errors.ts (OFREP's through
 *   ofrep/errors.ts) → X-Request-Id, X-Vexil-Revision, metrics and the request log line, and
 *   the CORS headers when `cors.enabled` (preflights are OPTIONS: Koa). Headers are written in
 *   the order the Koa chain sets them, so an answer differs from Koa's only in its request id
 *   and Date (test/server/fast-path.test.ts holds the two paths to that).
 *
 * Anything it does not recognise exactly (another method, a trailing slash, percent-encoding in
 * the path, a fragment) returns false and goes to Koa unchanged. Matching costs an evaluation
 * request one map lookup: the other routes are tried only after it.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { AuthDecision, AuthGate, AuthRequest } from '../auth/middleware.js';
import type { Config, RequestLogging } from '../config/types.js';
import type { Snapshot } from '../model/snapshot.js';
import type { SnapshotStore } from '../store/types.js';
import type { CorsPolicy } from './pipeline/cors.js';
import { readJson, readJsonWith, type JsonSink } from '../http/body.js';
import { monotonicMs, nanosSince } from '../http/clock.js';
import { checkPathEncoding, parseQueryString } from '../http/url.js';
import { clientSnapshotAnswer, clientSnapshotReference } from './client-snapshot/request.js';
import { serializeErrorBody, toErrorResponse } from './pipeline/errors.js';
import type { Health } from './pipeline/health.js';
import type { HistogramSeries, ServerMetrics } from './pipeline/metrics.js';
import { logsRequest, requestIdFor, requestLine, requestLineWriter, writeRequestLine } from './pipeline/request-log.js';
import { parseEvaluation, referenceOf, type EvaluationKind, type ParsedEvaluation } from './evaluation/request.js';
import { evaluationResponseText, type ResponseText } from './evaluation/answer.js';
import { ofrepErrorResponse } from './ofrep/errors.js';
import { evaluatedFlagText } from './ofrep/answer.js';
import { parseOfrepRequest, type OfrepRequest } from './ofrep/request.js';
import { ofrepNamespace, ofrepReference, referenceFailure } from './ofrep/target.js';

export interface FastPathDeps {
  store: SnapshotStore;
  metrics: ServerMetrics;
  health: Health;
  logger: Logger;
  /** Authentication decisions, in the order the Koa app runs its middleware. */
  gates: readonly AuthGate[];
  /** `log.requests`: which requests get a log line. */
  requests: RequestLogging;
  /** A request cookie, read exactly as Koa's `ctx.cookies.get` reads it. */
  cookie: (req: IncomingMessage, res: ServerResponse, name: string) => string | undefined;
  /** `cors.*` when on (pipeline/cors.ts); its headers go on every answer, errors included. */
  cors?: CorsPolicy;
  /** `environments.*`: environment names → references (pipeline/environments.ts). */
  environments: Config['environments'];
  /** `authentication.required`: X-Vexil-Revision as pipeline/request-log.ts's revisionFor gives it. */
  hideRevision?: boolean;
}

/** Returns true when it took the request; false leaves it to Koa. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

type RouteKind = EvaluationKind | 'ofrep-flag' | 'client-snapshot';

interface Route {
  kind: RouteKind;
  /** The URL path, without the query. */
  path: string;
  /** The router's pattern: the `route` label of the request metric. */
  pattern: string;
  /** Evaluation alias: the path's namespace. Client snapshot: the namespace served. */
  pathNamespace?: string;
  /** OFREP: the flag the path names. */
  flagKey?: string;
  /** Client snapshot v2: the path's environment. */
  environment?: string;
}

const FIXED: ReadonlyMap<string, Route> = new Map([
  ['/evaluate/v1/variant', { kind: 'variant', path: '/evaluate/v1/variant', pattern: '/evaluate/v1/variant' }],
  ['/evaluate/v1/boolean', { kind: 'boolean', path: '/evaluate/v1/boolean', pattern: '/evaluate/v1/boolean' }],
  ['/evaluate/v1/batch', { kind: 'batch', path: '/evaluate/v1/batch', pattern: '/evaluate/v1/batch' }],
]);

const NAMESPACED_PREFIX = '/evaluate/v1/namespaces/';
const NAMESPACED_SUFFIX = '/variant';
const NAMESPACED_PATTERN = '/evaluate/v1/namespaces/:namespaceKey/variant';
const OFREP_FLAG_PREFIX = '/ofrep/v1/evaluate/flags/';
const OFREP_FLAG_PATTERN = '/ofrep/v1/evaluate/flags/:key';
const SNAPSHOT_PREFIX = '/internal/v1/evaluation/snapshot/namespace/';
const SNAPSHOT_PATTERN = '/internal/v1/evaluation/snapshot/namespace/:key';
const SNAPSHOT_V2_PREFIX = '/client/v2/environments/';
const SNAPSHOT_V2_MIDDLE = '/namespaces/';
const SNAPSHOT_V2_SUFFIX = '/snapshot';
const SNAPSHOT_V2_PATTERN = '/client/v2/environments/:environment/namespaces/:namespace/snapshot';
/** Segments that need no decoding, so the router would read them as they are. */
const PLAIN_SEGMENT = /^[A-Za-z0-9_.~-]+$/;

/** The route of a POST: the fixed evaluation paths first (one lookup), then the others. */
function postRouteOf(path: string): Route | undefined {
  const fixed = FIXED.get(path);
  if (fixed !== undefined) return fixed;
  if (path.startsWith(NAMESPACED_PREFIX)) {
    if (!path.endsWith(NAMESPACED_SUFFIX)) return undefined;
    const ns = path.slice(NAMESPACED_PREFIX.length, path.length - NAMESPACED_SUFFIX.length);
    if (!PLAIN_SEGMENT.test(ns)) return undefined;
    return { kind: 'variant', path, pattern: NAMESPACED_PATTERN, pathNamespace: ns };
  }
  if (path.startsWith(OFREP_FLAG_PREFIX)) {
    const key = path.slice(OFREP_FLAG_PREFIX.length);
    if (!PLAIN_SEGMENT.test(key)) return undefined;
    return { kind: 'ofrep-flag', path, pattern: OFREP_FLAG_PATTERN, flagKey: key };
  }
  return undefined;
}

/** The route of a GET or HEAD (the router serves HEAD wherever it serves GET). */
function getRouteOf(path: string): Route | undefined {
  if (path.startsWith(SNAPSHOT_PREFIX)) {
    const ns = path.slice(SNAPSHOT_PREFIX.length);
    if (!PLAIN_SEGMENT.test(ns)) return undefined;
    return { kind: 'client-snapshot', path, pattern: SNAPSHOT_PATTERN, pathNamespace: ns };
  }
  if (path.startsWith(SNAPSHOT_V2_PREFIX) && path.endsWith(SNAPSHOT_V2_SUFFIX)) {
    // {environment}/namespaces/{namespace}: plain segments hold no '/', so the split is unique.
    const middle = path.slice(SNAPSHOT_V2_PREFIX.length, path.length - SNAPSHOT_V2_SUFFIX.length);
    const at = middle.indexOf(SNAPSHOT_V2_MIDDLE);
    if (at === -1) return undefined;
    const environment = middle.slice(0, at);
    const ns = middle.slice(at + SNAPSHOT_V2_MIDDLE.length);
    if (!PLAIN_SEGMENT.test(environment) || !PLAIN_SEGMENT.test(ns)) return undefined;
    return { kind: 'client-snapshot', path, pattern: SNAPSHOT_V2_PATTERN, pathNamespace: ns, environment };
  }
  return undefined;
}

const NO_QUERY: ReadonlyMap<string, string> = new Map();

/** An error's headers as a flat [name, value, ...] list; undefined when there are none. */
function flatHeaders(headers: Record<string, string>): string[] | undefined {
  let out: string[] | undefined;
  for (const name in headers) (out ??= []).push(name, headers[name]!);
  return out;
}

/** Whether a flat header list names `name` (names at even positions). */
function namesHeader(head: readonly string[] | undefined, name: string): boolean {
  if (head === undefined) return false;
  for (let i = 0; i < head.length; i += 2) if (head[i] === name) return true;
  return false;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function createFastPath(deps: FastPathDeps): FastPath {
  const { store, metrics, health, logger, gates, cookie, cors, environments } = deps;
  const hideRevision = deps.hideRevision === true;
  const requests = deps.requests;
  /** The request log line writer of each method the fast path serves. */
  const requestLines: Readonly<Record<string, ReturnType<typeof requestLineWriter>>> = {
    POST: requestLineWriter(logger, 'POST', requests),
    GET: requestLineWriter(logger, 'GET', requests),
    HEAD: requestLineWriter(logger, 'HEAD', requests),
  };
  /** The request histogram's series of each route pattern's POST 200s, in this server's metrics. */
  const okSeries = new Map<string, HistogramSeries>();
  const observeOk = (pattern: string, seconds: number): void => {
    let series = okSeries.get(pattern);
    if (series === undefined) okSeries.set(pattern, (series = metrics.requestSeries({ method: 'POST', route: pattern, status: 200 })));
    series.observe(seconds);
  };

  /**
   * One request on its way through. The path runs on callbacks: the body's 'end' event
   * evaluates and answers synchronously when the default reference is built (a snapshot GET
   * answers at once), with no promise made per request. Authentication gates are asked first,
   * in the Koa chain's order; a decision made at once (an open path, a cached token) keeps the
   * request on that path, and only a decision that has to wait (a store read, a signature check,
   * a scoped token's body) continues after its promise. The exchange is itself the gates'
   * AuthRequest, so asking them allocates nothing. Every way ends in one `answer` (through
   * `onJsonError` for a failure).
   */
  class Exchange implements JsonSink, AuthRequest {
    readonly requestId: string;
    readonly startedAt: number;
    pretty = false;
    query: ReadonlyMap<string, string> = NO_QUERY;
    /** Errors before routing (URL, authentication) are 'unmatched', as in the Koa chain. */
    matched = false;
    snapshot: Snapshot | undefined;
    /** A gate checked a credential the request presented (the Koa chain's `state.authentication`). */
    authenticated = false;
    child: Logger | undefined;
    /** The body, when a gate read it (a namespace-scoped token's check): the route reads the same. */
    jsonBody: Promise<unknown> | undefined;

    constructor(
      readonly req: IncomingMessage,
      readonly res: ServerResponse,
      readonly method: 'POST' | 'GET' | 'HEAD',
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

    // AuthRequest, for the gates.
    get path(): string {
      return this.route.path;
    }
    get authorization(): string | undefined {
      return this.req.headers.authorization;
    }
    get headers(): IncomingHttpHeaders {
      return this.req.headers;
    }
    cookie(name: string): string | undefined {
      return cookie(this.req, this.res, name);
    }
    body(): Promise<unknown> {
      return (this.jsonBody ??= readJson(this.req));
    }
    setCookies(values: string[]): void {
      this.res.setHeader('Set-Cookie', values);
    }

    /** After the URL checks: the gates from `from` on, then the body (if any) and the route. */
    start(from = 0): void {
      for (let i = from; i < gates.length; i++) {
        const gate = gates[i]!;
        if (gate.passes?.(this.method, this.route.path) === true) continue;
        let decision: AuthDecision;
        try {
          decision = gate(this);
        } catch (err) {
          this.onJsonError(err);
          return;
        }
        if (decision instanceof Promise) {
          decision.then(
            (authentication) => {
              if (authentication !== undefined) this.authenticated = true;
              this.start(i + 1);
            },
            (err: unknown) => this.onJsonError(err),
          );
          return;
        }
        if (decision !== undefined) this.authenticated = true;
      }
      this.matched = true;
      if (this.method !== 'POST') this.serveSnapshot();
      else if (this.jsonBody !== undefined) this.jsonBody.then((body) => this.onJson(body), (err: unknown) => this.onJsonError(err));
      else readJsonWith(this.req, this);
    }

    /** The body arrived: validate, then evaluate against the request's snapshot. */
    onJson(body: unknown): void {
      if (this.route.kind === 'ofrep-flag') {
        this.onOfrepJson(body);
        return;
      }
      let p: ParsedEvaluation;
      let ref: string | undefined;
      try {
        p = parseEvaluation(this.route.kind as EvaluationKind, body, this.route.pathNamespace);
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

    /** OFREP, one flag: the steps of ofrep/routes.ts (body, namespace header, reference). */
    onOfrepJson(body: unknown): void {
      let request: OfrepRequest;
      let namespaceKey: string;
      let ref: string | undefined;
      try {
        request = parseOfrepRequest(body);
        namespaceKey = ofrepNamespace(this.req.headers);
      } catch (err) {
        this.onJsonError(err);
        return;
      }
      try {
        // "" reads the default reference, as everywhere (pipeline/read-snapshot.ts).
        ref = ofrepReference(this.req.headers, this.query, environments) || undefined;
      } catch (err) {
        this.onJsonError(referenceFailure(err));
        return;
      }
      const ready = ref === undefined ? store.get() : undefined;
      if (ready !== undefined) this.evaluateOfrep(request, namespaceKey, ready);
      else store.resolve(ref).then(
        (snapshot) => this.evaluateOfrep(request, namespaceKey, snapshot),
        (err: unknown) => this.onJsonError(referenceFailure(err)),
      );
    }

    evaluateOfrep(request: OfrepRequest, namespaceKey: string, snapshot: Snapshot): void {
      let text: string;
      try {
        this.snapshot = snapshot;
        text = evaluatedFlagText(snapshot, namespaceKey, this.route.flagKey!, request, metrics);
      } catch (err) {
        this.onJsonError(err);
        return;
      }
      this.answer(200, this.pretty ? JSON.stringify(JSON.parse(text), null, 2) : text, undefined);
    }

    /** A client snapshot GET or HEAD: the steps of client-snapshot/routes.ts. */
    serveSnapshot(): void {
      let ref: string | undefined;
      try {
        ref = clientSnapshotReference(this.route.environment, this.query, this.req.headers, environments) || undefined;
      } catch (err) {
        this.onJsonError(err);
        return;
      }
      const ready = ref === undefined ? store.get() : undefined;
      if (ready !== undefined) this.answerSnapshot(ready);
      else store.resolve(ref).then(
        (snapshot) => this.answerSnapshot(snapshot),
        (err: unknown) => this.onJsonError(err),
      );
    }

    answerSnapshot(snapshot: Snapshot): void {
      let answer: ReturnType<typeof clientSnapshotAnswer>;
      try {
        this.snapshot = snapshot;
        answer = clientSnapshotAnswer(snapshot, this.route.pathNamespace!, this.req.headers['if-none-match'], this.pretty);
      } catch (err) {
        this.onJsonError(err);
        return;
      }
      this.answer(answer.notModified ? 304 : 200, answer.notModified ? undefined : answer.body, ['ETag', answer.etag]);
    }

    /**
     * Any failure on the way (not only the body's): answered as the Koa chain answers it, under
     * /ofrep/ in the OFREP schema (never indented, as ofrep/errors.ts writes it).
     */
    onJsonError(err: unknown): void {
      if (this.route.kind === 'ofrep-flag') {
        const r = ofrepErrorResponse(err, this.route.path, this.matched);
        if (r.status >= 500) this.log().error({ err }, 'request failed');
        this.answer(r.status, JSON.stringify(r.body), flatHeaders(r.headers));
        return;
      }
      const r = toErrorResponse(err);
      if (r.status >= 500) this.log().error({ err }, 'request failed');
      this.answer(r.status, serializeErrorBody(r.body, this.pretty), flatHeaders(r.headers));
    }

    /**
     * Metrics, the log line, then the response in one writeHead + end. `body` undefined: no body
     * and no content headers (a 304); a HEAD request gets the headers of its body without it.
     * `extra`: the route's or the error's headers, flat. A body known to be ASCII is sized by its
     * length and sent as latin1 (the same bytes): neither needs the text flattened or scanned first.
     */
    answer(status: number, body: string | Buffer | undefined, extra: readonly string[] | undefined, ascii = false): void {
      const { req, res, requestId, method } = this;
      const nanos = nanosSince(this.startedAt);
      const seconds = nanos / 1e9;
      if (status === 200 && method === 'POST') observeOk(this.route.pattern, seconds);
      else metrics.observeRequest({ method, route: this.matched ? this.route.pattern : 'unmatched', status }, seconds);
      if (logsRequest(requests, status)) {
        if (this.child === undefined) requestLines[method]!(status, this.url, nanos, req.socket.remoteAddress, requestId);
        else writeRequestLine(this.child, requestLine(method, this.url, status, nanos, req.socket.remoteAddress));
      }
      if (res.destroyed || res.writableEnded) return;
      const revision = this.snapshot?.revision ?? (hideRevision && !this.authenticated ? '' : (store.get()?.revision ?? ''));
      // A flat [name, value, ...] list goes to the socket without building a header map. The
      // order is the Koa chain's: CORS (its middleware runs first), the route's or the error's
      // headers, the content's, then the request log's on the way out.
      let head: string[];
      if (cors === undefined && extra === undefined && body !== undefined) {
        head = ['Content-Type', JSON_TYPE, 'Content-Length', String(byteLength(body, ascii)), 'X-Request-Id', requestId, 'X-Vexil-Revision', revision];
      } else {
        head = [];
        if (cors !== undefined) cors.appendResponseHeaders(head, req.headers.origin);
        if (extra !== undefined) for (const h of extra) head.push(h);
        if (body !== undefined) head.push('Content-Type', JSON_TYPE, 'Content-Length', String(byteLength(body, ascii)));
        head.push('X-Request-Id', requestId, 'X-Vexil-Revision', revision);
      }
      if (!health.serving && !namesHeader(extra, 'Connection')) head.push('Connection', 'close');
      res.writeHead(status, head);
      if (body === undefined || method === 'HEAD') res.end();
      else if (ascii) res.end(body as string, 'latin1');
      else res.end(body);
    }
  }

  return (req, res) => {
    const method = req.method;
    const post = method === 'POST';
    if (!post && method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url ?? '';
    if (url.includes('#')) return false;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const route = post ? postRouteOf(path) : getRouteOf(path);
    if (route === undefined) return false;
    const exchange = new Exchange(req, res, method, url, route);
    try {
      checkPathEncoding(path);
      if (q !== -1 && q !== url.length - 1) {
        exchange.query = parseQueryString(url.slice(q + 1));
        exchange.pretty = exchange.query.has('pretty');
      }
    } catch (err) {
      exchange.onJsonError(err);
      return true;
    }
    exchange.start();
    return true;
  };
}

/** Bytes of a body: a string known to be ASCII has as many as characters. */
function byteLength(body: string | Buffer, ascii: boolean): number {
  return typeof body !== 'string' ? body.length : ascii ? body.length : Buffer.byteLength(body);
}
