/**
 * The one place that turns a failure into an HTTP response. Every error body vexil writes, from
 * Koa middleware or from the raw Node server (`checkExpectation`, `clientError`), comes from here
 * and has the shape `{"code": N, "message": "...", "details": []}` with a gRPC-style code.
 *
 * Internal failures never leak: their body says "internal error"; the cause goes to the log.
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { Code, INTERNAL_MESSAGE, toVexilError, type VexilError } from '../errors.js';

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
      ctx.type = 'application/json';
      ctx.body = serializeErrorBody(res.body, opts.pretty?.(ctx) ?? false);
    }
  };
}
