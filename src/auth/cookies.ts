/**
 * Set-Cookie values with the attributes every vexil session cookie shares, and the one rule for
 * their `Domain` attribute: it is set only for a dotted host name. For `localhost`, any other
 * single-label name (`vexil`, a Kubernetes service) or an IP address it is left off, so the cookie
 * is host-only: browsers refuse or mis-scope a Domain there, and host-only is the narrower choice.
 */
import { isIP } from 'node:net';

export interface CookieAttributes {
  /** ms; 0 = delete now. */
  maxAge: number;
  httpOnly: boolean;
  secure: boolean;
  domain: string | undefined;
}

/** The `Domain` attribute for `session.domain`, or undefined for a host-only cookie. */
export function cookieDomain(domain: string | undefined): string | undefined {
  if (domain === undefined) return undefined;
  const host = domain.trim().replace(/\.$/, '');
  if (host === '' || !host.includes('.') || host.startsWith('[') || isIP(host) !== 0) return undefined;
  return host;
}

/** One Set-Cookie value with vexil's session attributes (Path=/, SameSite=Lax). */
export function sessionCookie(name: string, value: string, attrs: CookieAttributes, now: number): string {
  const parts = [`${name}=${value}`, 'Path=/'];
  const domain = cookieDomain(attrs.domain);
  if (domain !== undefined) parts.push(`Domain=${domain}`);
  const seconds = Math.max(0, Math.floor(attrs.maxAge / 1000));
  parts.push(`Max-Age=${seconds}`, `Expires=${new Date(now + seconds * 1000).toUTCString()}`);
  if (attrs.httpOnly) parts.push('HttpOnly');
  if (attrs.secure) parts.push('Secure');
  parts.push('SameSite=Lax');
  return parts.join('; ');
}

/** A Set-Cookie value that makes the browser drop `name` (the same Path and Domain it was set with). */
export function clearCookie(name: string, domain: string | undefined): string {
  const d = cookieDomain(domain);
  return `${name}=; Path=/${d !== undefined ? `; Domain=${d}` : ''}; Max-Age=0`;
}
