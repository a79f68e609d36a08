/**
 * Numbers Flipt holds as float32 (distribution `rollout`, threshold `percentage`), printed the way
 * Flipt's protojson prints a float32: the shortest decimal that reads back as the same float32.
 * For a percentage written with up to 7 significant digits (33.3, 12.75) that is the number as
 * written; a longer one is cut to what float32 keeps (33.333333333 → 33.333332), which is the
 * value Flipt, its clients' engine and vexil's evaluation (Math.fround) all compute with.
 */

/** float32 has 24 significant bits: 9 decimal digits always suffice to tell two apart. */
const MAX_DIGITS = 9;

/** The JS number whose JSON text is Go's shortest float32 text of `n`. */
export function float32Number(n: number): number {
  const f = Math.fround(n);
  if (!Number.isFinite(f) || f === 0) return f === 0 ? 0 : f;
  // The correctly rounded p-digit decimal of f is the nearest p-digit candidate, so the first p
  // whose candidate reads back as f is the shortest length (Go's strconv does the same search).
  for (let p = 1; p < MAX_DIGITS; p++) {
    const candidate = Number(f.toPrecision(p));
    if (Math.fround(candidate) === f) return candidate;
  }
  return Number(f.toPrecision(MAX_DIGITS));
}
