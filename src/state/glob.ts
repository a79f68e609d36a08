/**
 * Glob patterns of the index file, with the semantics Flipt gets from gobwas/glob compiled
 * without separator runes: `*` (and `**`) match any run of characters INCLUDING `/`, `?` one
 * character, `[abc]` / `[a-z]` / `[!a-z]` a class, `{a,b}` alternatives (which may hold globs),
 * `\x` a literal x. Patterns are compiled once and cached.
 */

export class GlobSyntaxError extends Error {
  constructor(
    readonly pattern: string,
    readonly offset: number,
    reason: string,
  ) {
    super(`invalid glob ${JSON.stringify(pattern)}: ${reason} at offset ${offset}`);
    this.name = 'GlobSyntaxError';
  }
}

const cache = new Map<string, RegExp>();
const CACHE_LIMIT = 1024;

/** The anchored RegExp equivalent to `pattern`; throws GlobSyntaxError on a malformed pattern. */
export function globToRegExp(pattern: string): RegExp {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const re = new RegExp(`^${translate(pattern)}$`, 'su');
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(pattern, re);
  return re;
}

export function globMatch(pattern: string, path: string): boolean {
  return globToRegExp(pattern).test(path);
}

// Characters that must be escaped in a `u`-mode RegExp (outside resp. inside a class).
const SYNTAX = new Set([...'\\^$.|?*+()[]{}/']);
const CLASS_SYNTAX = new Set([...'\\[]^-']);

function literal(ch: string): string {
  return SYNTAX.has(ch) ? `\\${ch}` : ch;
}

function classLiteral(ch: string): string {
  return CLASS_SYNTAX.has(ch) ? `\\${ch}` : ch;
}

function translate(p: string): string {
  let out = '';
  // Open `{` groups; a `,` at depth > 0 separates alternatives.
  let depth = 0;
  const chars = [...p];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    switch (c) {
      case '\\': {
        if (i + 1 >= chars.length) throw new GlobSyntaxError(p, i, 'dangling escape');
        out += literal(chars[++i]);
        break;
      }
      case '*':
        while (chars[i + 1] === '*') i++;
        out += '.*';
        break;
      case '?':
        out += '.';
        break;
      case '[': {
        const start = i;
        i++;
        let negate = false;
        if (chars[i] === '!') {
          negate = true;
          i++;
        }
        let cls = '';
        let closed = false;
        let count = 0;
        for (; i < chars.length; i++) {
          const d = chars[i];
          if (d === ']' && count > 0) {
            closed = true;
            break;
          }
          if (d === '\\') {
            if (i + 1 >= chars.length) break;
            cls += classLiteral(chars[++i]);
          } else if (chars[i + 1] === '-' && i + 2 < chars.length && chars[i + 2] !== ']') {
            const lo = d;
            const hi = chars[i + 2] === '\\' ? chars[i + 3] : chars[i + 2];
            if (hi === undefined) break;
            if (lo.codePointAt(0)! > hi.codePointAt(0)!) {
              throw new GlobSyntaxError(p, i, `inverted range ${lo}-${hi}`);
            }
            cls += `${classLiteral(lo)}-${classLiteral(hi)}`;
            i += chars[i + 2] === '\\' ? 3 : 2;
          } else {
            cls += classLiteral(d);
          }
          count++;
        }
        if (!closed) throw new GlobSyntaxError(p, start, 'unclosed character class');
        out += negate ? `[^${cls}]` : `[${cls}]`;
        break;
      }
      case '{':
        depth++;
        out += '(?:';
        break;
      case '}':
        if (depth === 0) throw new GlobSyntaxError(p, i, 'unmatched }');
        depth--;
        out += ')';
        break;
      case ',':
        out += depth > 0 ? '|' : ',';
        break;
      default:
        out += literal(c);
    }
  }
  if (depth > 0) throw new GlobSyntaxError(p, p.length, 'unclosed {');
  return out;
}
