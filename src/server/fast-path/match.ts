/**
 * Which hot route a request is for, as the fast path decides it: from the table's own patterns
 * (server/hot-routes.ts), so a pattern is written once. The fast path takes a request only when
 * the Koa router would read its path exactly as written: every parameter a plain segment
 * (letters, digits, `_.~-`: nothing to decode), no trailing slash, no empty segment. Anything
 * else (percent-encoding, a slash too many, another method) is no match, and Koa serves it.
 *
 * Cost: a route without parameters is one map lookup; the others are tried after it, in table
 * order, each a prefix test before any scanning. A GET route also answers HEAD, as the router's.
 */
import type { AnyHotRoute } from '../pipeline/hot-route.js';

/** Segments that need no decoding, so the router would read them as they are. */
const PLAIN_SEGMENT = /^[A-Za-z0-9_.~-]+$/;

export interface HotMatch {
  readonly route: AnyHotRoute;
  readonly params: Readonly<Record<string, string>>;
}

/** A pattern with parameters as its literal pieces: `pieces[i]` comes before parameter `names[i]`. */
interface CompiledPattern {
  readonly route: AnyHotRoute;
  /** Literal text: before the first parameter, between two (each starting with '/'), after the last ('' when it ends with one). */
  readonly pieces: readonly string[];
  readonly names: readonly string[];
}

export interface HotRouteMatcher {
  /** The route and parameters of a request; undefined leaves it to Koa. */
  match(method: string, path: string): HotMatch | undefined;
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

function compile(route: AnyHotRoute): CompiledPattern {
  const pieces: string[] = [];
  const names: string[] = [];
  let literal = '';
  for (const segment of route.pattern.split('/').slice(1)) {
    if (segment.startsWith(':')) {
      pieces.push(`${literal}/`);
      names.push(segment.slice(1));
      literal = '';
    } else literal += `/${segment}`;
  }
  pieces.push(literal);
  return { route, pieces, names };
}

/** The parameters of `path` under `p`, or undefined when it does not match exactly. */
function matchPattern(p: CompiledPattern, path: string): Record<string, string> | undefined {
  const { pieces, names } = p;
  if (!path.startsWith(pieces[0]!)) return undefined;
  let pos = pieces[0]!.length;
  const params: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) {
    let end = path.indexOf('/', pos);
    if (end === -1) end = path.length;
    const value = path.slice(pos, end);
    if (!PLAIN_SEGMENT.test(value)) return undefined;
    params[names[i]!] = value;
    const next = pieces[i + 1]!;
    if (!path.startsWith(next, end)) return undefined;
    pos = end + next.length;
  }
  return pos === path.length ? params : undefined;
}

export function hotRouteMatcher(routes: readonly AnyHotRoute[]): HotRouteMatcher {
  const fixed = new Map<string, Map<string, HotMatch>>();
  const patterns = new Map<string, CompiledPattern[]>();
  const add = (method: string, route: AnyHotRoute) => {
    if (!route.pattern.includes('/:')) {
      let byPath = fixed.get(method);
      if (byPath === undefined) fixed.set(method, (byPath = new Map()));
      byPath.set(route.pattern, { route, params: NO_PARAMS });
      return;
    }
    let list = patterns.get(method);
    if (list === undefined) patterns.set(method, (list = []));
    list.push(compile(route));
  };
  for (const route of routes) {
    add(route.method, route);
    if (route.method === 'GET') add('HEAD', route);
  }
  return {
    match(method, path) {
      const found = fixed.get(method)?.get(path);
      if (found !== undefined) return found;
      const list = patterns.get(method);
      if (list === undefined) return undefined;
      for (const p of list) {
        const params = matchPattern(p, path);
        if (params !== undefined) return { route: p.route, params };
      }
      return undefined;
    },
  };
}
