/**
 * The one browser-session mechanism of the session-compatible methods (oidc, code_host):
 *
 * 1. Login state. `beginLogin` makes a random state (32 bytes, base64url) for the provider URL
 *    and seals it, with the per-login data a method needs back at the callback (PKCE verifier,
 *    nonce, redirect address), the method, the provider and the expiry (`session.state_lifetime`),
 *    into the short-lived HttpOnly `svc_client_state` cookie (src/auth/login-state.ts: AES-256-GCM
 *    under a key every process and replica of the same configuration derives alike). Nothing is
 *    kept in memory: the callback may reach any worker or replica. `finishLogin` opens the cookie,
 *    requires the callback's `state` to equal the sealed one (the login was started in this
 *    browser), the method and provider to match and the expiry not to have passed, and hands
 *    the data back.
 *    Single use: the callback drops the cookie (on success through `issue`, on a refusal after the
 *    state matched through `clearStateCookie`), so the browser cannot present it again. A replayed
 *    callback carrying a copy of the old cookie passes these checks until the expiry, but still
 *    fails at the provider, which redeems an authorization code once (and, with PKCE, only
 *    with the verifier of the login that asked for it).
 * 2. Issuing a session. `issue` creates the authentication record through AuthService (method,
 *    metadata, expiry `session.token_lifetime`) and answers with the `svc_client_token` cookie
 *    (HttpOnly, SameSite=Lax, Secure per `session.secure`, Domain per `session.domain` when that is
 *    a dotted host name, host-only otherwise (src/auth/cookies.ts), Path=/, Max-Age and Expires per
 *    the token lifetime), drops the state cookie, and
 *    redirects to the UI root (`/` under `X-Forwarded-Prefix`).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Code, VexilError } from '../errors.js';
import type { AuthenticationConfig } from '../config/types.js';
import { trimSlashes } from '../http/url.js';
import { withForwardedPrefix } from '../http/forwarded-prefix.js';
import type { AppRouterContext } from '../http/context.js';
import { sessionCookie, type CookieAttributes } from './cookies.js';
import { csrfCookie } from './csrf.js';
import { sealLoginState, unsealLoginState, type LoginData } from './login-state.js';
import type { AuthService, Created } from './service.js';
import { CLIENT_TOKEN_COOKIE, STATE_COOKIE, type Clock, type Method } from './types.js';

const STATE_BYTES = 32;

export type { LoginData } from './login-state.js';

export interface SessionsOptions {
  service: AuthService;
  session: AuthenticationConfig['session'];
  clock: Clock;
  /** The login state sealing key: `loginStateKey(config.authentication)` (src/auth/login-state.ts). */
  stateKey: Buffer;
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

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

export class Sessions {
  private readonly service: AuthService;
  private readonly session: AuthenticationConfig['session'];
  private readonly clock: Clock;
  private readonly stateKey: Buffer;

  constructor(opts: SessionsOptions) {
    this.service = opts.service;
    this.session = opts.session;
    this.clock = opts.clock;
    this.stateKey = opts.stateKey;
  }

  beginLogin(method: Method, provider: string, data: LoginData): BegunLogin {
    const now = this.clock();
    const lifetime = this.session.state_lifetime;
    const state = randomBytes(STATE_BYTES).toString('base64url');
    const sealed = sealLoginState(this.stateKey, { state, method, provider, expiresAt: now + lifetime, data: { ...data } });
    return { state, cookie: this.stateCookie(sealed, lifetime, now) };
  }

  /**
   * The data of the login this callback ends; 401 when the state or the cookie is missing, the
   * cookie is not a login state sealed under this configuration's key, the state differs from the
   * sealed one, the login belongs to another method or provider, or it expired. These refusals
   * leave the cookie alone: a callback that is not this browser's login must not end the login
   * it has in progress.
   */
  finishLogin(input: FinishLoginInput): LoginData {
    const { state, cookie, label } = input;
    if (state === undefined || state === '' || cookie === undefined || cookie === '') {
      throw new VexilError(Code.Unauthenticated, `${label}: missing state parameter`);
    }
    const login = unsealLoginState(this.stateKey, cookie);
    if (login === undefined) throw new VexilError(Code.Unauthenticated, `${label}: invalid login state, please log in again`);
    if (!sameString(state, login.state) || login.method !== input.method || login.provider !== input.provider) {
      throw new VexilError(Code.Unauthenticated, `${label}: unexpected state parameter`);
    }
    if (login.expiresAt < this.clock()) throw new VexilError(Code.Unauthenticated, `${label}: expired login state, please log in again`);
    return login.data;
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
}

export { withForwardedPrefix };

/** Ends a successful callback: the session cookies, then 302 to the UI root (reference §2.7 step 4). */
export function respondWithSession(ctx: AppRouterContext, issued: IssuedSession): void {
  ctx.set('Set-Cookie', issued.cookies);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = 302;
  ctx.set('Location', withForwardedPrefix(ctx.get('X-Forwarded-Prefix'), '/'));
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = 'logged in\n';
}
