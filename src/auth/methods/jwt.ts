/**
 * The JWT method (reference §2.10): `Authorization: JWT <token>` signed by an external issuer,
 * verified against `jwks_url` or `public_key_file` with RS256/RS512/ES256/ES512/EdDSA only,
 * `exp`/`nbf`/`iat` always checked (with `leeway`), `validate_claims.issuer`, `.audiences`
 * (any one) and `.subject` when set. Nothing is stored: the authentication is built from the
 * claims (Flipt's mapping under `io.svc.auth.*`).
 *
 * Verified tokens are remembered by the SHA-256 digest of the token until the verifier would
 * refuse them (`exp` + `leeway`), so a hot evaluation path or a stream's re-checks pay for a
 * signature check once per token, not once per request. The authentication carries that moment
 * (`acceptedUntil`), when streams look again. The cache is bounded (oldest entries dropped first);
 * refusals are not cached. Every signature verification is logged at debug (`JWT verified` /
 * `JWT refused`), never the token.
 *
 * A key set that cannot be fetched (HTTP error, network, TLS) is not a verdict on the token: such
 * a request gets 503 with Retry-After, and the outage is logged at warn once, until a fetch of the
 * set succeeds again (logged at info).
 */
import { jwtKeysUnavailable, unauthenticated } from '../../errors.js';
import { createJwtVerifier, JwtRejected, readPublicKeyFile, type JwtVerifier, type KeySource } from '../jwt-verify.js';
import { createTrustedFetch, type KeyFetch } from '../trusted-fetch.js';
import { tokenKey } from '../token.js';
import { JWT_METADATA, type Authentication, type Clock } from '../types.js';
import type { AuthMethod, MethodDeps } from './types.js';

export const JWT_ALGORITHMS = ['RS256', 'RS512', 'ES256', 'ES512', 'EdDSA'] as const;
export const JWT_SCHEME = 'JWT';
/** Distinct tokens remembered at once; a busy deployment uses far fewer. */
export const MAX_CACHED_TOKENS = 10_000;
/** Retry-After (seconds) of the 503 a request gets while the key set cannot be fetched. */
export const KEYS_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Claims under this prefix are copied into the metadata verbatim (Flipt: `io.flipt.auth`). */
const COPIED_PREFIX = 'io.svc.auth';
/** Tokens minted for Flipt carry its prefix; they are read as ours. */
const FLIPT_PREFIX = 'io.flipt.auth';

/** `user` claim fields → metadata keys. */
const USER_FIELDS: ReadonlyArray<readonly [string, string]> = [
  ['email', JWT_METADATA.email],
  ['sub', JWT_METADATA.sub],
  ['image', JWT_METADATA.picture],
  ['name', JWT_METADATA.name],
  ['role', JWT_METADATA.role],
];

function metadataValue(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** The authentication's metadata from verified claims. */
export function jwtMetadata(claims: Readonly<Record<string, unknown>>): Record<string, string> {
  const metadata: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(claims)) {
    if (name.startsWith(COPIED_PREFIX)) metadata[name] = metadataValue(value);
    else if (name.startsWith(FLIPT_PREFIX)) metadata[COPIED_PREFIX + name.slice(FLIPT_PREFIX.length)] = metadataValue(value);
  }
  // The mapped keys are set last, so a claim cannot pose as one of them.
  if (typeof claims.iss === 'string') metadata[JWT_METADATA.issuer] = claims.iss;
  const user = claims.user;
  if (user !== null && typeof user === 'object' && !Array.isArray(user)) {
    for (const [from, to] of USER_FIELDS) {
      const v = (user as Record<string, unknown>)[from];
      if (v !== undefined && v !== null) metadata[to] = metadataValue(v);
    }
  }
  return metadata;
}

/** Verified tokens by digest, until they stop being accepted; insertion order = age, oldest dropped first. */
class VerifiedTokenCache {
  private readonly entries = new Map<string, { authentication: Authentication; until: number }>();
  constructor(
    private readonly clock: Clock,
    private readonly maxEntries: number,
  ) {}

  get(key: string): Authentication | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.until <= this.clock()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.authentication;
  }

  put(key: string, authentication: Authentication, until: number): void {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { authentication, until });
  }

  clear(): void {
    this.entries.clear();
  }
}

/** Runs a start-up step, naming the config key in its error (the start fails with it). */
function atKey<T>(key: string, step: () => T): T {
  try {
    return step();
  } catch (err) {
    throw new Error(`authentication.methods.jwt.${key}: ${(err as Error).message}`);
  }
}

export interface JwtAuthenticator {
  /** A token in the verified-token cache is answered at once; a new one after its signature check. */
  authenticate(token: string): Authentication | Promise<Authentication>;
  clear(): void;
}

/** The verification and cache, apart from the method wiring (the tests and bench use it too). */
export function createJwtAuthenticator(config: MethodDeps['config']['methods']['jwt'], deps: Pick<MethodDeps, 'clock' | 'logger'>): JwtAuthenticator {
  let keys: KeySource;
  // Whether the key set is unreachable now: set by a verification that could not get keys,
  // cleared by a fetch that succeeds. The warning is logged when it becomes true.
  let keysDown = false;
  if (config.jwks_url !== undefined) {
    const caPath = config.ca_path;
    const fetchKeys = atKey('ca_path', () => createTrustedFetch(caPath !== undefined ? { caPath } : {}));
    const watched: KeyFetch = (url, init) =>
      fetchKeys(url, init).then((res) => {
        if (res.status === 200 && keysDown) {
          keysDown = false;
          deps.logger.info({ jwksHost: new URL(url).host }, 'JWT key set reachable again');
        }
        return res;
      });
    keys = { jwksUrl: config.jwks_url, fetch: watched };
  } else if (config.public_key_file !== undefined) {
    const file = config.public_key_file;
    keys = { publicKeyPem: atKey('public_key_file', () => readPublicKeyFile(file)) };
  } else {
    throw new Error('authentication.methods.jwt: one of jwks_url or public_key_file is required');
  }
  const claims = config.validate_claims;
  const verify: JwtVerifier = createJwtVerifier({
    keys,
    algorithms: JWT_ALGORITHMS,
    ...(claims.issuer !== undefined ? { issuer: claims.issuer } : {}),
    ...(claims.subject !== undefined ? { subject: claims.subject } : {}),
    audiences: claims.audiences,
    leewaySeconds: config.leeway / 1000,
    clock: deps.clock,
  });
  const cache = new VerifiedTokenCache(deps.clock, MAX_CACHED_TOKENS);

  return {
    authenticate(token) {
      const key = tokenKey(token);
      return cache.get(key) ?? verifyAndRemember(token, key);
    },
    clear: () => cache.clear(),
  };

  async function verifyAndRemember(token: string, key: string): Promise<Authentication> {
    let verified;
    try {
      verified = await verify(token);
    } catch (err) {
      const reason = err instanceof JwtRejected ? err.message : 'verification failed';
      if (err instanceof JwtRejected && err.keysUnavailable) {
        if (!keysDown) {
          keysDown = true;
          deps.logger.warn({ reason }, 'JWT key set unavailable: tokens signed with keys not fetched yet are answered 503');
        } else deps.logger.debug({ reason }, 'JWT not judged: key set unavailable');
        throw jwtKeysUnavailable(KEYS_UNAVAILABLE_RETRY_AFTER_SECONDS);
      }
      deps.logger.debug({ reason }, 'JWT refused');
      throw unauthenticated();
    }
    const { payload, expiresAt, acceptedUntil } = verified;
    const issuedAt = typeof payload.iat === 'number' ? payload.iat * 1000 : deps.clock();
    // Not stored: no id. The token's own times stand in for the record's (Flipt leaves them out).
    const authentication: Authentication = {
      id: '',
      method: 'METHOD_JWT',
      expiresAt,
      acceptedUntil,
      createdAt: issuedAt,
      updatedAt: issuedAt,
      metadata: jwtMetadata(payload),
    };
    deps.logger.debug({ expiresAt: new Date(expiresAt).toISOString() }, 'JWT verified');
    cache.put(key, authentication, acceptedUntil);
    return authentication;
  }
}

export function createJwtMethod(deps: MethodDeps): AuthMethod {
  const config = deps.config.methods.jwt;
  const authenticator = config.enabled ? createJwtAuthenticator(config, deps) : undefined;
  return {
    method: 'METHOD_JWT',
    configKey: 'jwt',
    sessionCompatible: false,
    describe: () => null,
    scheme: JWT_SCHEME,
    authenticate(credential) {
      if (authenticator === undefined) return Promise.reject(unauthenticated());
      return authenticator.authenticate(credential);
    },
    close() {
      authenticator?.clear();
      return Promise.resolve();
    },
  };
}
