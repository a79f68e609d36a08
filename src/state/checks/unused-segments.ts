/**
 * `segment.unused`: a segment no flag of its namespace uses (no variant flag's rule, no boolean
 * flag's rollout; rules of boolean flags are ignored by evaluation and do not count). It is dead
 * weight, or a flag was meant to use it and names another.
 */
import { finding, type CheckContext, type CheckReport } from './check-report.js';

export function unusedSegmentChecks(ctx: CheckContext): CheckReport[] {
  const out: CheckReport[] = [];
  for (const ns of ctx.snapshot.namespaces.values()) {
    if (ns.segments.size === 0) continue;
    const used = new Set<string>();
    for (const flag of ns.flags.values()) {
      if (flag.type === 'VARIANT_FLAG_TYPE') {
        for (const r of flag.rules) {
          if (r.segmentKey !== '') used.add(r.segmentKey);
          for (const k of r.segmentKeys) used.add(k);
        }
      } else {
        for (const r of flag.rollouts) {
          if (r.segment === undefined) continue;
          if (r.segment.segmentKey !== '') used.add(r.segment.segmentKey);
          for (const k of r.segment.segmentKeys) used.add(k);
        }
      }
    }
    for (const segment of ns.segments.values()) {
      if (used.has(segment.key)) continue;
      out.push(finding('segment.unused', ns.key, { kind: 'segment', segment: segment.key },
        `segment \`${segment.key}\` is used by no flag of namespace \`${ns.key}\`: it changes no evaluation`,
        'remove it, or reference it from the rule or rollout that was meant to use it'));
    }
  }
  return out;
}
