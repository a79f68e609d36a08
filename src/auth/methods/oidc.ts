/**
 * OIDC login (session compatible; reference §2.7), with openid-client for discovery, the
 * authorization URL, the code exchange and the ID token checks.
 *
 * - Providers by name (`authentication.methods.oidc.providers.<name>`). Discovery runs at start
 *   and is cached; a provider that cannot be discovered does not stop vexil: its authorize and
 *   callback answer 503 until a later request discovers it. A failed exchange that may come from
 *   stale metadata (network, keys) drops the cache so the next login discovers again.
 * - `GET /auth/v1/method/oidc/{provider}/authorize` → `{"authorizeUrl": ...}` with a fresh state
 *   (bound to the `svc_client_state` cookie, src/auth/session.ts), a fresh nonce, and with
 *   `use_pkce` a fresh S256 verifier for every login (Flipt uses one per process).
 * - `GET .../callback` checks the state against the cookie (single use), exchanges the code
 *   (with the verifier), and has openid-client verify the ID token: issuer, audience, expiry
 *   (against vexil's clock), nonce, and its signature with the provider's JWKS
 *   (enableNonRepudiationChecks; openid-client skips that by default for token-endpoint answers).
 *   Then `email_verified: false` is refused; with `email_matches` set, the email must be verified
 *   (`email_verified: true`, a missing claim is refused) and match; then a session is issued.
 *
 * Nothing secret leaves this file: the client secret, the code, the tokens and the ID token are
 * never logged or put in an error; refusals log openid-client's error code and message (which
 * name the failed check, not the values).
 */
import type * as client from 'openid-client';
import { Code, VexilError, notFound, oidcProviderUnavailable } from '../../errors.js';
import { trimTrailingCharacter } from '../../text.js';
import { compileEmailMatches, emailProblem } from '../email-match.js';
import type { AppRouterContext } from '../../http/context.js';
import { sendJson } from '../../http/respond.js';
import { AUDIT_TYPES } from '../audit.js';
import { respondWithSession } from '../session.js';
import { OIDC_METADATA, STATE_COOKIE, type Authentication } from '../types.js';
import type { AuthMethod, DescribeContext, MethodDeps } from './types.js';

/** Seconds one discovery or token request may take. */
const PROVIDER_TIMEOUT_S = 10;
/** After a failed discovery, logins answer 503 at once for this long (ms) before it is tried again. */
export const DISCOVERY_RETRY_MS = 5_000;

/**
 * openid-client (with jose and oauth4webapi under it) is imported when a provider is first used,
 * not with this module: every `vexil serve` imports the method catalogue, and loading the library
 * costs 40-50 ms of CPU and a few MiB at each start without OIDC (bench/RESULTS.md, "Load time
 * back"). `loaded` is set once the import settled; the synchronous uses run only after a provider's
 * configuration() awaited it.
 */
let loaded: typeof client | undefined;
let loading: Promise<typeof client> | undefined;
function openidClient(): Promise<typeof client> {
  loading ??= import('openid-client').then((m) => (loaded = m));
  return loading;
}

const CALLBACK_LABEL = 'handling OIDC callback';

type ProviderConfig = MethodDeps['config']['methods']['oidc']['providers'][string];

export function oidcPaths(name: string) {
  const base = `/auth/v1/method/oidc/${encodeURIComponent(name)}`;
  return { authorize: `${base}/authorize`, callback: `${base}/callback` };
}

/** One configured provider: its discovered metadata (cached) and the settings of its logins. */
class Provider {
  private discovered: Promise<client.ServerMetadata> | undefined;
  /** When discovery last failed (vexil's clock); cleared by a success. */
  private failedAt: number | undefined;
  private jwksCache: client.ExportedJWKSCache | undefined;
  readonly redirectUri: string;
  readonly scope: string;

  constructor(
    readonly name: string,
    readonly config: ProviderConfig,
    private readonly deps: MethodDeps,
  ) {
    this.redirectUri = `${trimTrailingCharacter(config.redirect_address, '/')}${oidcPaths(name).callback}`;
    this.scope = [...new Set(['openid', ...config.scopes])].join(' ');
  }

  private get insecure(): boolean {
    return this.config.issuer_url.startsWith('http:');
  }

  /** The provider's metadata, discovered once; a failed discovery is retried on the next call. */
  metadata(): Promise<client.ServerMetadata> {
    const unavailable = () => oidcProviderUnavailable(this.name);
    // A provider that just failed is not asked again at once: a burst of logins while it is down
    // costs neither a request each nor a log line each.
    if (this.discovered === undefined && this.failedAt !== undefined && this.deps.clock() - this.failedAt < DISCOVERY_RETRY_MS) {
      return Promise.reject(unavailable());
    }
    if (this.discovered === undefined) {
      const issuer = new URL(this.config.issuer_url);
      const attempt = openidClient()
        .then((client) =>
          client.discovery(issuer, this.config.client_id, undefined, undefined, {
            execute: this.insecure ? [client.allowInsecureRequests] : [],
            timeout: PROVIDER_TIMEOUT_S,
          }),
        )
        .then((c) => {
          this.failedAt = undefined;
          this.deps.logger.info({ provider: this.name, issuer: c.serverMetadata().issuer }, 'oidc provider discovered');
          return c.serverMetadata();
        });
      this.discovered = attempt;
      attempt.catch((err: unknown) => {
        if (this.discovered === attempt) this.discovered = undefined;
        this.failedAt = this.deps.clock();
        this.deps.logger.warn({ provider: this.name, issuer: this.config.issuer_url, error: safeError(err) }, 'oidc provider discovery failed');
      });
    }
    return this.discovered.catch(() => {
      throw unavailable();
    });
  }

  /** Forget the discovered metadata and keys (after a failure that stale ones may explain). */
  invalidate(): void {
    this.discovered = undefined;
    this.jwksCache = undefined;
  }

  /**
   * A Configuration for one request. Built per use so its clock follows vexil's injected clock
   * (ID token expiry is checked at vexil's "now"); the JWKS cache is carried across builds.
   */
  async configuration(): Promise<client.Configuration> {
    const metadata = await this.metadata();
    const client = await openidClient();
    const skew = Math.round((this.deps.clock() - Date.now()) / 1000);
    const conf = new client.Configuration(
      metadata,
      this.config.client_id,
      { client_secret: this.config.client_secret, [client.clockSkew]: skew },
      client.ClientSecretBasic(this.config.client_secret),
    );
    if (this.insecure) client.allowInsecureRequests(conf);
    client.enableNonRepudiationChecks(conf);
    conf.timeout = PROVIDER_TIMEOUT_S;
    if (this.jwksCache !== undefined) client.setJwksCache(conf, this.jwksCache);
    return conf;
  }

  keepJwks(conf: client.Configuration): void {
    this.jwksCache = loaded!.getJwksCache(conf);
  }
}

/** What may be logged of an openid-client / network failure: its code and message, nothing attached. */
function safeError(err: unknown): { code?: string; message: string } {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { ...(typeof code === 'string' ? { code } : {}), message: err.message.slice(0, 300) };
  }
  return { message: 'unknown error' };
}

/** Failures that stale discovery metadata or keys may explain (then discovery runs again). */
function mayBeStale(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return (
    err instanceof TypeError || // fetch: network failure
    code === 'OAUTH_TIMEOUT' ||
    code === 'OAUTH_JWKS_NO_MATCHING_KEY' ||
    code === 'OAUTH_JWS_SIGNATURE_VERIFICATION_FAILED' ||
    code === 'OAUTH_RESPONSE_IS_NOT_CONFORM'
  );
}

/**
 * Why a login's email refuses it, or undefined: `email_verified: false` always; with
 * `email_matches` set, the email must be verified (`email_verified: true`; a missing claim is not
 * a verification) and match one pattern.
 */
function loginEmailProblem(email: string | undefined, verified: unknown, matchers: readonly RegExp[]): string | undefined {
  if (verified === false || (matchers.length > 0 && verified !== true)) return 'email is not verified';
  return emailProblem(email, matchers);
}

function stringClaim(claims: Record<string, unknown>, name: string): string | undefined {
  const v = claims[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function createOidcMethod(deps: MethodDeps): AuthMethod {
  const oidc = deps.config.methods.oidc;
  const providers = new Map<string, Provider>();
  for (const [name, cfg] of Object.entries(oidc.providers)) providers.set(name, new Provider(name, cfg, deps));
  const matchers = compileEmailMatches(oidc.email_matches);

  const providerOf = (ctx: AppRouterContext, action: string): Provider => {
    const name = ctx.params.provider ?? '';
    const p = providers.get(name);
    if (p === undefined) throw notFound(`${action}: requested provider ${JSON.stringify(name)}: provider not found`);
    return p;
  };

  const refuse = (ctx: AppRouterContext, provider: string, reason: string, extra: Record<string, unknown> = {}): VexilError => {
    ctx.state.log.info({ provider, reason, ...extra }, 'oidc login refused');
    return new VexilError(Code.Unauthenticated, `${CALLBACK_LABEL}: ${reason}`, {
      headers: { 'Set-Cookie': deps.sessions.clearStateCookie() },
    });
  };

  const authorize = async (ctx: AppRouterContext): Promise<void> => {
    const p = providerOf(ctx, 'authorize');
    const conf = await p.configuration();
    const client = loaded!;
    const nonce = client.randomNonce();
    const data: Record<string, string> = { nonce };
    const params: Record<string, string> = { redirect_uri: p.redirectUri, scope: p.scope, nonce, response_type: 'code' };
    if (p.config.use_pkce) {
      const verifier = client.randomPKCECodeVerifier();
      data.verifier = verifier;
      params.code_challenge = await client.calculatePKCECodeChallenge(verifier);
      params.code_challenge_method = 'S256';
    }
    const begun = deps.sessions.beginLogin('METHOD_OIDC', p.name, data);
    params.state = begun.state;
    ctx.set('Set-Cookie', begun.cookie);
    ctx.set('Cache-Control', 'no-store');
    sendJson(ctx, { authorizeUrl: client.buildAuthorizationUrl(conf, params).href });
  };

  const callback = async (ctx: AppRouterContext): Promise<void> => {
    const p = providerOf(ctx, 'callback');
    const state = ctx.state.query.get('state');
    const login = deps.sessions.finishLogin({
      method: 'METHOD_OIDC',
      provider: p.name,
      state,
      cookie: ctx.cookies.get(STATE_COOKIE),
      label: CALLBACK_LABEL,
    });
    const providerError = ctx.state.query.get('error');
    if (providerError !== undefined) throw refuse(ctx, p.name, `the provider refused the login (${providerError.slice(0, 100)})`);

    const conf = await p.configuration();
    const client = loaded!;
    const currentUrl = new URL(p.redirectUri);
    currentUrl.search = ctx.querystring;
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(conf, currentUrl, {
        expectedState: state,
        expectedNonce: login.nonce!,
        idTokenExpected: true,
        ...(login.verifier !== undefined ? { pkceCodeVerifier: login.verifier } : {}),
      });
      p.keepJwks(conf);
      claims = (tokens.claims() ?? {}) as Record<string, unknown>;
    } catch (err) {
      if (mayBeStale(err)) p.invalidate();
      throw refuse(ctx, p.name, 'the code exchange or the ID token check failed', { error: safeError(err) });
    }

    const email = stringClaim(claims, 'email');
    const problem = loginEmailProblem(email, claims.email_verified, matchers);
    if (problem !== undefined) throw refuse(ctx, p.name, problem);

    const metadata: Record<string, string> = Object.create(null) as Record<string, string>;
    metadata[OIDC_METADATA.provider] = p.name;
    for (const [key, claim] of [
      [OIDC_METADATA.email, 'email'],
      [OIDC_METADATA.name, 'name'],
      [OIDC_METADATA.picture, 'picture'],
      [OIDC_METADATA.sub, 'sub'],
    ] as const) {
      const v = stringClaim(claims, claim);
      if (v !== undefined) metadata[key] = v;
    }
    if (typeof claims.email_verified === 'boolean') metadata[OIDC_METADATA.emailVerified] = String(claims.email_verified);

    const issued = await deps.sessions.issue('METHOD_OIDC', metadata);
    ctx.state.log.info({ authenticationId: issued.created.authentication.id, method: 'METHOD_OIDC', provider: p.name }, 'oidc session created');
    deps.audit.record({ type: AUDIT_TYPES.login, subject: issued.created.authentication, request: ctx.req, log: ctx.state.log });
    respondWithSession(ctx, issued);
  };

  return {
    method: 'METHOD_OIDC',
    configKey: 'oidc',
    sessionCompatible: true,
    describe(ctx: DescribeContext) {
      const listed: Record<string, { authorize_url: string; callback_url: string }> = {};
      for (const name of Object.keys(oidc.providers).sort()) {
        const paths = oidcPaths(name);
        listed[name] = { authorize_url: ctx.prefixed(paths.authorize), callback_url: ctx.prefixed(paths.callback) };
      }
      return { providers: listed };
    },
    register(router) {
      router.get('/auth/v1/method/oidc/:provider/authorize', authorize);
      router.get('/auth/v1/method/oidc/:provider/callback', callback);
    },
    recheck(authentication: Authentication) {
      // email_matches holds on every request, as in Flipt (reference §2.11): a session made before
      // the list changed stops working when its email no longer matches or was not verified.
      const { metadata } = authentication;
      const verified = metadata[OIDC_METADATA.emailVerified];
      return loginEmailProblem(metadata[OIDC_METADATA.email], verified === undefined ? undefined : verified === 'true', matchers);
    },
    start() {
      // Discover every provider now; a failure is logged and retried by the next login.
      for (const p of providers.values()) p.metadata().catch(() => undefined);
    },
  };
}
