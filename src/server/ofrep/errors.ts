/**
 * Errors under `/ofrep/` in the OFREP error schema instead of vexil's `{code, message, details}`:
 * `{"key"?: <flag>, "errorCode": <OpenFeature error code>, "errorDetails": <message>}`. OpenFeature
 * providers read nothing else (the JS provider treats a single-flag error body without `key` as a
 * malformed answer, so `key` is written whenever the path names the flag).
 *
 * Status, headers and message come from the one error mapping (server/pipeline/errors.ts toErrorResponse),
 * so OFREP answers with the same status as any other path would for the same failure; only the
 * body's shape differs, and the one exception is what the request reads besides the flag
 * (notAboutTheFlag). The error code, as Flipt maps it (flipt-auth-and-clients.md §4b):
 *
 *   NotFound of a flag (or of the namespace of a single-flag request)       404 FLAG_NOT_FOUND
 *   InvalidArgument (body, context)                                          400 INVALID_CONTEXT
 *   an unknown reference or environment, the unknown namespace of a bulk
 *   request (notAboutTheFlag)                                                400 GENERAL
 *   anything else (an unknown path's 404, 401, 403, 405, 413, 503, 500 ...) GENERAL
 *
 * PARSE_ERROR and TARGETING_KEY_MISSING are never used: vexil's flag state is validated before it
 * is served, and a missing targetingKey evaluates as the entity id "".
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { Code, VexilError, toVexilError } from '../../errors.js';
import { toErrorResponse } from '../pipeline/errors.js';

export const OFREP_PREFIX = '/ofrep/';
const SINGLE_FLAG_PREFIX = '/ofrep/v1/evaluate/flags/';

export type OfrepErrorCode = 'FLAG_NOT_FOUND' | 'INVALID_CONTEXT' | 'GENERAL';

export interface OfrepErrorBody {
  key?: string;
  errorCode: OfrepErrorCode;
  errorDetails: string;
}

/** Failures made by notAboutTheFlag. */
const general = new WeakSet<object>();

/**
 * The failure to find what a request reads besides its flag: an unknown reference or environment
 * (either endpoint), the unknown namespace of a bulk request. OFREP's 404 means FLAG_NOT_FOUND
 * only (FLAG_NOT_FOUND would send whoever reads it looking for the wrong thing), and its bulk
 * endpoint lists no 404 at all (200, 304, 400, 401, 403, 429, 500), so such a NotFound becomes
 * 400 GENERAL with the same message. Any other failure (503 while a reference is being built ...)
 * is returned as it is. Returns the error, to be thrown.
 */
export function notAboutTheFlag(err: unknown): unknown {
  if (!(err instanceof VexilError) || err.code !== Code.NotFound) return err;
  const e = new VexilError(Code.InvalidArgument, err.message, { cause: err });
  general.add(e);
  return e;
}

function errorCodeOf(err: unknown, routed: boolean): OfrepErrorCode {
  if (typeof err === 'object' && err !== null && general.has(err)) return 'GENERAL';
  const code = toVexilError(err).code;
  if (code === Code.NotFound) return routed ? 'FLAG_NOT_FOUND' : 'GENERAL';
  if (code === Code.InvalidArgument) return 'INVALID_CONTEXT';
  return 'GENERAL';
}

/** The flag a single-flag evaluation path names, decoded as the router decodes it. */
export function flagKeyOfPath(path: string): string | undefined {
  if (!path.startsWith(SINGLE_FLAG_PREFIX)) return undefined;
  let segment = path.slice(SINGLE_FLAG_PREFIX.length);
  if (segment.endsWith('/')) segment = segment.slice(0, -1); // the router ignores one trailing slash
  if (segment === '' || segment.includes('/')) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * The OFREP answer to `err` on `path`; `routed`: a route took the request (a 404 before routing is
 * an unknown path, not a missing flag).
 */
export function ofrepErrorResponse(
  err: unknown,
  path: string,
  routed: boolean,
): { status: number; headers: Record<string, string>; body: OfrepErrorBody } {
  const res = toErrorResponse(err);
  const key = flagKeyOfPath(path);
  const body: OfrepErrorBody = { errorCode: errorCodeOf(err, routed), errorDetails: res.body.message };
  return { status: res.status, headers: res.headers, body: key === undefined ? body : { key, ...body } };
}

/**
 * Catches every failure of a request under /ofrep/ (URL checks, authentication, routing, the
 * route itself) and writes it in the OFREP schema. Mounted inside the general error middleware,
 * which then sees no error for these paths; server faults are logged here as it logs them.
 */
export function ofrepErrors(logger: Logger): Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith(OFREP_PREFIX)) return next();
    try {
      await next();
    } catch (err) {
      // @koa/router names the route it matched; an unknown path under /ofrep/ has none.
      const routed = (ctx as { _matchedRoute?: unknown })._matchedRoute !== undefined;
      const res = ofrepErrorResponse(err, ctx.path, routed);
      if (res.status >= 500) ((ctx.state as { log?: Logger }).log ?? logger).error({ err }, 'request failed');
      ctx.remove('Content-Length');
      ctx.remove('Content-Encoding');
      for (const [name, value] of Object.entries(res.headers)) ctx.set(name, value);
      ctx.status = res.status;
      ctx.type = 'application/json';
      ctx.body = JSON.stringify(res.body);
    }
  };
}
