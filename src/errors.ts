/**
 * The one error family of vexil. Every failure that reaches a client is a VexilError with a
 * gRPC-style status code; `server/pipeline/errors.ts` is the only place that maps it to an HTTP status
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

// The refusals vexil invents: a request that is neither wrong nor hit by a bug, refused because
// the server cannot serve it now. Each is a 503 built by one constructor here (the message is its
// wording, the same wherever it is raised); REFUSALS lists them for docs/errors.md.

/** `Retry-After` in whole seconds, at least 1. */
function retryAfter(seconds: number): Record<string, string> {
  return { 'Retry-After': String(Math.max(1, Math.ceil(seconds))) };
}

/**
 * The snapshot store cannot take on the lookup or build a request asks for: too many lookups or
 * builds wait, or the references built on request are at their cap. `message` names the reference
 * and which bound it met.
 */
export const storeOverloaded = (message: string, retryAfterSeconds: number) =>
  new VexilError(Code.Unavailable, message, { headers: retryAfter(retryAfterSeconds) });

/**
 * The state backend could not be read for `ref`. The message says so and nothing more (the cause
 * names hosts and ports: it is logged and shown in /meta/snapshots).
 */
export const backendUnavailable = (ref: string, retryAfterSeconds: number, cause?: unknown) =>
  new VexilError(Code.Unavailable, `reference "${ref}" cannot be read now: the state backend is unavailable; try again later`, {
    headers: retryAfter(retryAfterSeconds),
    cause,
  });

/** The snapshot store is closed (the server is stopping): nothing is looked up or built any more. */
export const storeClosed = () => new VexilError(Code.Unavailable, 'the store is closed');

/** No stream may open: `server.max_streams` are open (or it is 0, streaming off). */
export const streamLimit = (maxStreams: number, retryAfterSeconds: number) =>
  new VexilError(
    Code.Unavailable,
    maxStreams === 0
      ? 'streaming is turned off (server.max_streams is 0)'
      : `too many open streams (server.max_streams is ${maxStreams}); try again later`,
    { headers: retryAfter(retryAfterSeconds) },
  );

/** The server is shutting down: no new stream opens. */
export const shuttingDown = () => new VexilError(Code.Unavailable, 'the server is shutting down', { headers: retryAfter(1) });

/**
 * The authentication store (the token database) cannot be reached or did not answer in time: 503
 * with Retry-After. The message is the same whatever happened; the cause (hosts, ports) goes to the log.
 */
export const authStoreUnavailable = (retryAfterSeconds: number, cause?: unknown) =>
  new VexilError(Code.Unavailable, 'the authentication store is unavailable; try again later', {
    headers: retryAfter(retryAfterSeconds),
    cause,
  });

/** More work of one kind than one process takes at once (diffs in progress): 503, retry after `seconds`. */
export const overloaded = (message: string, seconds = 1) =>
  new VexilError(Code.Unavailable, message, { headers: { 'Retry-After': String(Math.max(1, Math.ceil(seconds))) } });

/** The client closed its connection before the answer (work for it was abandoned): 499 in the request log. */
export const clientGone = () => new VexilError(Code.Canceled, 'the client closed the connection');

/** A JWT cannot be judged: its signing key is in no key set fetched so far, and the fetch fails. */
export const jwtKeysUnavailable = (retryAfterSeconds: number) =>
  new VexilError(Code.Unavailable, 'JWT key set unavailable', { headers: retryAfter(retryAfterSeconds) });

/** An OIDC provider's discovery document cannot be fetched (retried at most every few seconds). */
export const oidcProviderUnavailable = (provider: string) =>
  new VexilError(Code.Unavailable, `oidc provider "${provider}" is unavailable`);

/**
 * A code host login cannot complete: the code host did not answer as expected. `setCookie`
 * clears the login's state cookie.
 */
export const codeHostUnavailable = (setCookie: string) =>
  new VexilError(Code.Unavailable, 'handling code host callback: the code host is unavailable, try again later', {
    headers: { 'Set-Cookie': setCookie },
  });

/** A service account token cannot be judged: cluster discovery or its key set fetch fails (`reason`). */
export const clusterVerificationUnavailable = (reason: string) =>
  new VexilError(Code.Unavailable, `verifying service account: ${reason}`);

/**
 * The checks of a served revision cannot be computed: the local folder it was read from has moved on
 * since (its new state is being built), so its files are not that revision's any more.
 */
export const stateMovedOn = (reference: string, revision: string) =>
  new VexilError(Code.Unavailable, `reference "${reference}" changed since revision ${revision}: its new state is being loaded; try again`, {
    headers: retryAfter(1),
  });

/** The history store's database cannot be read (`/meta/history`, `/meta/audit`); the cause goes to the log. */
export const historyUnavailable = (cause?: unknown) =>
  new VexilError(Code.Unavailable, 'the history store cannot be read now', { headers: retryAfter(1), cause });

export interface RefusalEntry {
  /** One line: when a request gets it. */
  readonly meaning: string;
  /** What to do about it. */
  readonly hint: string;
  /** The refusal as its constructor builds it, with sample arguments (for docs/errors.md). */
  readonly example: () => VexilError;
}

/** Every refusal vexil invents, by the name of its constructor; the order is the order of docs/errors.md. */
export const REFUSALS = {
  storeOverloaded: {
    meaning: 'a request names a reference that is not built yet and the store cannot take on its lookup or build now: too many lookups or builds wait, or `storage.git.max_references` references built on request are kept',
    hint: 'retry after Retry-After; raise storage.git.max_pending_builds or max_references if it is routine',
    example: () => storeOverloaded('reference "feature-x" cannot be built now: 8 builds are already waiting; try again later', 1),
  },
  backendUnavailable: {
    meaning: 'the reference has no snapshot yet and the state backend (git remote, registry, bucket) could not be read; the cause is in the log and in /meta/snapshots',
    hint: 'retry after Retry-After (the next poll tries again); check the backend',
    example: () => backendUnavailable('feature-x', 30),
  },
  streamLimit: {
    meaning: 'a stream cannot open: `server.max_streams` streams are open, or it is 0 (streaming turned off)',
    hint: 'retry after Retry-After, or raise server.max_streams',
    example: () => streamLimit(10000, 5),
  },
  shuttingDown: {
    meaning: 'the server is shutting down: no new stream opens',
    hint: 'reconnect (to another replica) after Retry-After',
    example: () => shuttingDown(),
  },
  overloaded: {
    meaning: 'more work of one kind than one process takes at once: `diff.max_concurrent` diffs are in progress',
    hint: 'retry after Retry-After; raise diff.max_concurrent if it is routine (each diff shares the serving thread in diff.slice turns)',
    example: () => overloaded('4 diffs are in progress (diff.max_concurrent); try again shortly'),
  },
  storeClosed: {
    meaning: 'the snapshot store is closed while the server stops: a reference without a snapshot is not built',
    hint: 'retry against a running server',
    example: () => storeClosed(),
  },
  authStoreUnavailable: {
    meaning: 'the authentication store (the token database) cannot be reached or did not answer in time',
    hint: 'retry after Retry-After; check the database (the cause is in the log)',
    example: () => authStoreUnavailable(5),
  },
  jwtKeysUnavailable: {
    meaning: "a JWT is signed with a key that is in no key set fetched so far, and the key set cannot be fetched now",
    hint: 'retry after Retry-After; check authentication.methods.jwt.jwks_url is reachable',
    example: () => jwtKeysUnavailable(5),
  },
  oidcProviderUnavailable: {
    meaning: "an OIDC login starts or completes while the provider's discovery document cannot be fetched",
    hint: 'log in again later; check authentication.methods.oidc.providers.<name>.issuer_url is reachable',
    example: () => oidcProviderUnavailable('google'),
  },
  codeHostUnavailable: {
    meaning: 'a code host login callback cannot complete: the code host (GitHub or GitHub Enterprise) did not answer as expected',
    hint: 'log in again later; check authentication.methods.code_host.server_url and api_url are reachable',
    example: () => codeHostUnavailable('svc_client_state=; Path=/; Max-Age=0'),
  },
  clusterVerificationUnavailable: {
    meaning: "a Kubernetes service account token cannot be judged: cluster discovery or the cluster's key set fetch fails",
    hint: 'retry later; check authentication.methods.cluster.discovery_url is reachable from the pod',
    example: () => clusterVerificationUnavailable('cluster discovery failed: connect ECONNREFUSED'),
  },
  stateMovedOn: {
    meaning: "the checks of a revision served from a local folder are asked for after the folder changed: the files read are no longer that revision's",
    hint: 'retry after Retry-After: the new state is being built, and its checks are then the ones to ask for',
    example: () => stateMovedOn('local', '9f2c41d0e8ab'),
  },
  historyUnavailable: {
    meaning: 'the served-revision history or the audit events cannot be read: their database (authentication.storage) is out of reach or failed; flags are still served',
    hint: 'retry after Retry-After; check the database the history shares with authentication.storage',
    example: () => historyUnavailable(),
  },
} as const satisfies Record<string, RefusalEntry>;

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
