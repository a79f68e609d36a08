/**
 * The OCI distribution API on Node's fetch: what the OCI source and `vexil bundle push/pull` need.
 *
 * - Authentication follows the registry's `WWW-Authenticate` challenge: Basic with the
 *   configured credentials, or Bearer through the token service named by `realm` (Basic
 *   credentials sent to it when configured, anonymous otherwise). Tokens are cached per scope
 *   until they expire, and the scheme a registry asked for is remembered, so a poll of an
 *   unchanged tag is one request, not a 401 and a retry. A 401 is retried once.
 * - Every manifest and blob read is checked against its digest (RegistryError digest-mismatch).
 * - `tokenFile` is read before every operation: a sidecar may rotate it.
 * - No message ever carries a password or token: errors name the registry, the repository, the
 *   status and the registry's own error code.
 */
import { readFile } from 'node:fs/promises';
import { MANIFEST_ACCEPT, OCI_MANIFEST_MEDIA_TYPE, OCI_INDEX_MEDIA_TYPE, DOCKER_MANIFEST_LIST_MEDIA_TYPE, sha256Digest } from './bundle-format.js';
import { registryBaseUrl } from './reference.js';
import { RegistryError, type Descriptor, type ImageManifest, type OciReference, type RegistryClient, type RegistryCredentials } from './types.js';

export interface RegistryClientOptions {
  readonly credentials?: RegistryCredentials;
  readonly fetch?: typeof fetch;
  readonly userAgent?: string;
  /** One request (headers and body) fails after this long (default 30 s). */
  readonly timeoutMs?: number;
}

/** Resolved credentials of one operation (the token file just read). */
interface Creds {
  readonly username?: string;
  readonly password?: string;
  /** A token file without a username: sent as `Bearer <token>`. */
  readonly bearer?: string;
}

interface Challenge {
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

type Action = 'pull' | 'push';

interface CachedToken {
  readonly token: string;
  readonly expiresAt: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** Distribution refuses manifests over 4 MiB; so do we. */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
/** Token lifetime assumed when the token service does not say (distribution's default is 60 s). */
const DEFAULT_TOKEN_TTL_S = 60;

export function createRegistryClient(opts: RegistryClientOptions = {}): RegistryClient {
  const doFetch = opts.fetch ?? globalThis.fetch;
  const userAgent = opts.userAgent ?? 'vexil';
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  /** registry → the scheme it challenged with last. */
  const schemes = new Map<string, 'basic' | 'bearer'>();
  /** `registry|scope` → token. */
  const tokens = new Map<string, CachedToken>();

  async function credentials(): Promise<Creds> {
    const c = opts.credentials;
    if (c === undefined) return {};
    let secret = c.password;
    if (c.tokenFile !== undefined) {
      try {
        secret = (await readFile(c.tokenFile, 'utf8')).trim();
      } catch (err) {
        throw new RegistryError('unauthorized', `cannot read the registry token file ${c.tokenFile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      if (secret === '') throw new RegistryError('unauthorized', `the registry token file ${c.tokenFile} is empty`);
      if (c.username === undefined) return { bearer: secret };
    }
    return { ...(c.username !== undefined ? { username: c.username } : {}), ...(secret !== undefined ? { password: secret } : {}) };
  }

  const hasBasic = (c: Creds) => c.username !== undefined && c.password !== undefined;
  const basicHeader = (c: Creds) => `Basic ${Buffer.from(`${c.username ?? ''}:${c.password ?? ''}`).toString('base64')}`;
  const scopeOf = (ref: OciReference, action: Action) => `repository:${ref.repository}:${action === 'push' ? 'pull,push' : 'pull'}`;

  /** One HTTP exchange: network failures and timeouts become RegistryError unreachable naming the host. */
  async function send(url: URL, init: RequestInit, what: string): Promise<Response> {
    try {
      return await doFetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      throw unreachable(url, err, what);
    }
  }

  function unreachable(url: URL, err: unknown, what: string): RegistryError {
    const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') {
      return new RegistryError('unreachable', `${what}: ${url.host} did not answer within ${Math.round(timeoutMs / 100) / 10}s`);
    }
    const why = e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
    return new RegistryError('unreachable', `${what}: cannot reach ${url.protocol}//${url.host} (${why})`);
  }

  /** Authorization for a request, from what the registry asked before (undefined: try anonymous). */
  function authorizationFor(ref: OciReference, scope: string, creds: Creds): string | undefined {
    if (creds.bearer !== undefined) return `Bearer ${creds.bearer}`;
    const scheme = schemes.get(ref.registry);
    if (scheme === 'basic') return hasBasic(creds) ? basicHeader(creds) : undefined;
    if (scheme === 'bearer') {
      const t = tokens.get(`${ref.registry}|${scope}`);
      if (t !== undefined && t.expiresAt > Date.now()) return `Bearer ${t.token}`;
    }
    return undefined;
  }

  /** Answers a 401's challenge: the Authorization to retry with. */
  async function answerChallenge(ref: OciReference, scope: string, creds: Creds, res: Response, what: string): Promise<string> {
    const challenge = parseChallenge(res.headers.get('www-authenticate') ?? '');
    if (creds.bearer !== undefined || challenge === undefined) throw await statusError(res, ref, what, creds);
    if (challenge.scheme === 'basic') {
      schemes.set(ref.registry, 'basic');
      if (!hasBasic(creds)) throw await statusError(res, ref, what, creds);
      return basicHeader(creds);
    }
    if (challenge.scheme !== 'bearer') {
      throw new RegistryError('unauthorized', `${what}: ${ref.registry} asks for ${challenge.scheme} authentication, which vexil does not speak`, 401);
    }
    schemes.set(ref.registry, 'bearer');
    await res.body?.cancel();
    const token = await fetchToken(ref, challenge, scope, creds, what);
    return `Bearer ${token}`;
  }

  async function fetchToken(ref: OciReference, challenge: Challenge, scope: string, creds: Creds, what: string): Promise<string> {
    const realm = challenge.params['realm'];
    if (realm === undefined) throw new RegistryError('unauthorized', `${what}: ${ref.registry} asks for a Bearer token but names no token service (realm)`, 401);
    let url: URL;
    try {
      url = new URL(realm, registryBaseUrl(ref));
    } catch {
      throw new RegistryError('invalid', `${what}: ${ref.registry} names an invalid token service URL`);
    }
    if (challenge.params['service'] !== undefined) url.searchParams.set('service', challenge.params['service']);
    // Our scope, unless the registry asked for a different one (e.g. a mounted repository).
    url.searchParams.set('scope', challenge.params['scope'] ?? scope);
    const headers: Record<string, string> = { 'user-agent': userAgent };
    if (hasBasic(creds)) headers['authorization'] = basicHeader(creds);
    const res = await send(url, { headers }, what);
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      throw new RegistryError(
        res.status === 401 ? 'unauthorized' : 'denied',
        `${what}: the token service ${url.host} refused ${hasBasic(creds) ? `the credentials of user "${creds.username}"` : 'anonymous access'} (HTTP ${res.status})`,
        res.status,
      );
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new RegistryError('server', `${what}: the token service ${url.host} answered HTTP ${res.status}`, res.status);
    }
    let body: { token?: unknown; access_token?: unknown; expires_in?: unknown; issued_at?: unknown };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new RegistryError('server', `${what}: the token service ${url.host} did not answer JSON`);
    }
    const token = typeof body.token === 'string' && body.token !== '' ? body.token : typeof body.access_token === 'string' ? body.access_token : '';
    if (token === '') throw new RegistryError('server', `${what}: the token service ${url.host} answered no token`);
    const ttl = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_TOKEN_TTL_S;
    const issued = typeof body.issued_at === 'string' ? Date.parse(body.issued_at) : NaN;
    const from = Number.isFinite(issued) && issued <= Date.now() ? issued : Date.now();
    // Renew a little early: a token that expires in flight costs a 401 and a retry.
    tokens.set(`${ref.registry}|${scope}`, { token, expiresAt: from + Math.max(ttl * 1000 - 10_000, (ttl * 1000) / 2) });
    return token;
  }

  /**
   * A request to the registry with authentication: preemptive when the scheme is known, else
   * anonymous first and one retry after the 401 challenge.
   */
  async function call(
    ref: OciReference,
    action: Action,
    creds: Creds,
    url: URL,
    init: { method: string; headers?: Record<string, string>; body?: Uint8Array },
    what: string,
  ): Promise<Response> {
    const scope = scopeOf(ref, action);
    const headers: Record<string, string> = { 'user-agent': userAgent, ...init.headers };
    const auth = authorizationFor(ref, scope, creds);
    if (auth !== undefined) headers['authorization'] = auth;
    const request = (h: Record<string, string>) =>
      send(url, { method: init.method, headers: h, ...(init.body !== undefined ? { body: init.body } : {}), redirect: 'follow' }, what);
    let res = await request(headers);
    if (res.status !== 401) return res;
    if (auth !== undefined && creds.bearer === undefined && schemes.get(ref.registry) === 'basic') {
      // The credentials we sent were refused: no point retrying with the same ones.
      throw await statusError(res, ref, what, creds);
    }
    const retryAuth = await answerChallenge(ref, scope, creds, res, what);
    await res.body?.cancel();
    res = await request({ ...headers, authorization: retryAuth });
    if (res.status === 401) throw await statusError(res, ref, what, creds);
    return res;
  }

  function manifestUrl(ref: OciReference): URL {
    const id = ref.digest ?? ref.tag ?? 'latest';
    return new URL(`/v2/${ref.repository}/manifests/${id}`, registryBaseUrl(ref));
  }
  const blobUrl = (ref: OciReference, digest: string) => new URL(`/v2/${ref.repository}/blobs/${digest}`, registryBaseUrl(ref));
  const named = (ref: OciReference) => `${ref.registry}/${ref.repository}${ref.digest !== undefined ? `@${ref.digest}` : `:${ref.tag ?? 'latest'}`}`;

  return {
    async resolve(ref) {
      const what = `resolving ${named(ref)}`;
      const creds = await credentials();
      const res = await call(ref, 'pull', creds, manifestUrl(ref), { method: 'HEAD', headers: { accept: MANIFEST_ACCEPT } }, what);
      await res.body?.cancel();
      if (res.status === 404) return undefined;
      if (!res.ok) throw await statusError(res, ref, what, creds);
      const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
      const size = Number(res.headers.get('content-length') ?? NaN);
      const digest = res.headers.get('docker-content-digest') ?? ref.digest;
      if (digest !== undefined && Number.isFinite(size)) return { digest, mediaType, size };
      // A registry that does not say the digest on HEAD: read the manifest (and check it).
      const got = await this.getManifest(ref);
      return { digest: got.digest, mediaType: got.manifest.mediaType, size: got.bytes.byteLength };
    },

    async getManifest(ref) {
      const what = `pulling the manifest of ${named(ref)}`;
      const creds = await credentials();
      const res = await call(ref, 'pull', creds, manifestUrl(ref), { method: 'GET', headers: { accept: MANIFEST_ACCEPT } }, what);
      if (!res.ok) throw await statusError(res, ref, what, creds);
      const bytes = await readBody(res, manifestUrl(ref), what);
      const digest = sha256Digest(bytes);
      const expected = ref.digest ?? res.headers.get('docker-content-digest') ?? undefined;
      if (expected !== undefined && expected.startsWith('sha256:') && expected !== digest) {
        throw new RegistryError('digest-mismatch', `${what}: the manifest received hashes to ${digest}, expected ${expected}`);
      }
      const contentType = (res.headers.get('content-type') ?? '').split(';')[0]?.trim();
      let parsed: unknown;
      try {
        parsed = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        throw new RegistryError('invalid', `${what}: the manifest is not JSON`);
      }
      const obj = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
      const mt = typeof obj['mediaType'] === 'string' ? (obj['mediaType'] as string) : contentType;
      if (mt === OCI_INDEX_MEDIA_TYPE || mt === DOCKER_MANIFEST_LIST_MEDIA_TYPE || Array.isArray(obj['manifests'])) {
        throw new RegistryError('invalid', `${what}: it is an image index (a list of manifests), not a bundle; name a single bundle's tag or digest`);
      }
      if (typeof obj['config'] !== 'object' || !Array.isArray(obj['layers'])) {
        throw new RegistryError('invalid', `${what}: not an image manifest (no config or layers)`);
      }
      return { digest, bytes, manifest: { ...obj, mediaType: mt ?? OCI_MANIFEST_MEDIA_TYPE } as unknown as ImageManifest };
    },

    async getBlob(ref, descriptor: Descriptor) {
      const what = `pulling blob ${descriptor.digest} of ${ref.registry}/${ref.repository}`;
      const creds = await credentials();
      const url = blobUrl(ref, descriptor.digest);
      const res = await call(ref, 'pull', creds, url, { method: 'GET' }, what);
      if (!res.ok) throw await statusError(res, ref, what, creds);
      const bytes = await readBody(res, url, what, descriptor.size);
      if (bytes.byteLength !== descriptor.size) {
        throw new RegistryError('digest-mismatch', `${what}: received ${bytes.byteLength} bytes, the manifest says ${descriptor.size}`);
      }
      const digest = sha256Digest(bytes);
      if (digest !== descriptor.digest) throw new RegistryError('digest-mismatch', `${what}: the content received hashes to ${digest}`);
      return bytes;
    },

    async hasBlob(ref, digest) {
      const what = `checking blob ${digest} of ${ref.registry}/${ref.repository}`;
      const creds = await credentials();
      const res = await call(ref, 'pull', creds, blobUrl(ref, digest), { method: 'HEAD' }, what);
      await res.body?.cancel();
      if (res.status === 404) return false;
      if (!res.ok) throw await statusError(res, ref, what, creds);
      return true;
    },

    async pushBlob(ref, digest, bytes) {
      const what = `pushing blob ${digest} to ${ref.registry}/${ref.repository}`;
      const actual = sha256Digest(bytes);
      if (actual !== digest) throw new RegistryError('digest-mismatch', `${what}: the content hashes to ${actual}`);
      const creds = await credentials();
      const start = new URL(`/v2/${ref.repository}/blobs/uploads/`, registryBaseUrl(ref));
      const opened = await call(ref, 'push', creds, start, { method: 'POST', headers: { 'content-length': '0' } }, what);
      await opened.body?.cancel();
      if (opened.status !== 202) throw await statusError(opened, ref, what, creds);
      const location = opened.headers.get('location');
      if (location === null) throw new RegistryError('server', `${what}: the registry opened an upload without a Location`);
      const put = new URL(location, registryBaseUrl(ref));
      put.searchParams.set('digest', digest);
      const done = await call(
        ref,
        'push',
        creds,
        put,
        { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(bytes.byteLength) }, body: bytes },
        what,
      );
      await done.body?.cancel();
      if (done.status !== 201 && done.status !== 204) throw await statusError(done, ref, what, creds);
    },

    async pushManifest(ref, bytes, mediaType) {
      const what = `pushing the manifest of ${named(ref)}`;
      const creds = await credentials();
      const digest = sha256Digest(bytes);
      const res = await call(ref, 'push', creds, manifestUrl(ref), { method: 'PUT', headers: { 'content-type': mediaType }, body: bytes }, what);
      if (res.status !== 201 && res.status !== 200 && res.status !== 204) throw await statusError(res, ref, what, creds);
      await res.body?.cancel();
      const said = res.headers.get('docker-content-digest');
      if (said !== null && said.startsWith('sha256:') && said !== digest) {
        throw new RegistryError('digest-mismatch', `${what}: the registry stored it as ${said}, but the bytes sent hash to ${digest}`);
      }
      return digest;
    },

    async listTags(ref) {
      const what = `listing the tags of ${ref.registry}/${ref.repository}`;
      const creds = await credentials();
      const tags: string[] = [];
      let url: URL | undefined = new URL(`/v2/${ref.repository}/tags/list`, registryBaseUrl(ref));
      for (let page = 0; url !== undefined && page < 1000; page++) {
        const res: Response = await call(ref, 'pull', creds, url, { method: 'GET', headers: { accept: 'application/json' } }, what);
        if (!res.ok) throw await statusError(res, ref, what, creds);
        const body = (await res.json().catch(() => undefined)) as { tags?: unknown } | undefined;
        if (body === undefined) throw new RegistryError('server', `${what}: the registry did not answer JSON`);
        if (Array.isArray(body.tags)) for (const t of body.tags) if (typeof t === 'string') tags.push(t);
        const next = nextLink(res.headers.get('link') ?? '');
        url = next !== undefined ? new URL(next, registryBaseUrl(ref)) : undefined;
      }
      return tags;
    },
  };

  /** The body, refusing more than `limit` bytes (a registry cannot make us buffer more than the manifest promised). */
  async function readBody(res: Response, url: URL, what: string, expectedSize?: number): Promise<Uint8Array> {
    const limit = expectedSize ?? MAX_MANIFEST_BYTES;
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      await res.body?.cancel();
      throw expectedSize !== undefined
        ? new RegistryError('digest-mismatch', `${what}: the registry announces ${declared} bytes, the manifest says ${expectedSize}`)
        : new RegistryError('invalid', `${what}: the manifest is larger than ${MAX_MANIFEST_BYTES} bytes`);
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    try {
      if (res.body !== null) {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          total += chunk.byteLength;
          if (total > limit) {
            await res.body.cancel().catch(() => undefined);
            throw expectedSize !== undefined
              ? new RegistryError('digest-mismatch', `${what}: the registry sent more than the ${expectedSize} bytes the manifest says`)
              : new RegistryError('invalid', `${what}: the manifest is larger than ${MAX_MANIFEST_BYTES} bytes`);
          }
          chunks.push(chunk);
        }
      }
    } catch (err) {
      if (err instanceof RegistryError) throw err;
      throw unreachable(url, err, what);
    }
    const joined = Buffer.concat(chunks, total);
    return new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength);
  }
}

/** Maps a failed response to a RegistryError, with the registry's own error code when it gives one. */
async function statusError(res: Response, ref: OciReference, what: string, creds: Creds): Promise<RegistryError> {
  const detail = await registryErrorText(res);
  const suffix = detail === '' ? '' : `: ${detail}`;
  const status = res.status;
  if (status === 401) {
    const who =
      creds.bearer !== undefined
        ? 'the token from the token file was refused'
        : creds.username !== undefined
          ? `the credentials of user "${creds.username}" were refused`
          : 'authentication is required and no credentials are configured';
    return new RegistryError('unauthorized', `${what}: ${ref.registry}: ${who} (HTTP 401)${suffix}`, status);
  }
  if (status === 403) return new RegistryError('denied', `${what}: ${ref.registry} denied access (HTTP 403)${suffix}`, status);
  if (status === 404) return new RegistryError('not-found', `${what}: not found (HTTP 404)${suffix}`, status);
  if (status >= 500 || status === 429) return new RegistryError('server', `${what}: ${ref.registry} answered HTTP ${status}${suffix}`, status);
  return new RegistryError('invalid', `${what}: ${ref.registry} refused the request (HTTP ${status})${suffix}`, status);
}

/** `CODE: message` of the distribution error body, short; empty when there is none. */
async function registryErrorText(res: Response): Promise<string> {
  let text = '';
  try {
    text = await res.text();
  } catch {
    return '';
  }
  try {
    const body = JSON.parse(text) as { errors?: Array<{ code?: unknown; message?: unknown }> };
    const first = body.errors?.[0];
    if (first !== undefined) {
      const parts = [first.code, first.message].filter((x): x is string => typeof x === 'string' && x !== '');
      return parts.join(': ').slice(0, 200);
    }
  } catch {
    // not JSON: ignore the body (it could be an HTML error page)
  }
  return '';
}

/** The first Basic or Bearer challenge of a WWW-Authenticate header (RFC 7235 auth-params). */
export function parseChallenge(header: string): Challenge | undefined {
  const m = /^\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)/.exec(header);
  if (m === null) return undefined;
  return { scheme: (m[1] as string).toLowerCase(), params: parseAuthParams(header, m[0].length) };
}

const isParamNameChar = (c: number) =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x2d;
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * `name=value` and `name="quoted \"value\""` pairs separated by commas, read in one pass: a
 * registry's header (up to Node's 16 KiB) costs time linear in its length, unclosed quotes included.
 * Anything that is not a pair ends the list (as the challenge's first scheme ends there too).
 */
function parseAuthParams(text: string, from: number): Record<string, string> {
  const params: Record<string, string> = {};
  let i = from;
  const n = text.length;
  const skip = (pred: (c: number) => boolean) => {
    while (i < n && pred(text.charCodeAt(i))) i++;
  };
  for (;;) {
    skip((c) => isSpace(c) || c === 0x2c);
    const nameStart = i;
    skip(isParamNameChar);
    if (i === nameStart) return params;
    const name = text.slice(nameStart, i).toLowerCase();
    skip(isSpace);
    if (text.charCodeAt(i) !== 0x3d) return params; // '=': a token that is no parameter (another scheme)
    i++;
    skip(isSpace);
    if (text.charCodeAt(i) === 0x22) {
      // quoted-string: backslash escapes the next character; an unclosed one runs to the end
      let value = '';
      let start = ++i;
      while (i < n && text.charCodeAt(i) !== 0x22) {
        if (text.charCodeAt(i) === 0x5c && i + 1 < n) {
          value += text.slice(start, i);
          start = i + 1;
          i += 2;
        } else i++;
      }
      params[name] = value + text.slice(start, i);
      i++;
    } else {
      const valueStart = i;
      skip((c) => !isSpace(c) && c !== 0x2c);
      params[name] = text.slice(valueStart, i);
    }
  }
}

/** The target of the `rel="next"` link of an RFC 8288 Link header, scanned once (no backtracking). */
export function nextLink(header: string): string | undefined {
  let i = 0;
  for (;;) {
    const open = header.indexOf('<', i);
    if (open === -1) return undefined;
    const close = header.indexOf('>', open + 1);
    if (close === -1) return undefined;
    const following = header.indexOf('<', close + 1);
    const params = header.slice(close + 1, following === -1 ? header.length : following);
    // One attempt per ';' over the whitespace after it: linear.
    if (/;\s*rel="?next"?/.test(params)) return header.slice(open + 1, close);
    if (following === -1) return undefined;
    i = following;
  }
}
