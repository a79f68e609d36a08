/**
 * Client token values: 32 random bytes, base64url. Only the SHA-256 digest of a token is ever
 * stored or kept in memory; the raw value is returned once, when it is created.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const TOKEN_BYTES = 32;

export function generateToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** SHA-256 of the token's UTF-8 bytes. */
export function digestToken(token: string): Buffer {
  return Buffer.from(tokenKey(token), 'base64url');
}

/** How a digest is written in the store and used as a lookup key (43 base64url characters). */
export function digestKey(digest: Buffer): string {
  return digest.toString('base64url');
}

/**
 * The token's SHA-256 digest written as digestKey writes it. It runs on every authenticated
 * request: the one-shot crypto.hash straight to text costs a fifth of createHash().update().digest()
 * (no Hash object, no intermediate Buffer), which showed in the authenticated evaluation profile.
 */
export function tokenKey(token: string): string {
  return hash('sha256', token, 'base64url');
}

export function hashToken(token: string): string {
  return tokenKey(token);
}

/**
 * Whether two digests are equal, in constant time. The lookup that found a record used the digest
 * as an index key; this re-check keeps the final decision free of early-exit comparison.
 */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
