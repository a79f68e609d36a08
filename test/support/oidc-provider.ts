/**
 * A real OpenID provider on loopback (npm `oidc-provider`, testing-recipes §4): discovery, JWKS,
 * the authorization code flow with optional or required PKCE, RS256 ID tokens carrying email,
 * email_verified, name and picture (conformIdTokenClaims off, as Flipt-style relying parties read
 * ID token claims only). Logins need no form: the interaction auto-logs in `nextLogin`; with
 * `loginForm` the provider shows a sign-in form instead (for a browser to fill), and logs in the
 * account typed in it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export interface Account {
  email?: string;
  email_verified?: boolean;
  name?: string;
  picture?: string;
}

export interface OidcProviderOptions {
  /** Listen on this port (e.g. one picked before vexil starts, for the provider-down case). */
  port?: number;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  requirePkce: boolean;
  accounts: Record<string, Account>;
  /** ID token lifetime in seconds (default 600). */
  idTokenTtl?: number;
  /** Show a sign-in form (account field, "Sign in" button) instead of logging in `nextLogin` by itself. */
  loginForm?: boolean;
}

/** The provider's sign-in page for a browser: posts the account to the same interaction address. */
function loginFormPage(uid: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test provider sign-in</title><link rel="icon" href="data:,"></head><body><main>
<h1>Test provider</h1><form method="post" action="/interaction/${encodeURIComponent(uid)}">
<label for="account">Account</label> <input id="account" name="account" autocomplete="username">
<button type="submit">Sign in</button></form></main></body></html>`;
}

async function formField(req: http.IncomingMessage, name: string): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return new URLSearchParams(body).get(name) ?? '';
}

export interface TestOidcProvider {
  readonly issuer: string;
  /** The account the next login is made as. */
  nextLogin: string;
  close(): Promise<void>;
}

export async function startOidcProvider(opts: OidcProviderOptions): Promise<TestOidcProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const state: TestOidcProvider = {
    issuer,
    nextLogin: Object.keys(opts.accounts)[0]!,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const provider = new Provider(issuer, {
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'k1' }] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: opts.idTokenTtl ?? 600, AuthorizationCode: 60, RefreshToken: 86400 },
    clients: [
      {
        client_id: opts.clientId,
        client_secret: opts.clientSecret,
        redirect_uris: [opts.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => opts.requirePkce },
    scopes: ['openid', 'email', 'profile'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture'] },
    conformIdTokenClaims: false,
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, ...(opts.accounts[id] ?? {}) }) }),
    interactions: { url: (_ctx: unknown, i: { uid: string }) => `/interaction/${i.uid}` },
    features: { devInteractions: { enabled: false } },
    cookies: { keys: ['test-cookie-key'] },
    // No consent screen: every requested scope and claim is granted.
    loadExistingGrant: async (ctx: any) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope(ctx.oidc.params.scope || 'openid');
      grant.addOIDCClaims(['email', 'email_verified', 'name', 'picture']);
      await grant.save();
      return grant;
    },
  });
  const callback = provider.callback();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!req.url?.startsWith('/interaction/')) {
      callback(req, res);
      return;
    }
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      let accountId = state.nextLogin;
      if (opts.loginForm && details.prompt.name === 'login') {
        if (req.method !== 'POST') {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end(loginFormPage(details.uid));
          return;
        }
        accountId = await formField(req, 'account');
      }
      const result = details.prompt.name === 'login' ? { login: { accountId } } : {};
      await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
    })().catch(() => {
      res.statusCode = 500;
      res.end();
    });
  });
  return state;
}

/** A browser's cookies, by name (every test server is on 127.0.0.1, where ports share cookies). */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  /** Takes the Set-Cookie headers of a response (Max-Age=0 removes). */
  take(res: Response): string[] {
    const all = res.headers.getSetCookie();
    for (const c of all) {
      const [pair, ...attrs] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      if (attrs.some((a) => a.trim().toLowerCase() === 'max-age=0') || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return all;
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Follows the provider's redirects from `authorizeUrl` like a browser until one leaves for
 * `redirectUri`; returns that URL (with code, state, iss).
 */
export async function followToRedirect(authorizeUrl: string, redirectUri: string, jar: CookieJar): Promise<URL> {
  let url = authorizeUrl;
  for (let hops = 0; hops < 10; hops++) {
    if (url.startsWith(redirectUri)) return new URL(url);
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.take(res);
    await res.arrayBuffer();
    const location = res.headers.get('location');
    if (location === null) throw new Error(`provider answered ${res.status} without a redirect at ${url}`);
    url = new URL(location, url).href;
  }
  throw new Error('too many redirects at the provider');
}

/**
 * A whole browser login at vexil: authorize (vexil), the provider's redirects, then vexil's
 * callback reached as a reverse proxy would forward it. `tamper` may edit the provider URL first.
 */
export async function oidcLogin(
  vexilUrl: string,
  provider: string,
  redirectUri: string,
  jar: CookieJar,
  tamper?: (url: URL) => void,
): Promise<{ authorizeUrl: URL; redirected: URL; callback: Response; body: string }> {
  const res = await fetch(`${vexilUrl}/auth/v1/method/oidc/${provider}/authorize`, { headers: { cookie: jar.header() } });
  jar.take(res);
  if (res.status !== 200) throw new Error(`authorize answered ${res.status}`);
  const authorizeUrl = new URL(((await res.json()) as { authorizeUrl: string }).authorizeUrl);
  tamper?.(authorizeUrl);
  const redirected = await followToRedirect(authorizeUrl.href, redirectUri, jar);
  const callback = await fetch(`${vexilUrl}${redirected.pathname}${redirected.search}`, { redirect: 'manual', headers: { cookie: jar.header() } });
  jar.take(callback);
  return { authorizeUrl, redirected, callback, body: await callback.text() };
}
