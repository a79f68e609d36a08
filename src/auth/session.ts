/**
 * The one browser-session mechanism of the session-compatible methods (oidc, code_host):
 *
 * 1. Login state. `beginLogin` makes a random state (32 bytes, base64url) that goes into the
 *    provider URL and into the short-lived HttpOnly `svc_client_state` cookie
 *    (`session.state_lifetime`). The per-login data a method needs back at the callback (PKCE
 *    verifier, nonce, the provider name) stays in this process, keyed by the state, so nothing a
 *    browser sends can forge or alter it. `finishLogin` takes the state from the callback's query,
 *    requires the cookie to carry the same value (the login was started in this browser), and hands
 *    the data back once: a state is single use.
 * 2. Issuing a session. `issue` creates the authentication record through AuthService (method,
 *    metadata, expiry `session.token_lifetime`) and answers with the `svc_client_token` cookie
 *    (HttpOnly, SameSite=Lax, Secure per `session.secure`, Domain per `session.domain` but none for
 *    localhost, Path=/, Max-Age and Expires per the token lifetime), drops the state cookie, and
 *    redirects to the UI root (`/` under `X-Forwarded-Prefix`).
 *
 * Pending logins live in memory: a login must end on the replica that started it (sticky
 * sessions behind a load balancer), and a restart forgets logins in progress (the user clicks
 * "log in" again). At most MAX_PENDING_LOGINS are kept; past that the oldest are dropped, so a
 * flood of authorize calls costs bounded memory (and may only make a flooded login start over).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Code, VexilError } from '../errors.js';
import type { AuthenticationConfig } from '../config/types.js';
import { trimSlashes } from '../http/url.js';
import type { AppRouterContext } from '../server/context.js';
import { sessionCookie, type CookieAttributes } from './cookies.js';
import { csrfCookie } from './csrf.js';
import type { AuthService, Created } from './service.js';
import { CLIENT_TOKEN_COOKIE, STATE_COOKIE, type Clock, type Method } from './types.js';

export const MAX_PENDING_LOGINS = 10_000;
const STATE_BYTES = 32;

/** What a method keeps for the callback of one login (verifier, nonce...). */
export type LoginData = Readonly<Record<string, string>>;

export interface SessionsOptions {
  service: AuthService;
  session: AuthenticationConfig['session'];
  clock: Clock;
}

export interface BegunLogin {
  /** The `state` parameter for the provider URL. */
  state: string;
  /** The Set-Cookie value binding the state to this browser. */
  cookie: string;
}

export interface FinishLoginInput {
  method: Method;
  /** The provider name for OIDC, '' for a method without providers. */
  provider: string;
  /** The callback's `state` query parameter. */
  state: string | undefined;
  /** The `svc_client_state` cookie the browser sent. */
  cookie: string | undefined;
  /** Start of the refusal messages, e.g. `handling OIDC callback` (Flipt's wording). */
  label: string;
}

export interface IssuedSession {
  created: Created;
  /** Set-Cookie values: the session token, the cleared state, the CSRF token when csrf.key is set. */
  cookies: string[];
}

interface PendingLogin {
  method: Method;
  provider: string;
  data: LoginData;
  expiresAt: number;
}

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

export class Sessions {
  private readonly service: AuthService;
  private readonly session: AuthenticationConfig['session'];
  private readonly clock: Clock;
  /** Insertion order = age order (Map), which the eviction relies on. */
  private readonly pending = new Map<string, PendingLogin>();

  constructor(opts: SessionsOptions) {
    this.service = opts.service;
    this.session = opts.session;
    this.clock = opts.clock;
  }

  /** Pending logins kept right now (for tests and the bound). */
  get pendingCount(): number {
    return this.pending.size;
  }

  beginLogin(method: Method, provider: string, data: LoginData): BegunLogin {
    const now = this.clock();
    this.prune(now);
    while (this.pending.size >= MAX_PENDING_LOGINS) {
      const oldest = this.pending.keys().next().value as string;
      this.pending.delete(oldest);
    }
    const state = randomBytes(STATE_BYTES).toString('base64url');
    this.pending.set(state, { method, provider, data: { ...data }, expiresAt: now + this.session.state_lifetime });
    return { state, cookie: this.stateCookie(state, this.session.state_lifetime, now) };
  }

  /**
   * The data of the login this callback ends; 401 when the state is missing, differs from the
   * cookie, is unknown, was used already, expired, or belongs to another method or provider.
   */
  finishLogin(input: FinishLoginInput): LoginData {
    const { state, cookie, label } = input;
    if (state === undefined || state === '' || cookie === undefined || cookie === '') {
      throw new VexilError(Code.Unauthenticated, `${label}: missing state parameter`);
    }
    if (!sameString(state, cookie)) throw new VexilError(Code.Unauthenticated, `${label}: unexpected state parameter`);
    const found = this.pending.get(state);
    // Single use: whatever happens next, this state cannot end a second login.
    this.pending.delete(state);
    if (found === undefined || found.expiresAt < this.clock()) {
      throw new VexilError(Code.Unauthenticated, `${label}: unknown or expired login state, please log in again`);
    }
    if (found.method !== input.method || found.provider !== input.provider) {
      throw new VexilError(Code.Unauthenticated, `${label}: unexpected state parameter`);
    }
    return found.data;
  }

  /** Creates the session's authentication record and the cookies that hand it to the browser. */
  async issue(method: Method, metadata: Readonly<Record<string, string>>): Promise<IssuedSession> {
    const now = this.clock();
    const lifetime = this.session.token_lifetime;
    const created = await this.service.create({ method, metadata, expiresAt: now + lifetime });
    const cookies = [
      sessionCookie(CLIENT_TOKEN_COOKIE, created.clientToken, this.attributes(lifetime, true), now),
      this.stateCookie('', 0, now),
    ];
    const csrfKey = this.session.csrf.key;
    if (csrfKey !== undefined) cookies.push(csrfCookie(csrfKey, created.clientToken, this.attributes(lifetime, false), now));
    return { created, cookies };
  }

  /** The Set-Cookie value that drops the state cookie (after a failed callback, for instance). */
  clearStateCookie(): string {
    return this.stateCookie('', 0, this.clock());
  }

  private stateCookie(value: string, maxAge: number, now: number): string {
    return sessionCookie(STATE_COOKIE, value, this.attributes(maxAge, true), now);
  }

  private attributes(maxAge: number, httpOnly: boolean): CookieAttributes {
    return { maxAge, httpOnly, secure: this.session.secure, domain: this.session.domain };
  }

  private prune(now: number): void {
    // Oldest first: stop at the first one still alive (lifetimes are all the same).
    for (const [state, login] of this.pending) {
      if (login.expiresAt >= now) break;
      this.pending.delete(state);
    }
  }
}

/** `X-Forwarded-Prefix` joined in front of `path` (reference §2.4); header value as received. */
export function withForwardedPrefix(prefixHeader: string | undefined, path: string): string {
  const prefix = trimSlashes((prefixHeader ?? '').trim());
  return prefix === '' ? path : `/${prefix}${path}`;
}

/** Ends a successful callback: the session cookies, then 302 to the UI root (reference §2.7 step 4). */
export function respondWithSession(ctx: AppRouterContext, issued: IssuedSession): void {
  ctx.set('Set-Cookie', issued.cookies);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = 302;
  ctx.set('Location', withForwardedPrefix(ctx.get('X-Forwarded-Prefix'), '/'));
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = 'logged in\n';
}
