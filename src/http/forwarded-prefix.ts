/**
 * The `X-Forwarded-Prefix` a reverse proxy sends (reference §2.4): the path under which it serves
 * vexil, put in front of the paths vexil writes into answers (login URLs, the `Location` after a
 * login, links on error pages).
 *
 * Only a path of plain segments is used: RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`),
 * no empty, `.` or `..` segment. Anything else is ignored (no prefix): the value ends up at the
 * start of a `Location`, where `\evil.example` (read by browsers as `//evil.example`), `//host`,
 * a scheme or a dot segment would send the browser elsewhere.
 */
import { trimSlashes } from './url.js';

const SEGMENT = /^[A-Za-z0-9._~-]+$/;

/** The prefix without its outer slashes (`flags/v1`), or `''` when absent or not a plain path. */
export function forwardedPrefix(header: string | undefined): string {
  const prefix = trimSlashes((header ?? '').trim());
  if (prefix === '') return '';
  for (const segment of prefix.split('/')) {
    if (!SEGMENT.test(segment) || segment === '.' || segment === '..') return '';
  }
  return prefix;
}

/** `path` (starting with `/`) under the forwarded prefix: `/flags/v1` + `path`. */
export function withForwardedPrefix(header: string | undefined, path: string): string {
  const prefix = forwardedPrefix(header);
  return prefix === '' ? path : `/${prefix}${path}`;
}
