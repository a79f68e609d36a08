/**
 * The one error family of vexil. Every failure that reaches a client is a VexilError with a
 * gRPC-style status code; `server/errors.ts` is the only place that maps it to an HTTP status
 * and writes the body `{"code": N, "message": "...", "details": []}`.
 */
export const Code = {
  Canceled: 1,
  Unknown: 2,
  InvalidArgument: 3,
  DeadlineExceeded: 4,
  NotFound: 5,
  AlreadyExists: 6,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  FailedPrecondition: 9,
  Aborted: 10,
  OutOfRange: 11,
  Unimplemented: 12,
  Internal: 13,
  Unavailable: 14,
  Unauthenticated: 16,
} as const;
export type Code = (typeof Code)[keyof typeof Code];

export class VexilError extends Error {
  readonly code: Code;
  readonly details: unknown[];
  /** HTTP status override for transport-level errors (405, 413, 415...) that have no gRPC twin. */
  readonly httpStatus?: number;
  /** Extra response headers (e.g. `Allow` for 405). */
  readonly headers?: Readonly<Record<string, string>>;

  constructor(
    code: Code,
    message: string,
    opts: { details?: unknown[]; httpStatus?: number; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'VexilError';
    this.code = code;
    this.details = opts.details ?? [];
    if (opts.httpStatus !== undefined) this.httpStatus = opts.httpStatus;
    if (opts.headers !== undefined) this.headers = opts.headers;
  }
}

export const notFound = (message: string) => new VexilError(Code.NotFound, message);
export const invalidArgument = (message: string, details?: unknown[]) =>
  new VexilError(Code.InvalidArgument, message, details ? { details } : {});
export const unauthenticated = () => new VexilError(Code.Unauthenticated, 'request was not authenticated');
export const internal = (message: string, cause?: unknown) => new VexilError(Code.Internal, message, { cause });
/**
 * The authentication store (the token database) cannot be reached or did not answer in time: 503
 * with Retry-After. The message is the same whatever happened; the cause (hosts, ports) goes to the log.
 */
export const authStoreUnavailable = (retryAfterSeconds: number, cause?: unknown) =>
  new VexilError(Code.Unavailable, 'the authentication store is unavailable; try again later', {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    cause,
  });

/** More work of one kind than one process takes at once (diffs in progress): 503, retry after `seconds`. */
export const overloaded = (message: string, seconds = 1) =>
  new VexilError(Code.Unavailable, message, { headers: { 'Retry-After': String(Math.max(1, Math.ceil(seconds))) } });

/** The client closed its connection before the answer (work for it was abandoned): 499 in the request log. */
export const clientGone = () => new VexilError(Code.Canceled, 'the client closed the connection');

/** The message every internal failure answers with; the cause goes to the log only. */
export const INTERNAL_MESSAGE = 'internal error';

/**
 * Maps anything thrown to a VexilError: ours pass through (the body reader, validation and the
 * store throw VexilErrors, client errors included); anything else is a fault of ours, Internal.
 */
export function toVexilError(err: unknown): VexilError {
  if (err instanceof VexilError) return err;
  return new VexilError(Code.Internal, INTERNAL_MESSAGE, { cause: err });
}
