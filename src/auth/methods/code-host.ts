/**
 * Code-host login: the OAuth 2.0 web flow of GitHub and GitHub Enterprise (session compatible;
 * reference §2.8). The code host's API is ../code-host/api.ts; who may log in is
 * ../code-host/access.ts; the state cookie and the session are src/auth/session.ts.
 *
 * - `GET /auth/v1/method/code_host/authorize` → `{"authorizeUrl": ...}` at `{server_url}/login/oauth/authorize`
 *   with a fresh state bound to the `svc_client_state` cookie (single use) and, with `use_pkce`
 *   (default true; GitHub supports PKCE since July 2025), a fresh S256 verifier for every login.
 * - `GET /auth/v1/method/code_host/callback` checks the state against the cookie, exchanges the
 *   code at `{server_url}/login/oauth/access_token`, reads the user (`{api_url}/user`; with the
 *   `user:email` or `user` scope the primary verified address from `/user/emails`; with `read:org`
 *   the organizations and teams), applies `allowed_organizations` / `allowed_teams`, and issues
 *   the session (cookie, redirect to the UI root). A user the rule refuses gets 403 with the reason
 *   (JSON, or a page when the browser prefers HTML).
 * - Flipt's paths `/auth/v1/method/github/{authorize,callback}` are the same flow. The callback
 *   address sent to the code host is the one of the path the login started on, so an OAuth app
 *   registered for Flipt's `/github/callback` keeps working.
 *
 * The access token is used for the API calls of the callback; with `allowed_organizations` set it
 * is also held in memory for the session's memberships re-reads (../code-host/recheck.ts). It is
 * never stored, logged or put in an error, nor is the client secret.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Code, VexilError, codeHostUnavailable } from '../../errors.js';
import type { AppRouterContext } from '../../http/context.js';
import { sendJson } from '../../http/respond.js';
import { trimTrailingCharacter } from '../../text.js';
import { codeHostMetadata, decideAccess, needsMemberships, type Memberships } from '../code-host/access.js';
import { CodeHostError, createCodeHostClient, type CodeHostUser } from '../code-host/api.js';
import { MembershipRecheck } from '../code-host/recheck.js';
import { AUDIT_TYPES } from '../audit.js';
import { respondWithSession } from '../session.js';
import { STATE_COOKIE } from '../types.js';
import type { AuthMethod, DescribeContext, MethodDeps } from './types.js';

const CALLBACK_LABEL = 'handling code host callback';

/** The vexil paths and Flipt's; the first is the one `GET /auth/v1/method` lists. */
export const CODE_HOST_PATHS = ['/auth/v1/method/code_host', '/auth/v1/method/github'] as const;

/** Scopes that let a token read the account's private email addresses. */
const EMAIL_SCOPES = ['user:email', 'user'];

export function createCodeHostMethod(deps: MethodDeps): AuthMethod {
  const cfg = deps.config.methods.code_host;
  const redirectBase = trimTrailingCharacter(cfg.redirect_address ?? '', '/');
  const api = createCodeHostClient({
    serverUrl: cfg.server_url,
    apiUrl: cfg.api_url,
    clientId: cfg.client_id ?? '',
    clientSecret: cfg.client_secret ?? '',
  });
  const policy = { allowedOrganizations: cfg.allowed_organizations, allowedTeams: cfg.allowed_teams };
  const readsMemberships = cfg.scopes.includes('read:org');
  const memberships = new MembershipRecheck({ api, policy, intervalMs: cfg.recheck_interval, clock: deps.clock, logger: deps.logger });

  if (Object.keys(cfg.allowed_teams).length > 0) {
    // Flipt's rule: with allowed_teams set, an allowed organization without a teams entry admits nobody.
    const withTeams = new Set(Object.keys(cfg.allowed_teams).map((o) => o.toLowerCase()));
    const closed = cfg.allowed_organizations.filter((o) => !withTeams.has(o.toLowerCase()));
    if (closed.length > 0) {
      deps.logger.warn(
        { organizations: closed },
        'authentication.methods.code_host: these allowed_organizations have no allowed_teams entry, so none of their members can log in (list their teams in allowed_teams)',
      );
    }
  }

  const refuse = (ctx: AppRouterContext, code: Code, reason: string, extra: Record<string, unknown> = {}): VexilError => {
    ctx.state.log.info({ reason, ...extra }, 'code host login refused');
    return new VexilError(code, `${CALLBACK_LABEL}: ${reason}`, { headers: { 'Set-Cookie': deps.sessions.clearStateCookie() } });
  };

  /** A failure talking to the code host: its own refusal of the code is 401, anything else 503. */
  const codeHostFailure = (ctx: AppRouterContext, err: unknown): VexilError => {
    if (!(err instanceof CodeHostError)) throw err;
    if (err.kind === 'refused') return refuse(ctx, Code.Unauthenticated, `the code host refused the login (${err.oauthError ?? 'error'})`);
    ctx.state.log.warn({ error: err.message, kind: err.kind }, 'code host login failed: the code host did not answer as expected');
    return codeHostUnavailable(deps.sessions.clearStateCookie());
  };

  const authorize = (base: string) => (ctx: AppRouterContext) => {
    const redirectUri = `${redirectBase}${base}/callback`;
    // A fresh PKCE verifier per login, sealed with the state in the state cookie (encrypted: the browser cannot read it).
    const verifier = cfg.use_pkce ? randomBytes(32).toString('base64url') : undefined;
    const begun = deps.sessions.beginLogin('METHOD_CODE_HOST', '', { redirectUri, ...(verifier !== undefined ? { verifier } : {}) });
    ctx.set('Set-Cookie', begun.cookie);
    ctx.set('Cache-Control', 'no-store');
    const codeChallenge = verifier !== undefined ? createHash('sha256').update(verifier).digest('base64url') : undefined;
    sendJson(ctx, {
      authorizeUrl: api.authorizeUrl({ redirectUri, scopes: cfg.scopes, state: begun.state, ...(codeChallenge !== undefined ? { codeChallenge } : {}) }),
    });
  };

  /**
   * The user, their email, and their memberships when the token may read them (`read:org`
   * requested and, when the code host says which scopes it granted, granted).
   */
  const readAccount = async (token: string, granted: readonly string[] | undefined) => {
    const scopes = granted ?? cfg.scopes;
    const orgs = readsMemberships && scopes.includes('read:org');
    const user: CodeHostUser = await api.user(token);
    const [verified, organizations, teams] = await Promise.all([
      EMAIL_SCOPES.some((s) => scopes.includes(s)) ? api.primaryVerifiedEmail(token) : Promise.resolve(undefined),
      orgs ? api.organizations(token) : Promise.resolve([]),
      orgs ? api.teams(token) : Promise.resolve([]),
    ]);
    const memberships: Memberships | undefined = orgs ? { organizations, teams } : undefined;
    return { user, email: verified ?? user.email, memberships };
  };

  const callback = async (ctx: AppRouterContext): Promise<void> => {
    // The browser navigates here: a refusal is shown as a page when it asks for HTML.
    ctx.state.errorPage = true;
    const login = deps.sessions.finishLogin({
      method: 'METHOD_CODE_HOST',
      provider: '',
      state: ctx.state.query.get('state'),
      cookie: ctx.cookies.get(STATE_COOKIE),
      label: CALLBACK_LABEL,
    });
    const hostError = ctx.state.query.get('error');
    if (hostError !== undefined) {
      const word = /^[a-z_]{1,64}$/.test(hostError) ? hostError : 'error';
      throw refuse(ctx, Code.Unauthenticated, `the code host refused the login (${word})`);
    }
    const code = ctx.state.query.get('code');
    if (code === undefined || code === '') throw refuse(ctx, Code.Unauthenticated, 'missing code parameter');

    let account: Awaited<ReturnType<typeof readAccount>>;
    let accessToken: string;
    try {
      const grant = await api.exchangeCode(code, login.redirectUri!, login.verifier);
      accessToken = grant.accessToken;
      account = await readAccount(grant.accessToken, grant.scopes);
    } catch (err) {
      throw codeHostFailure(ctx, err);
    }
    const { user, email, memberships: found } = account;
    if (found === undefined && needsMemberships(policy)) {
      throw refuse(ctx, Code.PermissionDenied, 'the code host did not grant the read:org scope, needed to check organization membership', {
        login: user.login,
      });
    }
    const decision = decideAccess(policy, user.login, found ?? { organizations: [], teams: [] });
    if (!decision.allowed) throw refuse(ctx, Code.PermissionDenied, decision.reason, { login: user.login });

    const metadata = codeHostMetadata(user, email, found !== undefined ? decision : undefined);
    const issued = await deps.sessions.issue('METHOD_CODE_HOST', metadata);
    const { id, expiresAt } = issued.created.authentication;
    if (needsMemberships(policy) && expiresAt !== undefined) memberships.hold(id, user.login, accessToken, expiresAt);
    ctx.state.log.info(
      { authenticationId: issued.created.authentication.id, method: 'METHOD_CODE_HOST', login: user.login },
      'code host session created',
    );
    deps.audit.record({ type: AUDIT_TYPES.login, subject: issued.created.authentication, request: ctx.req, log: ctx.state.log });
    respondWithSession(ctx, issued);
  };

  return {
    method: 'METHOD_CODE_HOST',
    configKey: 'code_host',
    sessionCompatible: true,
    describe(ctx: DescribeContext) {
      return {
        authorize_url: ctx.prefixed(`${CODE_HOST_PATHS[0]}/authorize`),
        callback_url: ctx.prefixed(`${CODE_HOST_PATHS[0]}/callback`),
      };
    },
    register(router) {
      for (const base of CODE_HOST_PATHS) {
        router.get(`${base}/authorize`, authorize(base));
        router.get(`${base}/callback`, callback);
      }
    },
    recheck: (authentication) => memberships.check(authentication),
    close() {
      memberships.clear();
      return Promise.resolve();
    },
  };
}
