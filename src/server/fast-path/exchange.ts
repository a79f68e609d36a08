/**
 * One request on the fast path, from its route to the last byte of its answer. It does the steps
 * of the Koa chain of app.ts, in the same order, through the same functions:
 *
 *   authentication (the auth gate) → body (http/body.ts: limits, depth, charset) → the route's
 *   `prepare` → the snapshot of its reference → the route's `answer` → errors through
 *   pipeline/errors.ts (OFREP's through ofrep/errors.ts) → metrics, the request log line, then the
 *   head in the Koa chain's header order: CORS, the route's or the error's headers, the content's,
 *   X-Request-Id, X-Vexil-Revision.
 *
 * It runs on callbacks: when the authentication decision is made at once and the default reference
 * is built, the body's 'end' event answers synchronously, with no promise made per request. The
 * exchange is itself the gate's AuthRequest and the route's HotRequest, so asking either
 * allocates nothing. Every way ends in one `answer` (through `fail` for an error).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { AuthDecision, AuthGate, AuthRequest } from '../../auth/middleware.js';
import type { RequestLogging } from '../../config/types.js';
import type { Snapshot } from '../../model/snapshot.js';
import type { SnapshotStore } from '../../store/types.js';
import { readJson, readJsonWith, type JsonSink } from '../../http/body.js';
import { monotonicMs, nanosSince } from '../../http/clock.js';
import type { CorsPolicy } from '../pipeline/cors.js';
import { serializeErrorBody, toErrorResponse } from '../pipeline/errors.js';
import type { Health } from '../pipeline/health.js';
import type { AnyHotRoute, HotAnswer, HotRequest } from '../pipeline/hot-route.js';
import type { HistogramSeries, ServerMetrics } from '../pipeline/metrics.js';
import { logsRequest, requestIdFor, requestLine, requestLineWriter, writeRequestLine } from '../pipeline/request-log.js';
import { ofrepErrorResponse } from '../ofrep/errors.js';
import { endServerSpan } from '../pipeline/request-span.js';

/** What every exchange of one fast path shares. */
export interface FastPathContext {
  readonly store: SnapshotStore;
  readonly metrics: ServerMetrics;
  readonly health: Health;
  readonly logger: Logger;
  readonly gate: AuthGate | undefined;
  readonly requests: RequestLogging;
  readonly cookie: (req: IncomingMessage, res: ServerResponse, name: string) => string | undefined;
  readonly cors: CorsPolicy | undefined;
  readonly hideRevision: boolean;
  /** The request log line writer of each method the fast path serves. */
  readonly requestLines: Readonly<Record<string, ReturnType<typeof requestLineWriter>>>;
  /** The request histogram's series of a route's POST 200s (made once per route). */
  observeOk(pattern: string, seconds: number): void;
}

/** The writers and series a fast path makes once. */
export function fastPathContext(
  deps: Omit<FastPathContext, 'requestLines' | 'observeOk'>,
): FastPathContext {
  const { logger, requests, metrics } = deps;
  const okSeries = new Map<string, HistogramSeries>();
  return {
    ...deps,
    requestLines: {
      POST: requestLineWriter(logger, 'POST', requests),
      GET: requestLineWriter(logger, 'GET', requests),
      HEAD: requestLineWriter(logger, 'HEAD', requests),
    },
    observeOk(pattern, seconds) {
      let series = okSeries.get(pattern);
      if (series === undefined) okSeries.set(pattern, (series = metrics.requestSeries({ method: 'POST', route: pattern, status: 200 })));
      series.observe(seconds);
    },
  };
}

const NO_QUERY: ReadonlyMap<string, string> = new Map();
const JSON_TYPE = 'application/json; charset=utf-8';

export class Exchange implements JsonSink, AuthRequest, HotRequest {
  readonly requestId: string;
  readonly startedAt: number;
  pretty = false;
  query: ReadonlyMap<string, string> = NO_QUERY;
  /** Errors before routing (URL, authentication) are 'unmatched', as in the Koa chain. */
  matched = false;
  snapshot: Snapshot | undefined;
  /** The gate checked a credential the request presented (the Koa chain's `state.authentication`). */
  authenticated = false;
  child: Logger | undefined;
  /** The body, when the gate read it (a namespace-scoped token's check): the route reads the same. */
  jsonBody: Promise<unknown> | undefined;
  /** The server span, set by the traced shell (serve.ts) when the request is sampled. */
  span: Span | undefined = undefined;

  constructor(
    readonly cx: FastPathContext,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly method: 'POST' | 'GET' | 'HEAD',
    readonly url: string,
    /** The URL path, without the query. */
    readonly path: string,
    readonly route: AnyHotRoute,
    readonly params: Readonly<Record<string, string>>,
  ) {
    this.requestId = requestIdFor(req.headers['x-request-id'] as string | undefined);
    this.startedAt = monotonicMs();
  }

  /** The request id when the server made it up (it then also names an evaluation's body). */
  get generatedId(): string | undefined {
    return this.requestId !== this.req.headers['x-request-id'] ? this.requestId : undefined;
  }

  log(): Logger {
    return (this.child ??= this.cx.logger.child({ reqId: this.requestId }));
  }

  // AuthRequest, for the gate (and HotRequest's headers).
  get authorization(): string | undefined {
    return this.req.headers.authorization;
  }
  get headers(): IncomingHttpHeaders {
    return this.req.headers;
  }
  cookie(name: string): string | undefined {
    return this.cx.cookie(this.req, this.res, name);
  }
  body(): Promise<unknown> {
    return (this.jsonBody ??= readJson(this.req));
  }
  setCookies(values: string[]): void {
    this.res.setHeader('Set-Cookie', values);
  }

  /** After the URL checks: the gate (unless it lets the path through unseen), then the body and the route. */
  start(): void {
    const gate = this.cx.gate;
    if (gate !== undefined && gate.passes?.(this.method, this.path) !== true) {
      let decision: AuthDecision;
      try {
        decision = gate(this);
      } catch (err) {
        this.fail(err);
        return;
      }
      if (decision instanceof Promise) {
        decision.then(
          (authentication) => {
            if (authentication !== undefined) this.authenticated = true;
            this.readBody();
          },
          (err: unknown) => this.fail(err),
        );
        return;
      }
      if (decision !== undefined) this.authenticated = true;
    }
    this.readBody();
  }

  /** Authenticated: read the body of a POST, then prepare. */
  private readBody(): void {
    this.matched = true;
    if (this.route.method !== 'POST') this.onJson(undefined);
    else if (this.jsonBody !== undefined) this.jsonBody.then((body) => this.onJson(body), (err: unknown) => this.onJsonError(err));
    else readJsonWith(this.req, this);
  }

  /** The body arrived (undefined for a GET): the route checks it, then its reference is read. */
  onJson(body: unknown): void {
    const route = this.route;
    let prepared: unknown;
    let ref: string | undefined;
    try {
      prepared = route.prepare(this, body);
      ref = route.reference(prepared);
    } catch (err) {
      this.fail(err);
      return;
    }
    // The default reference is built before serving and never evicted: when it is there,
    // resolve() would return exactly store.get(), one promise later.
    const { store } = this.cx;
    const ready = ref === undefined || ref === '' ? store.get() : undefined;
    if (ready !== undefined) this.serve(prepared, ready);
    else store.resolve(ref === '' ? undefined : ref).then(
      (snapshot) => this.serve(prepared, snapshot),
      (err: unknown) => this.fail(route.referenceFailure !== undefined ? route.referenceFailure(err) : err),
    );
  }

  onJsonError(err: unknown): void {
    this.fail(err);
  }

  private serve(prepared: unknown, snapshot: Snapshot): void {
    let a: HotAnswer;
    try {
      this.snapshot = snapshot;
      a = this.route.answer(prepared, snapshot, this);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.answer(a.status, a.body, a.headers, a.ascii === true);
  }

  /**
   * Any failure on the way: answered as the Koa chain answers it, in the route's error schema
   * (OFREP's never indented, as ofrep/errors.ts writes it).
   */
  fail(err: unknown): void {
    if (this.route.errors === 'ofrep') {
      const r = ofrepErrorResponse(err, this.path, this.matched);
      if (r.status >= 500) this.log().error({ err }, 'request failed');
      this.answer(r.status, JSON.stringify(r.body), flatHeaders(r.headers), false);
      return;
    }
    const r = toErrorResponse(err);
    if (r.status >= 500) this.log().error({ err }, 'request failed');
    this.answer(r.status, serializeErrorBody(r.body, this.pretty), flatHeaders(r.headers), false);
  }

  /**
   * Metrics, the log line, then the response in one writeHead + end. `body` undefined: no body
   * and no content headers (a 304); a HEAD request gets the headers of its body without it.
   * `extra`: the route's or the error's headers, flat. A body known to be ASCII is sized by its
   * length and sent as latin1 (the same bytes): neither needs the text flattened or scanned first.
   */
  answer(status: number, body: string | Buffer | undefined, extra: readonly string[] | undefined, ascii: boolean): void {
    const { req, res, requestId, method, cx } = this;
    const nanos = nanosSince(this.startedAt);
    if (this.span !== undefined) endServerSpan(this.span, status);
    const seconds = nanos / 1e9;
    if (status === 200 && method === 'POST') cx.observeOk(this.route.pattern, seconds);
    else cx.metrics.observeRequest({ method, route: this.matched ? this.route.pattern : 'unmatched', status }, seconds);
    if (logsRequest(cx.requests, status)) {
      if (this.child === undefined) cx.requestLines[method]!(status, this.url, nanos, req.socket.remoteAddress, requestId);
      else writeRequestLine(this.child, requestLine(method, this.url, status, nanos, req.socket.remoteAddress));
    }
    if (res.destroyed || res.writableEnded) return;
    const revision = this.snapshot?.revision ?? (cx.hideRevision && !this.authenticated ? '' : (cx.store.get()?.revision ?? ''));
    // A flat [name, value, ...] list goes to the socket without building a header map. The
    // order is the Koa chain's: CORS (its middleware runs first), the route's or the error's
    // headers, the content's, then the request log's on the way out.
    let head: string[];
    if (cx.cors === undefined && extra === undefined && body !== undefined) {
      head = ['Content-Type', JSON_TYPE, 'Content-Length', String(byteLength(body, ascii)), 'X-Request-Id', requestId, 'X-Vexil-Revision', revision];
    } else {
      head = [];
      if (cx.cors !== undefined) cx.cors.appendResponseHeaders(head, req.headers.origin);
      if (extra !== undefined) for (const h of extra) head.push(h);
      if (body !== undefined) head.push('Content-Type', JSON_TYPE, 'Content-Length', String(byteLength(body, ascii)));
      head.push('X-Request-Id', requestId, 'X-Vexil-Revision', revision);
    }
    if (!cx.health.serving && !namesHeader(extra, 'Connection')) head.push('Connection', 'close');
    res.writeHead(status, head);
    if (body === undefined || method === 'HEAD') res.end();
    else if (ascii) res.end(body as string, 'latin1');
    else res.end(body);
  }
}

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

/** Bytes of a body: a string known to be ASCII has as many as characters. */
function byteLength(body: string | Buffer, ascii: boolean): number {
  return typeof body !== 'string' ? body.length : ascii ? body.length : Buffer.byteLength(body);
}
