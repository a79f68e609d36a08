/**
 * The origin lists of `cors.allowed_origins`: their syntax (checked when the config is loaded)
 * and matching a request's `Origin` against them (src/server/pipeline/cors.ts). An entry is `*` (every
 * origin; then it must be the only entry), an origin as browsers send it
 * (`https://app.example.com`, `http://127.0.0.1:3000`), or an origin with one `*` standing for
 * any non-empty text (`https://*.example.com`), as Flipt's CORS library reads them. Compared in
 * lower case, as Flipt does.
 */

export interface OriginList {
  /** The list is `["*"]`: every origin. */
  readonly any: boolean;
  /** Whether a request's `Origin` is in the list (always true when `any`). */
  allows(origin: string): boolean;
}

/** scheme://host[:port]: no path, query, fragment, space or trailing slash. */
const ORIGIN_SHAPE = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s*]+$/;

/** Why one entry of the list is unusable, or undefined when it is fine. */
export function originEntryProblem(entry: string, all: readonly string[]): string | undefined {
  if (entry === '*') return all.length > 1 ? '"*" must be the only entry (it allows every origin, without credentials)' : undefined;
  if (entry.indexOf('*') !== entry.lastIndexOf('*')) return 'at most one "*" per origin';
  if (!ORIGIN_SHAPE.test(entry.toLowerCase().replace('*', 'x'))) {
    return 'expected an origin: scheme://host[:port], without path or trailing slash (e.g. https://app.example.com)';
  }
  return undefined;
}

/** The matcher of a list that passed `originEntryProblem`. Linear in the origin's length per `*` entry. */
export function originList(entries: readonly string[]): OriginList {
  const exact = new Set<string>();
  const patterns: Array<{ prefix: string; suffix: string }> = [];
  let any = false;
  for (const entry of entries) {
    const e = entry.toLowerCase();
    const star = e.indexOf('*');
    if (e === '*') any = true;
    else if (star === -1) exact.add(e);
    else patterns.push({ prefix: e.slice(0, star), suffix: e.slice(star + 1) });
  }
  return {
    any,
    allows(origin) {
      if (any) return true;
      const o = origin.toLowerCase();
      if (exact.has(o)) return true;
      for (const { prefix, suffix } of patterns) {
        if (o.length > prefix.length + suffix.length && o.startsWith(prefix) && o.endsWith(suffix)) return true;
      }
      return false;
    },
  };
}
