/**
 * The two ways a webhook delivery proves it comes from who holds the shared secret, both compared
 * in constant time:
 * - an HMAC-SHA256 of the raw body bytes, sent as 64 hex digits (GitHub's `X-Hub-Signature-256`
 *   and vexil's `X-Vexil-Signature` put `sha256=` before them, Gitea's and Forgejo's headers
 *   carry the digits alone);
 * - the secret itself (GitLab's `X-Gitlab-Token`, a registry's `Authorization: Bearer`), compared
 *   through SHA-256 digests of both sides, so neither its length nor a prefix leaks.
 * A header that is absent, repeated or not of the expected form is a mismatch like a wrong value.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;

/** The value of a header sent once (Node joins repeated ones into an array or a comma list). */
export function singleHeader(value: string | string[] | undefined): string | undefined {
  if (value === undefined || Array.isArray(value)) return undefined;
  return value;
}

/**
 * True when `presented` is the hex HMAC-SHA256 of `body` under `secret`, after the `prefix`
 * (`sha256=`, or '' for the bare digits; the hex is case-insensitive).
 */
export function hmacMatches(secret: Buffer, body: Buffer, presented: string | undefined, prefix: string): boolean {
  if (presented === undefined) return false;
  const text = presented.trim();
  if (!text.startsWith(prefix)) return false;
  const hex = text.slice(prefix.length);
  if (!HEX_DIGEST.test(hex)) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(hex, 'hex'));
}

/** True when `presented` equals `secret` (constant time in the secret's bytes and length). */
export function tokenMatches(secret: Buffer, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const a = createHash('sha256').update(secret).digest();
  const b = createHash('sha256').update(presented, 'utf8').digest();
  return timingSafeEqual(a, b);
}
