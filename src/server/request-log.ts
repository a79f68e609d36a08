/**
 * The outermost middleware: gives the request an id (a sane incoming `X-Request-Id`, else a new
 * UUID), stamps `X-Request-Id` and `X-Vexil-Revision` on every response, records the latency
 * metric and writes one log line. Never logs headers (no Authorization, no cookies).
 */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { SnapshotStore } from '../store/types.js';
import type { AppState } from './context.js';
import type { Health } from './health.js';
import type { ServerMetrics } from './metrics.js';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export interface RequestLogDeps {
  logger: Logger;
  store: SnapshotStore;
  metrics: ServerMetrics;
  health: Health;
}

/** The revision a response speaks for: the request's snapshot, else the default reference's. */
export function revisionFor(state: Partial<AppState>, store: SnapshotStore): string {
  return state.snapshot?.revision ?? store.get()?.revision ?? '';
}

/** A sane incoming `X-Request-Id`, else a new UUID. */
export function requestIdFor(incoming: string | undefined): string {
  return incoming !== undefined && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

export interface RequestLine {
  method: string;
  url: string;
  status: number;
  durationMs: number;
  remoteAddress: string | undefined;
}

/** The one log line of a request (shared with the evaluation fast path). */
export function requestLine(method: string, url: string, status: number, seconds: number, remoteAddress: string | undefined): RequestLine {
  return {
    method,
    url: url.length > 2048 ? `${url.slice(0, 2048)}…` : url,
    status,
    durationMs: Math.round(seconds * 1e6) / 1e3,
    remoteAddress,
  };
}

export function writeRequestLine(log: Logger, line: RequestLine | (RequestLine & { reqId: string })): void {
  if (line.status >= 500) log.error(line, 'request');
  else if (line.status >= 400) log.warn(line, 'request');
  else log.info(line, 'request');
}

export function requestLog(deps: RequestLogDeps): Middleware<AppState> {
  return async (ctx, next) => {
    const requestId = requestIdFor(ctx.get('X-Request-Id'));
    const startedAt = process.hrtime.bigint();
    ctx.state.requestId = requestId;
    ctx.state.startedAt = startedAt;
    ctx.state.log = deps.logger.child({ reqId: requestId });
    ctx.state.query = new Map();
    ctx.state.pretty = false;
    try {
      await next();
    } finally {
      ctx.set('X-Request-Id', requestId);
      ctx.set('X-Vexil-Revision', revisionFor(ctx.state, deps.store));
      if (!deps.health.serving) ctx.set('Connection', 'close');
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const status = ctx.status;
      deps.metrics.observeRequest(
        { method: ctx.method, route: typeof route === 'string' ? route : 'unmatched', status },
        seconds,
      );
      writeRequestLine(ctx.state.log, requestLine(ctx.method, ctx.originalUrl, status, seconds, ctx.req.socket.remoteAddress));
    }
  };
}
