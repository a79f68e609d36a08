/** The orders the loader relies on: files as Flipt walks them, keys as Go sorts them, problems for people. */
import type { Problem } from '../model/problem.js';

/** Compares paths by components (the order Go's fs.WalkDir visits files: `a/x.yml` before `a.yml`). */
export function compareWalkOrder(a: string, b: string): number {
  const pa = a.split('/');
  const pb = b.split('/');
  const n = Math.min(pa.length, pb.length);
  for (let i = 0; i < n; i++) {
    if (pa[i] !== pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return pa.length - pb.length;
}

/** Byte order of the UTF-8 encodings (= code point order), unlike `<` on UTF-16 strings. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Only surrogates (astral code points) sort differently from UTF-16 unit order.
    if (x >= 0xd800 && x <= 0xdfff && (y < 0xd800 || y > 0xdfff) && y >= 0xe000) return 1;
    if (y >= 0xd800 && y <= 0xdfff && (x < 0xd800 || x > 0xdfff) && x >= 0xe000) return -1;
    return x - y;
  }
  return a.length - b.length;
}

export function compareProblems(a: Problem, b: Problem): number {
  if (a.file !== b.file) return compareWalkOrder(a.file, b.file);
  if (a.line !== b.line) return a.line - b.line;
  if (a.column !== b.column) return a.column - b.column;
  if (a.severity !== b.severity) return a.severity === 'error' ? -1 : 1;
  return a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0;
}
