/** Set-Cookie values with the attributes every vexil session cookie shares. */

export interface CookieAttributes {
  /** ms; 0 = delete now. */
  maxAge: number;
  httpOnly: boolean;
  secure: boolean;
  domain: string | undefined;
}

/** One Set-Cookie value with vexil's session attributes (Path=/, SameSite=Lax). */
export function sessionCookie(name: string, value: string, attrs: CookieAttributes, now: number): string {
  const parts = [`${name}=${value}`, 'Path=/'];
  // Browsers refuse a Domain attribute of "localhost": leave it off there (reference §2.7).
  if (attrs.domain !== undefined && attrs.domain !== 'localhost') parts.push(`Domain=${attrs.domain}`);
  const seconds = Math.max(0, Math.floor(attrs.maxAge / 1000));
  parts.push(`Max-Age=${seconds}`, `Expires=${new Date(now + seconds * 1000).toUTCString()}`);
  if (attrs.httpOnly) parts.push('HttpOnly');
  if (attrs.secure) parts.push('Secure');
  parts.push('SameSite=Lax');
  return parts.join('; ');
}
