/**
 * `rule.unreachable` and `rollout.unreachable`: a rule or rollout that can never decide
 * (decisions.ts says why). What it says is never served, however its segments or values change,
 * until what shadows it changes: usually a reordering mistake or a catch-all placed too early.
 */
import { finding, type CheckContext, type CheckReport } from './check-report.js';

export function unreachableChecks(ctx: CheckContext): CheckReport[] {
  const out: CheckReport[] = [];
  for (const ns of ctx.snapshot.namespaces.values()) {
    for (const flag of ns.flags.values()) {
      const never = ctx.decisions(flag).never;
      for (let i = 0; i < never.length; i++) {
        const n = never[i];
        if (n === undefined) continue;
        const hint = n.by !== undefined
          ? `move it before ${flag.type === 'VARIANT_FLAG_TYPE' ? 'rule' : 'rollout'} ${n.by + 1}, narrow that one, or remove this one`
          : 'fix its segments (or threshold), or remove it';
        if (flag.type === 'VARIANT_FLAG_TYPE') {
          out.push(finding('rule.unreachable', ns.key, { kind: 'rule', flag: flag.key, index: i },
            `rule ${i + 1} of flag \`${flag.key}\` never decides: ${n.because}; its distributions are never served`, hint));
        } else {
          out.push(finding('rollout.unreachable', ns.key, { kind: 'rollout', flag: flag.key, index: i },
            `rollout ${i + 1} of flag \`${flag.key}\` never decides: ${n.because}; its value is never served`, hint));
        }
      }
    }
  }
  return out;
}
