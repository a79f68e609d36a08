/**
 * The one JWT verifier of the cluster and JWT methods, built on jose:
 *
 * - keys from a remote JSON Web Key Set (cached; an unknown `kid` refetches it at once, with
 *   concurrent refetches coalesced, so a freshly rotated key is accepted on its first use) or from
 *   one PEM public key (SPKI, PKCS#1 or a certificate);
 * - an allow-list of asymmetric algorithms: `alg: none` and the HMAC family can never pass, whatever
 *   the configuration says, because a public verification key must never double as a shared secret;
 * - `exp`, `nbf` and `iat` with a small leeway (a token with no `exp` lives 150 s from its `iat` or
 *   `nbf`, as Flipt's library does; a token with none of the three is refused);
 * - issuer, audience (any one of a list) and subject checks when configured;
 * - the token's length is bounded before anything parses it.
 *
 * Failures are `JwtRejected` with a short reason safe to log or return (never the token itself).
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FetchImplementation, JWTPayload } from 'jose';
import type { KeyFetch } from './trusted-fetch.js';
import { systemClock, type Clock } from './types.js';

/** Real tokens are a few kilobytes; a request header cannot be much larger anyway. */
export const MAX_TOKEN_LENGTH = 16 * 1024;
/** Lifetime given to a token that carries no `exp` (Flipt's library does the same). */
export const IMPLIED_LIFETIME_SECONDS = 150;

/** Fetches of a JWKS start at least this far apart (see createJwtVerifier). */
export const JWKS_MIN_REFETCH_MS = 1000;

type Jose = typeof import('jose');
/**
 * jose is imported when a verifier is created, not with this module: every `vexil serve` imports
 * the method catalogue, and loading jose costs part of the 40-50 ms of CPU that the JWT/OIDC
 * libraries add to each start without those methods (bench/RESULTS.md, "Load time back").
 * `loaded` is set once the import settled; verification awaits it first, and the synchronous
 * error checks below only see errors thrown by jose after that.
 */
let loaded: Jose | undefined;
let loading: Promise<Jose> | undefined;
function loadJose(): Promise<Jose> {
  loading ??= import('jose').then((m) => (loaded = m));
  return loading;
}

/**
 * `fetchImpl`, with each call started no sooner than `minIntervalMs` after the previous one
 * started: the upstream cost of key-set refetches is bounded whatever the requests carry.
 */
export function spacedFetch(fetchImpl: FetchImplementation, minIntervalMs: number): FetchImplementation {
  let nextAllowed = 0;
  return async (url, options) => {
    const now = performance.now();
    const startAt = Math.max(now, nextAllowed);
    nextAllowed = startAt + minIntervalMs;
    if (startAt > now) await new Promise((resolve) => setTimeout(resolve, startAt - now));
    return fetchImpl(url, options);
  };
}

/** Every algorithm either method may accept; anything else (none, HS*, PS*) is refused. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

export class JwtRejected extends Error {
  override readonly name = 'JwtRejected';
  constructor(
    message: string,
    /** True when the keys could not be had (fetch failed): the token was not judged. */
    readonly keysUnavailable = false,
  ) {
    super(message);
  }
}

export type KeySource = { jwksUrl: string; fetch?: KeyFetch } | { publicKeyPem: string };

export interface JwtVerifierOptions {
  keys: KeySource;
  /** Allowed `alg` values; intersected with the asymmetric set. */
  algorithms: readonly string[];
  issuer?: string;
  /** The token's `aud` must contain at least one of these (when non-empty). */
  audiences?: readonly string[];
  subject?: string;
  /** Clock skew allowed on exp/nbf/iat (the jwt method's `leeway`; the cluster method's own). */
  leewaySeconds: number;
  clock?: Clock;
  /** Least time between two fetches of a JWKS (default JWKS_MIN_REFETCH_MS). */
  minRefetchMs?: number;
}

export interface VerifiedJwt {
  payload: JWTPayload;
  /** When the token stops being valid (ms since the epoch): its `exp`, or the implied one. */
  expiresAt: number;
  /**
   * When this verifier stops accepting it (ms since the epoch): `expiresAt` plus the leeway. A
   * check at any earlier moment passes, one at this moment or later is refused.
   */
  acceptedUntil: number;
}

export type JwtVerifier = (token: string) => Promise<VerifiedJwt>;

/** Reads a PEM public key file (at start); refuses private keys and anything that is not asymmetric. */
export function readPublicKeyFile(path: string): string {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read "${path}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    publicKeyOf(pem);
  } catch (err) {
    throw new Error(`"${path}" is not a usable PEM public key: ${(err as Error).message}`);
  }
  return pem;
}

function publicKeyOf(pem: string): KeyObject {
  if (pem.includes('PRIVATE KEY')) throw new Error('the file holds a private key; give the public key only');
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType === undefined) throw new Error('not an asymmetric public key');
  return key;
}

export function createJwtVerifier(opts: JwtVerifierOptions): JwtVerifier {
  const allowed = new Set<string>(ASYMMETRIC_ALGORITHMS);
  const algorithms = opts.algorithms.filter((a) => allowed.has(a));
  if (algorithms.length === 0) throw new Error(`no usable algorithm among ${opts.algorithms.join(', ')}`);
  const leeway = opts.leewaySeconds;
  const clock = opts.clock ?? systemClock;
  const audiences = opts.audiences !== undefined && opts.audiences.length > 0 ? [...opts.audiences] : undefined;

  const jose = loadJose();
  jose.catch(() => {}); // a failed import fails each verification (awaited there), not the process
  // Made on the first verification, once jose is loaded (creating the set fetches nothing).
  let key: Parameters<Jose['jwtVerify']>[1] | undefined;
  let remoteKeys: ((j: Jose) => Parameters<Jose['jwtVerify']>[1]) | undefined;
  if ('jwksUrl' in opts.keys) {
    const source = opts.keys;
    const base = (source.fetch as unknown as FetchImplementation | undefined) ?? ((url, init) => fetch(url, init as RequestInit));
    const jwksUrl = new URL(source.jwksUrl);
    remoteKeys = ({ createRemoteJWKSet, customFetch }) =>
      createRemoteJWKSet(jwksUrl, {
        // No cooldown that refuses: a token signed with a key published a moment ago must not be
        // refused because the set was fetched shortly before. Instead a refetch waits until
        // JWKS_MIN_REFETCH_MS after the previous one (spacedFetch), and jose joins every request
        // that meets an unknown kid meanwhile to that one refetch: tokens with made-up kids cost
        // at most one fetch per interval, a fresh key at most that much latency. The unverified
        // claims are checked first (below), so only plausible tokens get that far.
        cooldownDuration: 0,
        cacheMaxAge: 10 * 60_000,
        timeoutDuration: 5000 + JWKS_MIN_REFETCH_MS,
        [customFetch]: spacedFetch(base, opts.minRefetchMs ?? JWKS_MIN_REFETCH_MS),
      });
  } else {
    key = publicKeyOf(opts.keys.publicKeyPem);
  }

  return async (token) => {
    if (token.length > MAX_TOKEN_LENGTH) throw new JwtRejected(`token longer than ${MAX_TOKEN_LENGTH} characters`);
    const now = clock();
    const { decodeJwt, jwtVerify } = await jose;
    key ??= remoteKeys!(loaded!);
    const nowSeconds = Math.floor(now / 1000);
    let unverified: JWTPayload;
    try {
      unverified = decodeJwt(token);
    } catch {
      throw new JwtRejected('malformed token');
    }
    // Cheap claim checks before any key is looked up (a forged token with a random kid must not
    // make us fetch the key set); everything is checked again on the verified payload.
    checkTimes(unverified, nowSeconds, leeway);
    if (opts.issuer !== undefined && unverified.iss !== opts.issuer) throw new JwtRejected('issuer mismatch');

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, key as never, {
        algorithms,
        clockTolerance: leeway,
        currentDate: new Date(now),
        ...(opts.issuer !== undefined ? { issuer: opts.issuer } : {}),
        ...(audiences !== undefined ? { audience: audiences } : {}),
        ...(opts.subject !== undefined ? { subject: opts.subject } : {}),
      }));
    } catch (err) {
      throw new JwtRejected(reasonOf(err), keysUnavailable(err));
    }
    const expiresAt = checkTimes(payload, nowSeconds, leeway);
    return { payload, expiresAt: expiresAt * 1000, acceptedUntil: acceptedUntil(expiresAt, leeway) };
  };
}

/**
 * The first moment (ms) checkTimes refuses a token expiring at `expiry` (s): it compares whole
 * seconds of now with `expiry + leeway`, either of which may have a fraction.
 */
function acceptedUntil(expiry: number, leeway: number): number {
  return Math.ceil(expiry + leeway) * 1000;
}

/** exp/nbf/iat against now ± leeway; returns the expiry in seconds. */
function checkTimes(p: JWTPayload, now: number, leeway: number): number {
  const num = (v: unknown, name: string): number | undefined => {
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new JwtRejected(`"${name}" claim is not a number`);
    return v;
  };
  const exp = num(p.exp, 'exp');
  const nbf = num(p.nbf, 'nbf');
  const iat = num(p.iat, 'iat');
  if (exp === undefined && nbf === undefined && iat === undefined) throw new JwtRejected('token has none of exp, nbf, iat');
  if (nbf !== undefined && nbf > now + leeway) throw new JwtRejected('token not yet valid (nbf)');
  if (iat !== undefined && iat > now + leeway) throw new JwtRejected('token issued in the future (iat)');
  const expiry = exp ?? Math.max(iat ?? 0, nbf ?? 0) + IMPLIED_LIFETIME_SECONDS;
  if (expiry + leeway <= now) throw new JwtRejected('token expired');
  return expiry;
}

/**
 * Whether the failure is about getting the keys rather than the token: a key-set fetch that timed
 * out, answered other than 200 or unparsable JSON (jose's generic error), or failed in the network
 * or TLS (not a jose error at all). jose's key/algorithm mismatches are TypeErrors: the token's fault.
 */
function keysUnavailable(err: unknown): boolean {
  const joseErrors = loaded!.errors;
  if (err instanceof joseErrors.JWKSTimeout) return true;
  if (err instanceof joseErrors.JOSEError) return err.code === 'ERR_JOSE_GENERIC';
  return !(err instanceof TypeError || err instanceof JwtRejected);
}

/** jose's error codes as short reasons (its messages are fine too, but these are stable). */
function reasonOf(err: unknown): string {
  if (err instanceof JwtRejected) return err.message;
  const joseErrors = loaded!.errors;
  if (err instanceof joseErrors.JWTExpired) return 'token expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) return `claim check failed: ${err.claim} (${err.reason})`;
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature invalid';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'no key in the key set matches the token';
  if (err instanceof joseErrors.JWKSMultipleMatchingKeys) return 'several keys in the key set match the token';
  if (err instanceof joseErrors.JWKSTimeout) return 'key set fetch timed out';
  if (err instanceof joseErrors.JOSEError) return err.code === 'ERR_JOSE_GENERIC' ? `key set unavailable: ${err.message}` : err.code;
  // A fetch failure (network, TLS, status) or a key/algorithm mismatch.
  return `key set unavailable or unusable: ${(err as Error).message}`;
}
