/**
 * The one place that turns a failure into an HTTP response. Every error body vexil writes, from
 * Koa middleware or from the raw Node server (`checkExpectation`, `clientError`), comes from here
 * and has the shape `{"code": N, "message": "...", "details": []}` with a gRPC-style code.
 *
 * Internal failures never leak: their body says "internal error"; the cause goes to the log.
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { Code, VexilError } from '../errors.js';

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

export const INTERNAL_MESSAGE = 'internal error';

/** Errors raised by raw-body / http-errors (Koa's own helpers) carry these fields. */
interface TransportLikeError {
  status?: unknown;
  statusCode?: unknown;
  expose?: unknown;
  type?: unknown;
  message?: unknown;
  limit?: unknown;
}

/**
 * Maps anything thrown to a VexilError. Known transport failures (body too large, aborted
 * upload, length mismatch, unsupported charset) become client errors; everything unknown is
 * Internal.
 */
export function toVexilError(err: unknown): VexilError {
  if (err instanceof VexilError) return err;
  if (err !== null && typeof err === 'object') {
    const e = err as TransportLikeError;
    switch (e.type) {
      case 'entity.too.large':
        return new VexilError(
          Code.ResourceExhausted,
          typeof e.limit === 'number' ? `request body exceeds ${e.limit} bytes` : 'request body too large',
          { httpStatus: 413, cause: err },
        );
      case 'request.aborted':
        return new VexilError(Code.InvalidArgument, 'request aborted', { cause: err });
      case 'request.size.invalid':
        return new VexilError(Code.InvalidArgument, 'request size did not match content length', { cause: err });
      case 'encoding.unsupported':
        return new VexilError(Code.InvalidArgument, 'unsupported charset', { httpStatus: 415, cause: err });
      default:
        break;
    }
    const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : 0;
    // http-errors marks client errors as safe to expose; keep their status, speak our shape.
    if (status >= 400 && status < 500 && e.expose === true) {
      const message = typeof e.message === 'string' && e.message !== '' ? e.message : 'bad request';
      const code =
        status === 404 ? Code.NotFound : status === 401 ? Code.Unauthenticated : status === 403 ? Code.PermissionDenied : Code.InvalidArgument;
      return new VexilError(code, message, { httpStatus: status, cause: err });
    }
  }
  return new VexilError(Code.Internal, INTERNAL_MESSAGE, { cause: err });
}

/** True when the error is a server fault (5xx) and must be logged with its cause. */
export function isServerFault(err: VexilError): boolean {
  return statusOf(err) >= 500;
}

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
