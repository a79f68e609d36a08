/**
 * The glob matcher src/state/glob.ts had before issue 11: each pattern translated to an anchored
 * RegExp (`*` → `.*`, which a backtracking engine can take exponential time on). Kept only as the
 * reference the new automaton is compared with on short random inputs (glob.test.ts): same
 * matches, same syntax errors.
 */
import { GlobSyntaxError } from '../../src/state/glob.js';

export function referenceGlobToRegExp(pattern: string): RegExp {
  return new RegExp(`^${translate(pattern)}$`, 'su');
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
