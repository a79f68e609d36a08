/**
 * Whether a flag reads the same on two references: its management shapes (the flag, its rules or
 * rollouts, the segments they name) compared with the timestamps left out — every timestamp is the
 * snapshot's build time, so it differs between references even when nothing else does — and ids
 * kept, which are derived from namespace, flag and position (the same content has the same ids).
 * Pure, no DOM.
 */

/** A JSON value with every `createdAt` / `updatedAt` field dropped, object keys sorted. */
export function withoutTimestamps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimestamps);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value as Record<string, unknown>).sort()) {
      if (k === 'createdAt' || k === 'updatedAt') continue;
      out[k] = withoutTimestamps((value as Record<string, unknown>)[k]);
    }
    return out;
  }
  return value;
}

/** True when `a` and `b` are the same apart from timestamps. */
export function sameApartFromTimestamps(a: unknown, b: unknown): boolean {
  return JSON.stringify(withoutTimestamps(a)) === JSON.stringify(withoutTimestamps(b));
}
