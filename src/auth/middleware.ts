/**
 * Request authentication (interface §5.1, reference §2.5, §2.13), run before routing:
 *
 * - `/health`, `/ready`, `GET /auth/v1/method` (and the login flows) never need a token, nor do
 *   sections opened by `exclude.management` / `exclude.evaluation` / `exclude.metrics`; there the
 *   credentials are not even looked at, except on `/ready`, which identifies a caller presenting
 *   a valid one (and never refuses one that is not).
 * - Otherwise, with `required: true`, the request needs `Authorization: Bearer <token>`, or the
 *   `svc_client_token` cookie when there is no Authorization header at all. Missing, unknown or
 *   expired → 401 `request was not authenticated`.
 * - A namespace-scoped token reaches only requests confined to its namespace; elsewhere
 *   (including everything under /auth/v1) → 403 `permission denied: token is scoped to
 *   namespace "<ns>"`.
 * - With `required: false` no request needs a token; `/auth/v1/self*` still identifies the caller
 *   by the token it presents (Flipt answers 401 there even with a valid token).
 * - A stateless method (JWT) answers for its own Authorization scheme (`JWT <token>`, matched
 *   case-sensitively as Flipt does); its authentication is never namespace-scoped.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { Code, VexilError, unauthenticated } from '../errors.js';
import { readJson } from '../http/body.js';
import { field, isPlainObject } from '../http/fields.js';
import type { AppContext, AppState } from '../http/context.js';
import { headerTwin } from '../http/header-twins.js';
import { DEFAULT_NAMESPACE, classifyRequest, type NamespaceSource, type RequestScope } from './scope.js';
import { clearCookie } from './cookies.js';
import { CSRF_COOKIE, csrfProblem, csrfRefusal, type CsrfConfig } from './csrf.js';
import type { ConfigRecheck } from './config-recheck.js';
import type { AuthMethod } from './methods/types.js';
import type { AuthService, LookupResult } from './service.js';
import { CLIENT_TOKEN_COOKIE, STATE_COOKIE, scopedNamespace, type Authentication } from './types.js';

declare module '../http/context.js' {
  interface AppState {
    /** The caller's authentication, when the request presented a valid credential that was checked. */
    authentication?: Authentication;
  }
}

export interface AuthMiddlewareOptions {
  service: AuthService;
  required: boolean;
  exclude: { management: boolean; evaluation: boolean; metrics?: boolean };
  /** `authentication.session.domain`, for the cookie-clearing header on a refused cookie. */
  sessionDomain?: string;
  /** `authentication.session.csrf`: cookie-authenticated unsafe requests are checked (src/auth/csrf.ts). */
  csrf?: CsrfConfig;
  /** The current configuration's verdict on a stored record (src/auth/config-recheck.ts). */
  configRecheck?: ConfigRecheck;
  /** Enabled methods with a per-request `recheck` of their records (OIDC's email_matches). */
  recheckMethods?: readonly AuthMethod[];
  /** Enabled stateless methods (those with a `scheme` and `authenticate`), e.g. JWT. */
  statelessMethods?: readonly AuthMethod[];
}

export function permissionDenied(namespace: string): VexilError {
  return new VexilError(Code.PermissionDenied, `permission denied: token is scoped to namespace "${namespace}"`);
}

type Credential =
  | { kind: 'bearer'; token: string }
  | { kind: 'cookie'; token: string }
  | { kind: 'stateless'; method: AuthMethod; token: string }
  | { kind: 'none' }
  | { kind: 'unsupported' };

/**
 * What the decision needs from a request, whichever server path carries it (the Koa middleware
 * and stream re-checks through authRequestOf below, or the node:http fast path's exchange in
 * src/server/fast-path/exchange.ts).
 */
export interface AuthRequest {
  readonly method: string;
  /** The URL path, without the query. */
  readonly path: string;
  readonly authorization: string | undefined;
  /**
   * The request headers, for a namespace named by a header (OFREP). A path that reads none
   * (the evaluation fast path's) may leave them out; then no header names a namespace.
   */
  readonly headers?: IncomingHttpHeaders;
  /** A request cookie's value (read only when there is no Authorization header). */
  cookie(name: string): string | undefined;
  /** The JSON body, read once and shared with the route (only namespace-scoped tokens need it). */
  body(): Promise<unknown>;
  /** Adds Set-Cookie values to the response, kept even when the request is then refused. */
  setCookies(values: string[]): void;
  /** The request's logger, when it has one. */
  log(): Logger | undefined;
}

/**
 * A gate's answer: the caller's authentication when a checked credential was presented,
 * undefined when the request needs none. A promise only when the decision has to wait (a store
 * read, a signature check, a scoped token's body); a decision made at once (a cached token, an
 * open path) comes back as it is, so the evaluation fast path pays for no promise then.
 */
export type AuthDecision = Authentication | undefined | Promise<Authentication | undefined>;

/**
 * The one authentication decision (see AuthDecision). A refusal (401/403) is thrown, or rejects
 * the promise when the decision waited: callers `await` it inside a try or an async function.
 */
export type AuthGate = ((req: AuthRequest) => AuthDecision) & {
  /** True when the gate would let this request through without looking at it (then it need not be called). */
  readonly passes?: (method: string, path: string) => boolean;
};

/** Header first: a present Authorization header is the credential even when it is not usable. */
function credentialOf(req: AuthRequest, stateless: ReadonlyArray<readonly [prefix: string, method: AuthMethod]>): Credential {
  const header = req.authorization;
  if (header !== undefined) {
    if (header.startsWith('Bearer ')) return { kind: 'bearer', token: header.slice('Bearer '.length) };
    for (const [prefix, method] of stateless) {
      if (header.startsWith(prefix)) return { kind: 'stateless', method, token: header.slice(prefix.length) };
    }
    return { kind: 'unsupported' };
  }
  const cookie = req.cookie(CLIENT_TOKEN_COOKIE);
  return cookie !== undefined && cookie !== '' ? { kind: 'cookie', token: cookie } : { kind: 'none' };
}

function excluded(scope: Extract<RequestScope, { public: false }>, opts: AuthMiddlewareOptions): boolean {
  return (
    (scope.section === 'management' && opts.exclude.management) ||
    (scope.section === 'evaluation' && opts.exclude.evaluation) ||
    (scope.section === 'metrics' && opts.exclude.metrics === true)
  );
}

export function createAuthGate(opts: AuthMiddlewareOptions): AuthGate {
  const { service } = opts;
  const stateless = (opts.statelessMethods ?? [])
    .filter((m) => m.scheme !== undefined && m.authenticate !== undefined)
    .map((m) => [`${m.scheme!} `, m] as const);

  const rechecks = new Map((opts.recheckMethods ?? []).flatMap((m) => (m.recheck ? [[m.method, m.recheck.bind(m)] as const] : [])));

  const refusal = (req: AuthRequest, reason: string, credential: Credential): VexilError => {
    req.log()?.debug({ reason }, 'request was not authenticated');
    // A browser holding a dead cookie is told to drop it (reference §2.17), on /auth/v1 only.
    if (credential.kind === 'cookie' && req.path.startsWith('/auth/v1/')) {
      return new VexilError(Code.Unauthenticated, 'request was not authenticated', {
        headers: { 'Set-Cookie': clearCookie(CLIENT_TOKEN_COOKIE, opts.sessionDomain) },
      });
    }
    return unauthenticated();
  };

  // Open servers only look at credentials under /auth/v1/self (see below); skip classifying the rest.
  const passes = (_method: string, path: string) => !opts.required && !path.startsWith('/auth/v1/self');
  // The classification of the last path asked: a server under load asks about the same few paths
  // over and over, and classifying one (split, prefix tests, the scope objects) showed in the
  // authenticated evaluation profile. One entry, so any path the clients send costs nothing to hold.
  let lastMethod = '';
  let lastPath = '';
  let lastScope: RequestScope = { public: true };
  const scopeOf = (method: string, path: string): RequestScope => {
    if (method !== lastMethod || path !== lastPath) {
      lastScope = classifyRequest(method, path);
      lastMethod = method;
      lastPath = path;
    }
    return lastScope;
  };

  const gate = (req: AuthRequest): AuthDecision => {
    if (passes(req.method, req.path)) return undefined;
    const scope = scopeOf(req.method, req.path);
    if (scope.public) return scope.identify === true && opts.required ? identify(req) : undefined;
    // Logging out drops the session cookies whatever happens next, refusals included (reference §2.17).
    if (scope.self && req.method === 'PUT' && /^\/auth\/v1\/self\/expire\/?$/.test(req.path)) {
      req.setCookies([STATE_COOKIE, CLIENT_TOKEN_COOKIE, CSRF_COOKIE].map((name) => clearCookie(name, opts.sessionDomain)));
    }
    if (!opts.required && !scope.self) return undefined;
    if (opts.required && excluded(scope, opts)) return undefined;

    const credential = credentialOf(req, stateless);
    if (credential.kind === 'none') throw refusal(req, 'no credentials', credential);
    if (credential.kind === 'unsupported') throw refusal(req, 'unsupported authorization scheme', credential);
    // The method logs its own reason (never the credential) and throws the 401.
    if (credential.kind === 'stateless') return credential.method.authenticate!(credential.token);
    if (credential.kind === 'cookie') {
      // A browser sends the cookie on its own, also for a page of another site: check where the request comes from.
      const problem = csrfProblem(req.method, req.headers, credential.token, opts.csrf ?? { trusted_origins: [] });
      if (problem !== undefined) {
        req.log()?.info({ reason: problem }, 'cookie-authenticated request refused');
        throw csrfRefusal(problem);
      }
    }
    // A token in the lookup cache is decided now; otherwise after the store read.
    const cached = service.lookupCached(credential.token);
    if (cached !== undefined) return admit(req, scope, credential, cached);
    return service.lookup(credential.token).then((found) => admit(req, scope, credential, found));
  };

  /** The caller on a public path that says more to a known caller: a valid credential, else undefined (never a refusal). */
  const identify = async (req: AuthRequest): Promise<Authentication | undefined> => {
    const credential = credentialOf(req, stateless);
    try {
      if (credential.kind === 'stateless') return await credential.method.authenticate!(credential.token);
      if (credential.kind !== 'bearer' && credential.kind !== 'cookie') return undefined;
      const found = service.lookupCached(credential.token) ?? (await service.lookup(credential.token));
      if (!found.ok || rechecks.get(found.authentication.method)?.(found.authentication) !== undefined) return undefined;
      return found.authentication;
    } catch {
      return undefined;
    }
  };

  /** The rest of the decision once the token's record is known: recheck, then namespace scope. */
  const admit = (req: AuthRequest, scope: Extract<RequestScope, { public: false }>, credential: Credential, found: LookupResult): AuthDecision => {
    if (!found.ok) throw refusal(req, found.reason, credential);
    const { authentication } = found;
    const recheck = rechecks.get(authentication.method);
    const recheckProblem = opts.configRecheck?.(authentication) ?? recheck?.(authentication);
    // A method that must ask elsewhere first (the code host's memberships, when due) answers later.
    if (recheckProblem instanceof Promise) {
      return recheckProblem.then((problem) => {
        if (problem !== undefined) throw refusal(req, problem, credential);
        return inScope(req, scope, authentication);
      });
    }
    if (recheckProblem !== undefined) throw refusal(req, recheckProblem, credential);
    return inScope(req, scope, authentication);
  };

  /** The namespace rule, last: a scoped token reaches only requests confined to its namespace. */
  const inScope = (req: AuthRequest, scope: Extract<RequestScope, { public: false }>, authentication: Authentication): AuthDecision => {
    const namespace = scopedNamespace(authentication);
    if (namespace === undefined) return authentication;
    return confinedTo(req, scope.namespace, namespace).then((allowed) => {
      if (!allowed) {
        req.log()?.debug({ authenticationId: authentication.id, namespace }, 'namespace-scoped token used out of scope');
        throw permissionDenied(namespace);
      }
      return authentication;
    });
  };
  return Object.assign(gate, { passes });
}

/**
 * The gate's view of a Koa request: the one adapter for the Koa middleware below and for a
 * stream's re-checks (server/streams/stream-auth.ts), which ask the same decision again later on
 * the same context. By then the body, if a gate read it, is the promise kept in
 * `ctx.state.jsonBody`, and Set-Cookie is ignored (Koa sets no header once the head is sent).
 */
export function authRequestOf(ctx: AppContext): AuthRequest {
  return {
    method: ctx.method,
    path: ctx.path,
    authorization: ctx.req.headers.authorization,
    headers: ctx.req.headers,
    cookie: (name) => ctx.cookies.get(name),
    body: () => (ctx.state.jsonBody ??= readJson(ctx.req)),
    setCookies: (values) => ctx.set('Set-Cookie', values),
    log: () => ctx.state.log,
  };
}

/** The Koa middleware around the gate (the node:http fast path asks the same gate itself). */
export function authMiddleware(gate: AuthGate): Middleware<AppState> {
  return async (ctx, next) => {
    const authentication = await gate(authRequestOf(ctx));
    if (authentication !== undefined) ctx.state.authentication = authentication;
    return next();
  };
}

/** Whether the request addresses exactly `namespace` and nothing else. */
async function confinedTo(req: AuthRequest, source: NamespaceSource, namespace: string): Promise<boolean> {
  switch (source.from) {
    case 'none':
      return false;
    case 'path':
      return (source.namespace === '' ? DEFAULT_NAMESPACE : source.namespace) === namespace;
    case 'body': {
      const body = await req.body();
      if (!isPlainObject(body)) return false;
      if (!source.batch) return bodyNamespace(body, source.pathNamespace) === namespace;
      const requests = field(body, 'requests');
      if (!Array.isArray(requests)) return false;
      return requests.every((r) => isPlainObject(r) && bodyNamespace(r, undefined) === namespace);
    }
    case 'legacy-batch-body': {
      // The batch's namespace decides; an item may repeat it or leave its own empty.
      const body = await req.body();
      if (!isPlainObject(body) || bodyNamespace(body, undefined) !== namespace) return false;
      const requests = field(body, 'requests') ?? [];
      if (!Array.isArray(requests)) return false;
      return requests.every((r) => isPlainObject(r) && bodyNamespace(r, namespace) === namespace);
    }
    case 'header': {
      if (req.headers === undefined) return false;
      return (headerTwin(req.headers, 'namespace') ?? DEFAULT_NAMESPACE) === namespace;
    }
  }
}

/** `namespaceKey` of an evaluation request; empty means the path's namespace, else `default`. */
function bodyNamespace(body: Record<string, unknown>, pathNamespace: string | undefined): string | undefined {
  const v = field(body, 'namespaceKey');
  if (v !== undefined && typeof v !== 'string') return undefined;
  if (v !== undefined && v !== '') return v;
  return pathNamespace !== undefined && pathNamespace !== '' ? pathNamespace : DEFAULT_NAMESPACE;
}
