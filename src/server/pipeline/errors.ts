/**
 * The one place that turns a failure into an HTTP response. Every error body vexil writes, from
 * Koa middleware or from the raw Node server (`checkExpectation`, `clientError`), comes from here
 * and has the shape `{"code": N, "message": "...", "details": []}` with a gRPC-style code.
 *
 * Internal failures never leak: their body says "internal error"; the cause goes to the log.
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { AppState } from '../../http/context.js';
import { Code, INTERNAL_MESSAGE, toVexilError, type VexilError } from '../../errors.js';
import { withForwardedPrefix } from '../../http/forwarded-prefix.js';

declare module '../../http/context.js' {
  interface AppState {
    /** Set by routes a browser navigates to (login callbacks): an error is a page when HTML is preferred. */
    errorPage?: boolean;
  }
}

export interface ErrorBody {
  code: number;
  message: string;
  details: unknown[];
}

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
}

/** gRPC code → HTTP status, as grpc-gateway v2 maps them (FailedPrecondition → 400, not 412). */
const STATUS_BY_CODE: Readonly<Record<number, number>> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.Unauthenticated]: 401,
};

function statusOf(err: VexilError): number {
  return err.httpStatus ?? STATUS_BY_CODE[err.code] ?? 500;
}

export function toErrorResponse(err: unknown): ErrorResponse {
  const e = toVexilError(err);
  const status = statusOf(e);
  // Internal/Unknown messages may carry implementation detail; clients get a fixed text.
  const internal = e.code === Code.Internal || e.code === Code.Unknown;
  const headers: Record<string, string> = { ...(e.headers ?? {}) };
  if (e.code === Code.Unauthenticated && headers['WWW-Authenticate'] === undefined) {
    headers['WWW-Authenticate'] = 'Bearer realm="vexil"';
  }
  return {
    status,
    headers,
    body: {
      code: e.code,
      message: internal ? INTERNAL_MESSAGE : e.message,
      details: internal ? [] : [...e.details],
    },
  };
}

export function serializeErrorBody(body: ErrorBody, pretty = false): string {
  return pretty ? JSON.stringify(body, null, 2) : JSON.stringify(body);
}

export interface ErrorMiddlewareOptions {
  logger: Logger;
  /** Whether the response should be indented (`?pretty`). */
  pretty?: (ctx: Parameters<Middleware>[0]) => boolean;
}

/**
 * Catches everything thrown below it and writes the catalogue body. Headers set earlier (request
 * id, revision) are kept; the body and content headers are replaced.
 */
export function errorMiddleware(opts: ErrorMiddlewareOptions): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const res = toErrorResponse(err);
      const log = (ctx.state as { log?: Logger }).log ?? opts.logger;
      if (res.status >= 500) log.error({ err }, 'request failed');
      ctx.remove('Content-Length');
      ctx.remove('Content-Encoding');
      for (const [name, value] of Object.entries(res.headers)) ctx.set(name, value);
      ctx.status = res.status;
      if ((ctx.state as Partial<AppState>).errorPage === true && ctx.accepts('json', 'html') === 'html') {
        ctx.type = 'text/html; charset=utf-8';
        ctx.set('Content-Security-Policy', "default-src 'none'");
        ctx.body = errorPage(res, withForwardedPrefix(ctx.get('X-Forwarded-Prefix'), '/'));
        return;
      }
      ctx.type = 'application/json';
      ctx.body = serializeErrorBody(res.body, opts.pretty?.(ctx) ?? false);
    }
  };
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/**
 * The same error as a page, for routes a browser navigates to rather than fetches (the login
 * callbacks set `ctx.state.errorPage`) when the request prefers HTML: the person at the browser
 * reads why they were refused instead of raw JSON. API clients (Accept: JSON or none) get JSON.
 */
export function errorPage(res: ErrorResponse, home: string): string {
  const title = `${res.status} ${escapeHtml(STATUS_TEXT[res.status] ?? 'Error')}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>
<body><h1>${title}</h1><p>${escapeHtml(res.body.message)}</p><p><a href="${escapeHtml(home)}">Back</a></p></body></html>
`;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
