/**
 * A browser's cookie jar, as far as login tests need one: keeps the cookies of every response
 * given to `store` (a `Max-Age=0` or past `Expires` drops one), sends them back with `header()`,
 * and keeps each cookie's attributes so tests can check them. One jar = one browser; Domain and
 * Path are recorded, not matched (tests talk to one server).
 */
export interface StoredCookie {
  readonly name: string;
  readonly value: string;
  /** Attribute names lower-cased → value ('' for flags such as HttpOnly). */
  readonly attributes: Readonly<Record<string, string>>;
}

export class CookieJar {
  private readonly cookies = new Map<string, StoredCookie>();

  /** Takes the Set-Cookie headers of a response. */
  store(res: Response): this {
    for (const line of res.headers.getSetCookie()) this.set(line);
    return this;
  }

  set(line: string): void {
    const [pair = '', ...rest] = line.split(';');
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const attributes: Record<string, string> = {};
    for (const part of rest) {
      const i = part.indexOf('=');
      const key = (i < 0 ? part : part.slice(0, i)).trim().toLowerCase();
      attributes[key] = i < 0 ? '' : part.slice(i + 1).trim();
    }
    const expired =
      attributes['max-age'] !== undefined ? Number(attributes['max-age']) <= 0 : attributes.expires !== undefined && Date.parse(attributes.expires) <= Date.now();
    if (expired || value === '') this.cookies.delete(name);
    else this.cookies.set(name, { name, value, attributes });
  }

  get(name: string): StoredCookie | undefined {
    return this.cookies.get(name);
  }

  delete(name: string): void {
    this.cookies.delete(name);
  }

  /** The Cookie request header ('' when the jar is empty). */
  header(): string {
    return [...this.cookies.values()].map((c) => `${c.name}=${c.value}`).join('; ');
  }

  /** fetch init headers with the jar's cookies added. */
  with(headers: Record<string, string> = {}): Record<string, string> {
    const cookie = this.header();
    return cookie === '' ? headers : { ...headers, cookie };
  }
}
