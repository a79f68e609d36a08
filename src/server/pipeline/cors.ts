/**
 * Cross-origin resource sharing (`cors.*`): which browser pages on other origins may read vexil's
 * answers, and the preflight answer that lets them send the headers its clients send.
 *
 * Two modes, chosen by `cors.allowed_origins`:
 * - `["*"]`: every origin, without credentials. Answers carry `Access-Control-Allow-Origin: *` and
 *   never `Access-Control-Allow-Credentials`, so a browser sends no cookies (the session cookie
 *   stays same-site); an explicit `Authorization` header still works, since the preflight allows it.
 * - a list of origins (`https://app.example.com`, or one `*` inside, `https://*.example.com`;
 *   syntax in src/http/origins.ts): the
 *   matching origin is echoed with `Access-Control-Allow-Credentials: true`, so cookie and
 *   Authorization flows both work, and every answer carries `Vary: Origin` (a cache must keep the
 *   answers for different origins apart).
 * An origin that is not allowed gets no CORS headers: its browser hides the answer. The request
 * itself is served as usual: CORS protects browser users, not the server, and non-browser callers
 * send no Origin at all.
 *
 * Every header value is computed once here, at start; per request there is a map lookup (list
 * mode) and an array append. Both HTTP paths use this: the Koa middleware below and the evaluation
 * fast path (fast-path/exchange.ts), as do the raw-server error answers of listen.ts.
 */
import type { Middleware } from 'koa';
import type { CorsConfig } from '../../config/types.js';
import { originList } from '../../http/origins.js';
import type { AppState } from '../../http/context.js';
import { twinHeaderNames } from '../../http/header-twins.js';

/**
 * Request headers the real clients send (Flipt's SDKs, the OpenFeature providers, the UI), in
 * lower case: the standard ones, and both spellings of every header carrying meaning
 * (http/header-twins.ts: `x-flipt-environment`, `x-svc-namespace`, ...). Flipt's default list lacks
 * `x-flipt-environment` and `if-none-match`, which its own browser SDK sends, so that SDK cannot
 * refresh from another origin; vexil always allows them.
 */
export const CLIENT_REQUEST_HEADERS: readonly string[] = [
  'accept',
  'authorization',
  'content-type',
  'if-none-match',
  'last-event-id',
  'x-request-id',
  ...twinHeaderNames(),
];

/**
 * Response headers a page may read besides the always-readable ones (Content-Type, ...): the
 * snapshot's ETag (the browser SDK compares it to decide whether the flags changed), the request
 * id and revision a bug report needs, and when to retry a 503.
 */
export const EXPOSED_RESPONSE_HEADERS: readonly string[] = ['ETag', 'X-Request-Id', 'X-Vexil-Revision', 'Retry-After'];

/** The methods vexil serves; a preflight allows all of them. */
export const ALLOWED_METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'];

/** How long a browser may reuse a preflight answer (seconds; Chromium caps it at 7200). */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

export interface CorsPolicy {
  /**
   * Appends, as a flat `[name, value, ...]` list, the headers an actual answer to a request with
   * this `Origin` carries: with `*` the same for every request; with a list `Vary: Origin`, plus
   * the CORS headers for an allowed origin.
   */
  appendResponseHeaders(head: string[], origin: string | undefined): void;
  /** The headers of the 204 answer to a preflight with this `Origin` (flat list, as above). */
  preflightHeaders(origin: string | undefined): string[];
  /**
   * Headers for an answer whose request could not be parsed, so its Origin is unknown: with
   * `*` the same as for any origin; with a list none (the origin cannot be echoed).
   */
  readonly withoutOrigin: readonly string[];
}

/** The policy of `cors.*`; undefined when CORS is off (the callers then skip it with one check). */
export function createCorsPolicy(config: CorsConfig): CorsPolicy | undefined {
  if (!config.enabled) return undefined;
  const origins = originList(config.allowed_origins);
  const expose = EXPOSED_RESPONSE_HEADERS.join(', ');
  const extra = config.allowed_headers.map((h) => h.trim().toLowerCase()).filter((h) => h !== '' && !CLIENT_REQUEST_HEADERS.includes(h));
  const preflightCommon = [
    'Access-Control-Allow-Methods',
    ALLOWED_METHODS.join(', '),
    'Access-Control-Allow-Headers',
    [...CLIENT_REQUEST_HEADERS, ...new Set(extra)].join(', '),
    'Access-Control-Max-Age',
    String(PREFLIGHT_MAX_AGE_SECONDS),
  ];

  if (origins.any) {
    const response = ['Access-Control-Allow-Origin', '*', 'Access-Control-Expose-Headers', expose];
    const preflight = ['Access-Control-Allow-Origin', '*', ...preflightCommon];
    return {
      // Sent whatever the request's Origin, so a shared cache can hand any stored answer to a browser.
      appendResponseHeaders(head) {
        head.push(...response);
      },
      preflightHeaders: () => [...preflight],
      withoutOrigin: response,
    };
  }

  return {
    appendResponseHeaders(head, origin) {
      head.push('Vary', 'Origin');
      if (origin !== undefined && origins.allows(origin)) {
        head.push('Access-Control-Allow-Origin', origin, 'Access-Control-Allow-Credentials', 'true', 'Access-Control-Expose-Headers', expose);
      }
    },
    preflightHeaders(origin) {
      if (origin === undefined || !origins.allows(origin)) return ['Vary', 'Origin'];
      return ['Vary', 'Origin', 'Access-Control-Allow-Origin', origin, 'Access-Control-Allow-Credentials', 'true', ...preflightCommon];
    },
    withoutOrigin: [],
  };
}

/** A CORS preflight: OPTIONS naming the method the page wants to use. */
export function isPreflight(method: string | undefined, requestMethod: string | string[] | undefined): boolean {
  return method === 'OPTIONS' && requestMethod !== undefined;
}

/**
 * The Koa side: a preflight is answered here (204), before authentication and routing, since a
 * browser never sends credentials with one; every other answer, errors included, gets the
 * response headers before the rest of the chain runs (errors.ts keeps headers set earlier).
 */
export function corsMiddleware(policy: CorsPolicy): Middleware<AppState> {
  return async (ctx, next) => {
    const origin = ctx.req.headers.origin;
    const preflight = isPreflight(ctx.method, ctx.req.headers['access-control-request-method']);
    const head = preflight ? policy.preflightHeaders(origin) : [];
    if (!preflight) policy.appendResponseHeaders(head, origin);
    for (let i = 0; i < head.length; i += 2) {
      // Vary merges with what a route may add; the others are ours alone.
      if (head[i] === 'Vary') ctx.vary(head[i + 1]!);
      else ctx.set(head[i]!, head[i + 1]!);
    }
    if (preflight) {
      ctx.status = 204;
      return;
    }
    await next();
  };
}
