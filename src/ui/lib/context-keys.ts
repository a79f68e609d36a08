/**
 * The context keys a namespace's segments read, from their constraints as the segments list
 * (`GET /api/v1/namespaces/{ns}/segments`) gives them: each key once, in alphabetical order, with the
 * segments that read it. Entity-id constraints read the entity id, not the context, and are left
 * out. The console and the entity page offer these keys as ready rows, so a person need not know
 * them before the trace says which were missing. Pure, no DOM.
 */

/** The fields of a segment read here (the API's segment has more). */
export interface SegmentLike {
  key: string;
  constraints: ReadonlyArray<{ type: string; property: string }>;
}

export interface ContextKey {
  key: string;
  /** The segments with a constraint on this key, in the order listed. */
  segments: string[];
}

export function contextKeysOf(segments: readonly SegmentLike[]): ContextKey[] {
  const byKey = new Map<string, string[]>();
  for (const s of segments) {
    for (const c of s.constraints) {
      if (c.type === 'ENTITY_ID_COMPARISON_TYPE' || c.property === '') continue;
      const list = byKey.get(c.property) ?? [];
      if (!list.includes(s.key)) list.push(s.key);
      byKey.set(c.property, list);
    }
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, segs]) => ({ key, segments: segs }));
}

/** `read by segment eu` / `read by segments eu, beta`. */
export function readByText(k: ContextKey): string {
  return `read by segment${k.segments.length === 1 ? '' : 's'} ${k.segments.join(', ')}`;
}
