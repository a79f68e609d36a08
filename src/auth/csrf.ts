/**
 * Cross-site request forgery protection for cookie-authenticated requests (reference §2.16).
 * Only requests whose credential is the `svc_client_token` cookie are checked, and only unsafe
 * ones (anything but GET, HEAD, OPTIONS); Bearer and JWT requests are never affected, since a
 * browser does not attach an Authorization header on its own.
 *
 * 1. Where the request comes from, as Go's CrossOriginProtection (Flipt ≥ 1.59.3) decides it:
 *    `Sec-Fetch-Site: same-origin` or `none` passes; any other value fails unless `Origin` is a
 *    trusted origin. Without Sec-Fetch-Site: no Origin passes (not a browser), an Origin whose
 *    host:port equals the Host header passes, a trusted Origin passes, anything else fails.
 *    Unlike Flipt this check is always on for cookie-authenticated requests (not only with
 *    csrf.key), because vexil's UI logs in with cookies.
 * 2. With `session.csrf.key` set, a double-submit token as well: the session issues a readable
 *    `svc_csrf_token` cookie holding HMAC-SHA256(csrf.key, client token), and every
 *    cookie-authenticated unsafe request must repeat it in the `X-CSRF-Token` header. A page on
 *    another site can neither read the cookie nor compute the value.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Code, VexilError } from '../errors.js';
import { sessionCookie, type CookieAttributes } from './cookies.js';

export const CSRF_COOKIE = 'svc_csrf_token';
export const CSRF_HEADER = 'x-csrf-token';

export interface CsrfConfig {
  key?: string;
  trusted_origins: readonly string[];
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The double-submit token of a session: HMAC-SHA256(csrf.key, client token), base64url. */
export function csrfToken(key: string, clientToken: string): string {
  return createHmac('sha256', key).update(clientToken, 'utf8').digest('base64url');
}

/** The readable (not HttpOnly) cookie the UI copies into the X-CSRF-Token header. */
export function csrfCookie(key: string, clientToken: string, attrs: CookieAttributes, now: number): string {
  return sessionCookie(CSRF_COOKIE, csrfToken(key, clientToken), { ...attrs, httpOnly: false }, now);
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The Origin header's `host[:port]`, or undefined for `null` or an unparsable value. */
function originHost(origin: string): string | undefined {
  try {
    const u = new URL(origin);
    return u.host === '' ? undefined : u.host;
  } catch {
    return undefined;
  }
}

/** `scheme://host[:port]` of an Origin header, as trusted_origins lists them (exact match). */
function isTrusted(origin: string, trusted: readonly string[]): boolean {
  return trusted.includes(origin);
}

/** Why this cookie-authenticated request is refused, or undefined when it may go on. */
export function csrfProblem(method: string, headers: IncomingHttpHeaders | undefined, clientToken: string, config: CsrfConfig): string | undefined {
  if (SAFE_METHODS.has(method.toUpperCase())) return undefined;
  // A path that kept no headers cannot prove where the request came from.
  if (headers === undefined) return 'cross-origin request detected: request headers unavailable';
  const site = header(headers, 'sec-fetch-site');
  const origin = header(headers, 'origin');
  if (site !== undefined && site !== '') {
    if (site !== 'same-origin' && site !== 'none' && (origin === undefined || !isTrusted(origin, config.trusted_origins))) {
      return 'cross-origin request detected from Sec-Fetch-Site header';
    }
  } else if (origin !== undefined) {
    const host = header(headers, 'host');
    const fromHere = host !== undefined && originHost(origin) === host.toLowerCase();
    if (!fromHere && !isTrusted(origin, config.trusted_origins)) {
      return 'cross-origin request detected, and/or browser is out of date: Sec-Fetch-Site is missing, and Origin does not match Host';
    }
  }
  if (config.key !== undefined) {
    const sent = header(headers, CSRF_HEADER);
    if (sent === undefined || sent === '') return 'missing CSRF token: send the svc_csrf_token cookie value in the X-CSRF-Token header';
    const want = Buffer.from(csrfToken(config.key, clientToken), 'utf8');
    const got = Buffer.from(sent, 'utf8');
    if (want.length !== got.length || !timingSafeEqual(want, got)) return 'invalid CSRF token';
  }
  return undefined;
}

/** The 403 a refused request gets (JSON through src/server/pipeline/errors.ts, like every error). */
export function csrfRefusal(reason: string): VexilError {
  return new VexilError(Code.PermissionDenied, `permission denied: ${reason}`);
}
