/**
 * Strict URL decoding. Koa and the router decode leniently (a bad `%` sequence passes through
 * as is); vexil refuses it with 400 so that a key never silently means something else. Also the
 * trimming of a path prefix a proxy passes on.
 */
import { Code, VexilError } from '../errors.js';
import { trimCharacter } from '../text.js';

/** Throws InvalidArgument when a path segment is not valid percent-encoded UTF-8. */
export function checkPathEncoding(path: string): void {
  if (!path.includes('%')) return;
  try {
    decodeURIComponent(path);
  } catch {
    throw new VexilError(Code.InvalidArgument, 'invalid percent-encoding in path');
  }
}

/**
 * Parses `a=1&b=x%20y` into a map. `+` means space (form encoding, as Go's url.ParseQuery).
 * A name given twice keeps its first value. Throws InvalidArgument on bad percent-encoding.
 */
export function parseQueryString(qs: string): Map<string, string> {
  const out = new Map<string, string>();
  if (qs === '') return out;
  for (const part of qs.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawName = eq === -1 ? part : part.slice(0, eq);
    const rawValue = eq === -1 ? '' : part.slice(eq + 1);
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    } catch {
      throw new VexilError(Code.InvalidArgument, 'invalid percent-encoding in query');
    }
    if (!out.has(name)) out.set(name, value);
  }
  return out;
}

/** `s` without its leading and trailing `/` (linear; see text.ts). */
export function trimSlashes(s: string): string {
  return trimCharacter(s, '/');
}
