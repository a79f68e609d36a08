/**
 * `segment.unmatchable`: a segment no entity can match (segment-verdicts.ts decides it, never by
 * guessing): every rule and rollout naming it alone never decides, which is rarely what was meant
 * (`plan eq beta` AND `plan eq pro`, an empty number range, `isoneof` disjoint from `eq`...).
 * Reported at the last constraint that makes it impossible.
 */
import { finding, type CheckContext, type CheckReport } from './check-report.js';
import { segmentVerdict } from './segment-verdicts.js';

export function unmatchableChecks(ctx: CheckContext): CheckReport[] {
  const out: CheckReport[] = [];
  for (const ns of ctx.snapshot.namespaces.values()) {
    for (const segment of ns.segments.values()) {
      const v = segmentVerdict(segment);
      if (v.kind !== 'never') continue;
      const numbers = v.constraints.map((i) => i + 1);
      const what = segment.matchType === 'ALL_MATCH_TYPE'
        ? numbers.length === 1
          ? `its constraint ${numbers[0]} never holds`
          : `its constraints ${numbers.join(', ')}${v.subject !== null ? ` on \`${v.subject}\`` : ' on the entity id'} cannot all hold (ALL_MATCH_TYPE needs every one)`
        : 'none of its constraints can hold (ANY_MATCH_TYPE needs one)';
      out.push(finding('segment.unmatchable', ns.key, { kind: 'segment', segment: segment.key, constraint: v.constraints[v.constraints.length - 1] },
        `segment \`${segment.key}\` matches no entity: ${what}; rules and rollouts that need it never match`,
        segment.matchType === 'ALL_MATCH_TYPE' ? 'fix the contradicting constraints, or use ANY_MATCH_TYPE if any one of them should do' : 'fix the constraints'));
    }
  }
  return out;
}
