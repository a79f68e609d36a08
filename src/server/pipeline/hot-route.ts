/**
 * The shape of a hot route: a read endpoint clients call on every flag decision (evaluation, OFREP
 * single flag, client snapshots), written once as a value and served by two HTTP paths:
 *
 * - the Koa router (pipeline/mount-hot-route.ts), for every request when the fast path is off and
 *   for the requests the fast path leaves (an encoded or trailing-slash path);
 * - the node:http fast path (server/fast-path/), which matches the same `pattern` itself.
 *
 * A route says what its request needs (`prepare`: the checked input and the reference it reads) and
 * what it answers for the snapshot of that reference (`answer`). Everything around that (URL
 * checks, authentication, the body's limits, resolving the reference, errors, the request log,
 * metrics, CORS, the response head) is the path's, the same for every route. Both paths call the
 * same two functions with the same input, so their answers are byte-identical
 * (test/server/fast-path.test.ts replays requests to every route of the table on both).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { Snapshot } from '../../model/snapshot.js';

/** What a hot route reads of its request, on either path. */
export interface HotRequest {
  /** The pattern's parameters (`:name`), decoded. */
  readonly params: Readonly<Record<string, string | undefined>>;
  /** The query string, strictly decoded (first value wins for a repeated name). */
  readonly query: ReadonlyMap<string, string>;
  readonly headers: IncomingHttpHeaders;
  /** `?pretty` was given: indent JSON. */
  readonly pretty: boolean;
  /** http/clock.ts `monotonicMs()` when the request arrived. */
  readonly startedAt: number;
  /** The request id when the server made it up (no sane incoming X-Request-Id); else undefined. */
  readonly generatedId: string | undefined;
  /** Authentication checked a credential the request presented (its answer is then the caller's own). */
  readonly authenticated: boolean;
  /** The request's server span when tracing records it (pipeline/request-span.ts): evaluations are events on it. */
  readonly span: Span | undefined;
}

/** A success answer. Errors are thrown, and each path writes them in the route's `errors` schema. */
export interface HotAnswer {
  readonly status: 200 | 304;
  /** The body; undefined: none, and no content headers (a 304). Content type: JSON. */
  readonly body: string | Buffer | undefined;
  /** The body is a string known to be ASCII: sized by its length and sent as latin1 (the same bytes). */
  readonly ascii?: boolean;
  /** The route's own headers as a flat [name, value, ...] list, written before the content headers. */
  readonly headers?: readonly string[];
}

export interface HotRoute<Prepared = unknown> {
  /** POST (a JSON body, read within the body limits) or GET (which also answers HEAD). */
  readonly method: 'POST' | 'GET';
  /** The router's pattern (`/a/:name/b`): matched by both paths, and the `route` label of the request metric. */
  readonly pattern: string;
  /** The error schema: the API's `{code, message, details}`, or OFREP's (everything under /ofrep/). */
  readonly errors: 'api' | 'ofrep';
  /** Checks the request (and the body of a POST; undefined for a GET); throws a VexilError to refuse it. */
  prepare(req: HotRequest, body: unknown): Prepared;
  /** The reference the prepared request reads: undefined or "" is the default reference. */
  reference(prepared: Prepared): string | undefined;
  /** A failure to resolve that reference, as the route reports it (default: as it is). Returns the error to throw. */
  referenceFailure?(err: unknown): unknown;
  /** The answer for the snapshot of that reference; throws a VexilError for an error answer. */
  answer(prepared: Prepared, snapshot: Snapshot, req: HotRequest): HotAnswer;
}

/**
 * A route of the table, whatever its prepared type (methods are compared bivariantly, so every
 * HotRoute<P> is one): each path hands `prepare`'s value back to the same route only.
 */
export type AnyHotRoute = HotRoute<unknown>;
