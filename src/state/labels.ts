/**
 * Words for places in a document, for problem messages: "flag `checkout`", "rule 2 of flag
 * `checkout`", "`match_type` of segment `beta`"; and the "did you mean" of misspelt names.
 */
import type { PathSegment } from './finding.js';

export function valueAt(doc: unknown, path: readonly PathSegment[]): unknown {
  let v = doc;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[seg];
  }
  return v;
}

const NOUN: Record<string, string> = {
  flags: 'flag',
  segments: 'segment',
  variants: 'variant',
  rules: 'rule',
  distributions: 'distribution',
  rollouts: 'rollout',
  constraints: 'constraint',
};

/** "flag `checkout`", "rule 2 of flag `checkout`", "constraint 1 of segment `beta`"... */
export function label(doc: unknown, path: readonly PathSegment[]): string {
  if (path.length === 0) return 'the document';
  const last = path[path.length - 1];
  if (typeof last === 'number' && path.length >= 2) {
    const coll = String(path[path.length - 2]);
    const parent = path.slice(0, -2);
    const noun = NOUN[coll];
    if (!noun) return `item ${last + 1} of ${fieldLabel(doc, path.slice(0, -1))}`;
    const key = (valueAt(doc, path) as { key?: unknown } | undefined)?.key;
    const own = (coll === 'flags' || coll === 'segments' || coll === 'variants') && typeof key === 'string'
      ? `${noun} \`${key}\``
      : `${noun} ${last + 1}`;
    return parent.length === 0 ? own : `${own} of ${label(doc, parent)}`;
  }
  const parent = path.slice(0, -1);
  if (last === 'namespace' && parent.length === 0) return 'the namespace';
  return `\`${String(last)}\` of ${label(doc, parent)}`;
}

/** "`name` of flag `checkout`". */
export function fieldLabel(doc: unknown, path: readonly PathSegment[]): string {
  if (path.length === 0) return 'the document';
  const last = path[path.length - 1];
  if (typeof last === 'number') return label(doc, path);
  const parent = path.slice(0, -1);
  return parent.length === 0 ? `\`${last}\`` : `\`${last}\` of ${label(doc, parent)}`;
}

/** The allowed name closest to a misspelt one (case, `_`/`-` and small edits), if any is close. */
export function closest(name: string, allowed: readonly string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
  let best: string | undefined;
  let bestDist = Infinity;
  let tie = false;
  for (const a of allowed) {
    const d = norm(a) === norm(name) ? 0 : editDistance(norm(a), norm(name));
    if (d < bestDist) {
      bestDist = d;
      best = a;
      tie = false;
    } else if (d === bestDist) {
      tie = true;
    }
  }
  // An ambiguous suggestion ("1.5": 1.0? 1.4?) helps nobody.
  if (tie) return undefined;
  return bestDist <= Math.max(1, Math.floor(name.length / 4)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Infinity;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}
