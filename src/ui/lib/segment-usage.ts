/**
 * Which flags use a segment, read from one document: the namespace's client-side evaluation
 * snapshot (`GET /internal/v1/evaluation/snapshot/namespace/{ns}`), which inlines every rule's
 * and rollout's segments. One request instead of one per flag; the segment page asks for it only
 * when the person wants to know, since on a large namespace the document is large. Pure, no DOM.
 */

interface UsageSegmentRef {
  key: string;
}

/** The part of the snapshot document read here. */
export interface UsageDocument {
  flags: ReadonlyArray<{
    key: string;
    name: string;
    type: string;
    rules: ReadonlyArray<{ rank: number; segments: readonly UsageSegmentRef[] }>;
    rollouts: ReadonlyArray<{ rank: number; segment?: { segments: readonly UsageSegmentRef[] } }>;
  }>;
}

export interface SegmentUse {
  flagKey: string;
  flagName: string;
  /** `rule 1, rule 3` or `rollout 2`: where in the flag, by rank. */
  where: string;
}

/** The flags naming `segmentKey` in a rule or rollout, in the document's (key) order. */
export function segmentUses(doc: UsageDocument, segmentKey: string): SegmentUse[] {
  const uses: SegmentUse[] = [];
  for (const flag of doc.flags) {
    const places: string[] = [];
    for (const r of flag.rules) if (r.segments.some((s) => s.key === segmentKey)) places.push(`rule ${r.rank}`);
    for (const r of flag.rollouts) if (r.segment?.segments.some((s) => s.key === segmentKey)) places.push(`rollout ${r.rank}`);
    if (places.length > 0) uses.push({ flagKey: flag.key, flagName: flag.name, where: places.join(', ') });
  }
  return uses;
}
