/**
 * Client token values: 32 random bytes, base64url. Only the SHA-256 digest of a token is ever
 * stored or kept in memory; the raw value is returned once, when it is created.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const TOKEN_BYTES = 32;

export function generateToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** SHA-256 of the token's UTF-8 bytes. */
export function digestToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** How a digest is written in the store and used as a lookup key (43 base64url characters). */
export function digestKey(digest: Buffer): string {
  return digest.toString('base64url');
}

export function hashToken(token: string): string {
  return digestKey(digestToken(token));
}

/**
 * Whether two digests are equal, in constant time. The lookup that found a record used the digest
 * as an index key; this re-check keeps the final decision free of early-exit comparison.
 */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
