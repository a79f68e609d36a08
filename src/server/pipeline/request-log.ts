/**
 * The outermost middleware: gives the request an id (a sane incoming `X-Request-Id`, else a new
 * UUID), stamps `X-Request-Id` and `X-Vexil-Revision` on every response, records the latency
 * metric and writes one log line (which requests get one is `log.requests`). Never logs headers
 * (no Authorization, no cookies).
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { fixedLineWriter, writeFixedLine } from '../../logger.js';
import type { RequestLogging } from '../../config/types.js';
import type { SnapshotStore } from '../../store/types.js';
import { monotonicMs, nanosSince } from '../../http/clock.js';
import { decimalText, quote } from '../../http/json-text.js';
import type { AppState } from '../../http/context.js';
import type { Health } from './health.js';
import { newUuid } from './uuid.js';
import type { ServerMetrics } from './metrics.js';
import { redactUrl } from '../../http/redact-url.js';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export interface RequestLogDeps {
  logger: Logger;
  store: SnapshotStore;
  metrics: ServerMetrics;
  health: Health;
  /** `log.requests` (its default is in the config schema). */
  requests: RequestLogging;
  /** `authentication.required`: X-Vexil-Revision only for authenticated callers or a snapshot read (revisionFor). */
  hideRevision?: boolean;
}

/** Whether a request answered with `status` gets a log line under `log.requests`. */
export function logsRequest(requests: RequestLogging, status: number): boolean {
  return requests === 'all' || (requests === 'errors' && status >= 400);
}

/**
 * The revision a response speaks for: the request's snapshot, else the default reference's. With
 * `hidden` (authentication required) the default reference's only for a caller who presented a
 * valid credential: a commit id tells strangers what the flags' repository holds.
 */
export function revisionFor(state: Partial<AppState>, store: SnapshotStore, hidden = false): string {
  if (state.snapshot !== undefined) return state.snapshot.revision;
  if (hidden && state.authentication === undefined) return '';
  return store.get()?.revision ?? '';
}

/** A sane incoming `X-Request-Id`, else a new UUID. */
export function requestIdFor(incoming: string | undefined): string {
  return incoming !== undefined && SANE_REQUEST_ID.test(incoming) ? incoming : newUuid();
}

export interface RequestLine {
  method: string;
  url: string;
  status: number;
  durationMs: number;
  remoteAddress: string | undefined;
}

/** The request's duration as logged: milliseconds, to the whole microsecond. */
function durationMs(nanos: number): number {
  return Math.round(nanos / 1e3) / 1e3;
}

/** The one log line of a request (shared with the evaluation fast path); `nanos` is its duration. */
export function requestLine(method: string, rawUrl: string, status: number, nanos: number, remoteAddress: string | undefined): RequestLine {
  // OAuth callbacks carry the authorization code and state in the query: never logged.
  const url = redactUrl(rawUrl);
  return {
    method,
    url: url.length > 2048 ? `${url.slice(0, 2048)}…` : url,
    status,
    durationMs: durationMs(nanos),
    remoteAddress,
  };
}

/** The level of a request's line: by status. */
function levelOf(status: number): 'info' | 'warn' | 'error' {
  return status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
}

/**
 * The line's members, serialised as pino would (same order, same JSON). None of them can hold a
 * secret (no headers, no body), so none needs redaction. `reqId` is given when the logger is not
 * already bound to it (the fast path logs through the root logger).
 */
function requestLineFields(line: RequestLine, reqId: string | undefined): string {
  // A request id is a UUID or passed requestIdFor's check (no character JSON would escape).
  const id = reqId === undefined ? '' : `"reqId":"${reqId}",`;
  const remote = line.remoteAddress === undefined ? '' : `,"remoteAddress":${quote(line.remoteAddress)}`;
  return `${id}"method":${quote(line.method)},"url":${quote(line.url)},"status":${line.status},"durationMs":${line.durationMs}${remote}`;
}

/**
 * Writes the request's one log line. Through a logger made by createLogger this is a preformatted
 * line (logger.ts `writeFixedLine`: no generic serialisation, no redaction, batched on stdout);
 * any other pino logger gets the same fields the ordinary way. `reqId` must come from
 * requestIdFor (it is written without escaping).
 */
export function writeRequestLine(log: Logger, line: RequestLine, reqId?: string): void {
  const level = levelOf(line.status);
  if (!log.isLevelEnabled(level)) return;
  if (writeFixedLine(log, level, requestLineFields(line, reqId), 'request')) return;
  log[level](reqId === undefined ? line : { reqId, ...line }, 'request');
}

/**
 * writeRequestLine for one method through one logger (the fast path's root logger), with the
 * constant parts prepared once: the same line, byte for byte, for the requests `requests`
 * selects. `nanos` is the request's duration in nanoseconds; `reqId` must come from requestIdFor.
 */
export function requestLineWriter(
  log: Logger,
  method: string,
  requests: RequestLogging,
): (status: number, url: string, nanos: number, remoteAddress: string | undefined, reqId: string) => void {
  const writers = {
    info: fixedLineWriter(log, 'info', 'request'),
    warn: fixedLineWriter(log, 'warn', 'request'),
    error: fixedLineWriter(log, 'error', 'request'),
  };
  // A line is five pieces: everything up to the request id (changes once a millisecond), the id,
  // method, URL and status (nearly every request repeats the last ones), the duration, and the
  // address with the message (repeated too). Fewer, longer pieces are cheaper to join and write.
  let lastHead = '';
  let prefix = '';
  let lastUrl: string | undefined;
  let lastStatus = 0;
  let middle = '';
  let lastRemote: string | undefined = '';
  let lastTail = '';
  let tail = '';
  return (status, url, nanos, remoteAddress, reqId) => {
    if (!logsRequest(requests, status)) return;
    const level = levelOf(status);
    const writer = writers[level];
    if (writer === undefined) {
      writeRequestLine(log, requestLine(method, url, status, nanos, remoteAddress), reqId);
      return;
    }
    if (!log.isLevelEnabled(level)) return;
    const head = writer.head();
    if (head !== lastHead) {
      lastHead = head;
      prefix = `${head}"reqId":"`;
    }
    if (url !== lastUrl || status !== lastStatus) {
      lastUrl = url;
      lastStatus = status;
      // As requestLine: credentials in the query redacted, then cut at 2048 characters.
      const logged = redactUrl(url);
      const urlJson = quote(logged.length > 2048 ? `${logged.slice(0, 2048)}…` : logged);
      middle = `","method":${quote(method)},"url":${urlJson},"status":${status},"durationMs":`;
    }
    if (remoteAddress !== lastRemote || writer.tail !== lastTail) {
      lastRemote = remoteAddress;
      lastTail = writer.tail;
      tail = remoteAddress === undefined ? writer.tail : `,"remoteAddress":${quote(remoteAddress)}${writer.tail}`;
    }
    // durationMs(nanos), printed from the whole microseconds.
    writer.write(prefix + reqId + middle + decimalText(Math.round(nanos / 1e3), 3) + tail);
  };
}

export function requestLog(deps: RequestLogDeps): Middleware<AppState> {
  const requests = deps.requests;
  return async (ctx, next) => {
    const requestId = requestIdFor(ctx.get('X-Request-Id'));
    const startedAt = monotonicMs();
    ctx.state.requestId = requestId;
    ctx.state.startedAt = startedAt;
    ctx.state.log = deps.logger.child({ reqId: requestId });
    ctx.state.query = new Map();
    ctx.state.pretty = false;
    try {
      await next();
    } finally {
      ctx.set('X-Request-Id', requestId);
      ctx.set('X-Vexil-Revision', revisionFor(ctx.state, deps.store, deps.hideRevision));
      if (!deps.health.serving) ctx.set('Connection', 'close');
      const nanos = nanosSince(startedAt);
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const status = ctx.status;
      deps.metrics.observeRequest(
        { method: ctx.method, route: typeof route === 'string' ? route : 'unmatched', status },
        nanos / 1e9,
      );
      if (logsRequest(requests, status)) {
        writeRequestLine(ctx.state.log, requestLine(ctx.method, ctx.originalUrl, status, nanos, ctx.req.socket.remoteAddress));
      }
    }
  };
}
