/**
 * The code host's side of an OAuth 2.0 login (GitHub and GitHub Enterprise shapes; reference §2.8):
 * the authorize URL, the code exchange at `{server_url}/login/oauth/access_token`, and the user
 * API at `{api_url}`: `/user`, `/user/emails`, `/user/orgs`, `/user/teams`.
 *
 * Every call has a timeout and a response-size bound, so a slow or hostile code host cannot hold a
 * login open or make vexil buffer without limit. Errors name the host and the path, never the
 * client secret or the access token (neither is ever put in a URL).
 */
import { trimTrailingCharacter } from '../../text.js';

/** Per call; Flipt uses 5 s for the API calls and none for the exchange. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Per response: a token reply or a user is a few hundred bytes; a page of 100 teams some 300 KiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** Items per page of /user/orgs, /user/teams and /user/emails (GitHub's maximum). */
const PER_PAGE = 100;
/** Pages read per list at most: 1,000 organizations or teams is far beyond any real account. */
export const MAX_PAGES = 10;

export type CodeHostErrorKind =
  /** The code host answered the exchange with an OAuth error (`bad_verification_code`...). */
  | 'refused'
  /** No answer: connection refused, reset, DNS, or the timeout. */
  | 'unreachable'
  /** An HTTP status other than the expected one. */
  | 'status'
  /** More bytes than the bound. */
  | 'too-large'
  /** Not the JSON shape the endpoint has. */
  | 'malformed';

export class CodeHostError extends Error {
  override readonly name = 'CodeHostError';
  constructor(
    readonly kind: CodeHostErrorKind,
    message: string,
    /** The HTTP status, for `status`. */
    readonly status?: number,
    /** The OAuth error code, for `refused`. */
    readonly oauthError?: string,
  ) {
    super(message);
  }
}

export interface CodeHostClientOptions {
  /** Base of `/login/oauth/...` (default https://github.com). */
  readonly serverUrl: string;
  /** Base of the user API (default https://api.github.com; Enterprise: `https://host/api/v3`). */
  readonly apiUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
  readonly fetch?: typeof fetch;
}

export interface CodeHostUser {
  readonly login: string;
  /** The numeric account id, as a decimal string. */
  readonly id: string;
  readonly name: string;
  /** The public email of the profile ("" when none is public). */
  readonly email: string;
  readonly avatarUrl: string;
}

export interface TeamMembership {
  readonly org: string;
  readonly slug: string;
}

export interface AccessGrant {
  readonly accessToken: string;
  /** The scopes the user granted, when the code host says (GitHub: comma-separated). */
  readonly scopes?: readonly string[];
}

export interface CodeHostClient {
  /** `codeChallenge`: the S256 PKCE challenge of this login's verifier, when PKCE is used. */
  authorizeUrl(opts: { redirectUri: string; scopes: readonly string[]; state: string; codeChallenge?: string }): string;
  exchangeCode(code: string, redirectUri: string, codeVerifier?: string): Promise<AccessGrant>;
  user(accessToken: string): Promise<CodeHostUser>;
  /** The primary verified address from /user/emails; undefined when there is none or the grant may not read it. */
  primaryVerifiedEmail(accessToken: string): Promise<string | undefined>;
  organizations(accessToken: string): Promise<string[]>;
  teams(accessToken: string): Promise<TeamMembership[]>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const stringOr = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);

export function createCodeHostClient(opts: CodeHostClientOptions): CodeHostClient {
  const serverUrl = trimTrailingCharacter(opts.serverUrl, '/');
  const apiUrl = trimTrailingCharacter(opts.apiUrl, '/');
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const doFetch = opts.fetch ?? globalThis.fetch;

  /** `POST /login/oauth/access_token` or `GET /user...`, named for messages without a query or credential. */
  async function send(url: URL, init: RequestInit, what: string): Promise<{ status: number; contentType: string; text: string }> {
    let res: Response;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      res = await doFetch(url, { ...init, redirect: 'manual', signal });
    } catch (err) {
      throw unreachable(url, err, what);
    }
    try {
      const text = await readLimited(res, what, url);
      return { status: res.status, contentType: res.headers.get('content-type') ?? '', text };
    } catch (err) {
      if (err instanceof CodeHostError) throw err;
      throw unreachable(url, err, what);
    }
  }

  function unreachable(url: URL, err: unknown, what: string): CodeHostError {
    const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') {
      return new CodeHostError('unreachable', `${what}: ${url.host} did not answer within ${Math.round(timeoutMs / 100) / 10}s`);
    }
    const why = e.cause?.code ?? e.cause?.message ?? e.message ?? 'unknown error';
    return new CodeHostError('unreachable', `${what}: cannot reach ${url.protocol}//${url.host} (${why})`);
  }

  /** The body as text, refusing more than `maxBytes` (announced or received) without buffering it. */
  async function readLimited(res: Response, what: string, url: URL): Promise<string> {
    const tooLarge = () => new CodeHostError('too-large', `${what}: ${url.host} answered more than ${maxBytes} bytes`);
    const declared = Number(res.headers.get('content-length') ?? Number.NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw tooLarge();
    }
    if (!res.body) return '';
    const reader = res.body.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
    return Buffer.concat(chunks, total).toString('utf8');
  }

  function parseJson(text: string, what: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new CodeHostError('malformed', `${what}: the answer is not JSON`);
    }
  }

  /** One authenticated GET of the user API, answered 200 with JSON. */
  async function apiGet(accessToken: string, path: string, query = ''): Promise<unknown> {
    const url = new URL(`${apiUrl}${path}${query}`);
    const what = `code host GET ${path}`;
    const res = await send(
      url,
      {
        headers: {
          Authorization: `Bearer ${accessToken}`,
          Accept: 'application/vnd.github+json',
          'User-Agent': 'vexil',
        },
      },
      what,
    );
    if (res.status !== 200) throw new CodeHostError('status', `${what}: ${url.host} answered HTTP ${res.status}`, res.status);
    return parseJson(res.text, what);
  }

  /**
   * Every page of a list endpoint, by page number: the `Link` header is not followed, so a
   * code host cannot send the access token to another address.
   */
  async function list(accessToken: string, path: string): Promise<unknown[]> {
    const items: unknown[] = [];
    for (let n = 1; n <= MAX_PAGES; n++) {
      const got = await apiGet(accessToken, path, `?per_page=${PER_PAGE}&page=${n}`);
      if (!Array.isArray(got)) throw new CodeHostError('malformed', `code host GET ${path}: the answer is not a list`);
      items.push(...got);
      if (got.length < PER_PAGE) break;
    }
    return items;
  }

  return {
    authorizeUrl({ redirectUri, scopes, state, codeChallenge }) {
      const url = new URL(`${serverUrl}/login/oauth/authorize`);
      url.searchParams.set('client_id', opts.clientId);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('response_type', 'code');
      if (scopes.length > 0) url.searchParams.set('scope', scopes.join(' '));
      url.searchParams.set('state', state);
      if (codeChallenge !== undefined) {
        url.searchParams.set('code_challenge', codeChallenge);
        url.searchParams.set('code_challenge_method', 'S256');
      }
      return url.href;
    },

    async exchangeCode(code, redirectUri, codeVerifier) {
      const url = new URL(`${serverUrl}/login/oauth/access_token`);
      const what = 'code host token exchange';
      // The credentials go in the form body (GitHub's documented style), never in the URL.
      const form = new URLSearchParams({ client_id: opts.clientId, client_secret: opts.clientSecret, code, redirect_uri: redirectUri });
      if (codeVerifier !== undefined) form.set('code_verifier', codeVerifier);
      const res = await send(
        url,
        {
          method: 'POST',
          headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': 'vexil' },
          body: form.toString(),
        },
        what,
      );
      if (res.status !== 200) throw new CodeHostError('status', `${what}: ${url.host} answered HTTP ${res.status}`, res.status);
      // GitHub answers a form unless asked for JSON; read either.
      let reply: Record<string, unknown>;
      if (res.contentType.includes('json')) {
        const parsed = parseJson(res.text, what);
        if (!isObject(parsed)) throw new CodeHostError('malformed', `${what}: the answer is not an object`);
        reply = parsed;
      } else {
        reply = Object.fromEntries(new URLSearchParams(res.text));
      }
      if (typeof reply.error === 'string' && reply.error !== '') {
        // GitHub's error codes are fixed words; anything else is not repeated back.
        const oauthError = /^[a-z_]{1,64}$/.test(reply.error) ? reply.error : 'invalid_response';
        throw new CodeHostError('refused', `${what}: ${url.host} refused the authorization code (${oauthError})`, undefined, oauthError);
      }
      const accessToken = reply.access_token;
      if (typeof accessToken !== 'string' || accessToken === '') throw new CodeHostError('malformed', `${what}: the answer has no access_token`);
      const tokenType = stringOr(reply.token_type, 'bearer');
      if (tokenType.toLowerCase() !== 'bearer') throw new CodeHostError('malformed', `${what}: unsupported token_type`);
      const scope = reply.scope;
      return {
        accessToken,
        ...(typeof scope === 'string' ? { scopes: scope.split(/[ ,]+/).filter((s) => s !== '') } : {}),
      };
    },

    async user(accessToken) {
      const got = await apiGet(accessToken, '/user');
      if (!isObject(got) || typeof got.login !== 'string' || got.login === '') {
        throw new CodeHostError('malformed', 'code host GET /user: the answer has no login');
      }
      const id = typeof got.id === 'number' && Number.isSafeInteger(got.id) ? String(got.id) : stringOr(got.id);
      return { login: got.login, id, name: stringOr(got.name), email: stringOr(got.email), avatarUrl: stringOr(got.avatar_url) };
    },

    async primaryVerifiedEmail(accessToken) {
      let emails: unknown[];
      try {
        emails = await list(accessToken, '/user/emails');
      } catch (err) {
        // Not granted (404 without user:email, 403 for some app tokens): there is no such email to read.
        if (err instanceof CodeHostError && err.kind === 'status' && (err.status === 403 || err.status === 404)) return undefined;
        throw err;
      }
      const primary = emails.find((e) => isObject(e) && e.primary === true && e.verified === true && typeof e.email === 'string');
      return primary ? (primary as { email: string }).email : undefined;
    },

    async organizations(accessToken) {
      const orgs = await list(accessToken, '/user/orgs');
      return orgs.flatMap((o) => (isObject(o) && typeof o.login === 'string' ? [o.login] : []));
    },

    async teams(accessToken) {
      const teams = await list(accessToken, '/user/teams');
      return teams.flatMap((t) =>
        isObject(t) && typeof t.slug === 'string' && isObject(t.organization) && typeof t.organization.login === 'string'
          ? [{ org: t.organization.login, slug: t.slug }]
          : [],
      );
    },
  };
}
