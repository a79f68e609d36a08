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
 * is not kept: `startServerSpan` returns undefined and the request carries no span, so an
 * unsampled request pays for the sampling decision only.
 */
import type { IncomingMessage } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { Middleware } from 'koa';
import type { AppState } from '../../http/context.js';

declare module '../../http/context.js' {
  interface AppState {
    /** The request's server span, when tracing records it. */
    span?: Span;
  }
}

/** Starts the server span of `req` (undefined when not sampled). `route`: the pattern, when known. */
export function startServerSpan(tracer: Tracer, req: IncomingMessage, path: string, route: string | undefined): Span | undefined {
  const headers = req.headers;
  const parent = headers.traceparent === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, headers);
  const method = req.method ?? 'GET';
  const span = tracer.startSpan(route === undefined ? method : `${method} ${route}`, { kind: SpanKind.SERVER }, parent);
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
 * one while the request runs (backend work it waits for becomes its child) and `state.span` for
 * the routes that record evaluations on it.
 */
export function traceRequests(tracer: Tracer): Middleware<AppState> {
  return async (ctx, next) => {
    const span = startServerSpan(tracer, ctx.req, ctx.path, undefined);
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
