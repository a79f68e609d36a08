/**
 * The server span of one HTTP request, by OpenTelemetry's HTTP semantic conventions (stable;
 * https://opentelemetry.io/docs/specs/semconv/http/http-spans/): kind SERVER, named
 * `{method} {route}` once the route is known (the method alone otherwise: a path carries ids and
 * would make one span name per flag), with `http.request.method`, `url.path`, `url.scheme`,
 * `http.route`, `server.address`/`server.port` (from Host), `client.address`,
 * `network.protocol.version`, `user_agent.original` and `http.response.status_code`; a 5xx sets
 * the status to ERROR with `error.type` the status code. The query string is left out (`url.query`
 * is opt-in in the conventions, and a query may hold a token).
 *
 * A W3C `traceparent` from the caller is continued (the propagator the SDK registered extracts
 * it). Both HTTP paths start and end spans here: the Koa chain through `traceRequests`, the
 * node:http fast path through `startServerSpan`/`endServerSpan` directly. A span the sampler drops
 * is not kept: `startServerSpan` returns undefined and the request carries no span.
 *
 * Cost of an unsampled request: a request without `traceparent` starts a trace of its own, and
 * its sampling decision (a ratio) is drawn here, before any span, id or context is made: one
 * Math.random() per request when tracing is on. The ones drawn start their span with PRESAMPLED in
 * the context, which the server's sampler (server/tracing.ts) answers "record" without drawing
 * again. The result is the ratio sampler's (a new trace id is as random as the draw), minus its
 * cost. A request with `traceparent` follows the caller's decision through the SDK's sampler.
 */
import type { IncomingMessage } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, createContextKey, propagation, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { Middleware } from 'koa';
import type { AppState } from '../../http/context.js';

declare module '../../http/context.js' {
  interface AppState {
    /** The request's server span, when tracing records it. */
    span?: Span;
  }
}

/** In a span's parent context: the request was sampled by startServerSpan's draw (a root span). */
export const PRESAMPLED = createContextKey('vexil.request.presampled');
const PRESAMPLED_ROOT = ROOT_CONTEXT.setValue(PRESAMPLED, true);

/** How the HTTP paths trace requests. */
export interface RequestTracing {
  readonly tracer: Tracer;
  /**
   * The share of requests without `traceparent` that are recorded, drawn in startServerSpan
   * (the tracer's sampler must answer PRESAMPLED contexts "record"); undefined: the tracer's
   * sampler decides every request (OTEL_TRACES_SAMPLER).
   */
  readonly rootRatio: number | undefined;
}

/** Starts the server span of `req` (undefined when not sampled). `route`: the pattern, when known. */
export function startServerSpan(tracing: RequestTracing, req: IncomingMessage, path: string, route: string | undefined): Span | undefined {
  const headers = req.headers;
  let parent;
  if (headers.traceparent !== undefined) parent = propagation.extract(ROOT_CONTEXT, headers);
  else if (tracing.rootRatio === undefined) parent = ROOT_CONTEXT;
  else if (Math.random() < tracing.rootRatio) parent = PRESAMPLED_ROOT;
  else return undefined;
  const method = req.method ?? 'GET';
  const span = tracing.tracer.startSpan(route === undefined ? method : `${method} ${route}`, { kind: SpanKind.SERVER }, parent);
  if (!span.isRecording()) return undefined;
  span.setAttribute('http.request.method', method);
  span.setAttribute('url.path', path);
  span.setAttribute('url.scheme', 'http');
  if (route !== undefined) span.setAttribute('http.route', route);
  const host = headers.host;
  if (host !== undefined) {
    const m = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(host);
    if (m !== null) {
      span.setAttribute('server.address', m[1]!.replace(/^\[|\]$/g, ''));
      if (m[2] !== undefined) span.setAttribute('server.port', Number(m[2]));
    }
  }
  const client = req.socket.remoteAddress;
  if (client !== undefined) span.setAttribute('client.address', client);
  span.setAttribute('network.protocol.version', req.httpVersion);
  const agent = headers['user-agent'];
  if (agent !== undefined) span.setAttribute('user_agent.original', agent);
  return span;
}

/** Ends the span with the answer's status. */
export function endServerSpan(span: Span, status: number): void {
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) {
    span.setAttribute('error.type', String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/**
 * The Koa chain's server spans: first in the chain, so the status it ends with is the one written
 * (errors already mapped). The route is the router's matched pattern; the span is the active
 * one for what the chain does synchronously (server/sync-context.ts) and `state.span` for the
 * routes that record evaluations on it.
 */
export function traceRequests(tracing: RequestTracing): Middleware<AppState> {
  return async (ctx, next) => {
    const span = startServerSpan(tracing, ctx.req, ctx.path, undefined);
    if (span === undefined) return next();
    ctx.state.span = span;
    try {
      await context.with(trace.setSpan(context.active(), span), next);
    } finally {
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      if (typeof route === 'string') {
        span.setAttribute('http.route', route);
        span.updateName(`${ctx.method} ${route}`);
      }
      endServerSpan(span, ctx.status);
    }
  };
}
