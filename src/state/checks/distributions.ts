/**
 * `rule.distributions.incomplete`: a rule whose distributions leave some buckets without a
 * variant. Entities in those buckets get no variant (match false, the default variant if any) and
 * do NOT fall through to the next rule (flipt-semantics.md §2.3). Read from the compiled bounds the
 * evaluators use, so Flipt's truncation of each share to tenths of a percent counts
 * (33.34/33.33/33.33 leaves 0.1%). Rules that never decide, or have no distribution over 0%
 * (those serve the default variant as a match), are left out.
 */
import { finding, percent, type CheckContext, type CheckReport } from './check-report.js';

const BUCKETS = 1000;

export function distributionChecks(ctx: CheckContext): CheckReport[] {
  const out: CheckReport[] = [];
  for (const ns of ctx.snapshot.namespaces.values()) {
    for (const flag of ns.flags.values()) {
      const v = flag.compiled.variant;
      if (v === null) continue;
      const never = ctx.decisions(flag).never;
      for (let r = 0; r < v.rules.length; r++) {
        const bounds = v.rules[r].bounds;
        if (never[r] !== undefined || bounds.length === 0) continue;
        const covered = bounds[bounds.length - 1];
        if (covered >= BUCKETS) continue;
        const written = flag.rules[r].distributions.reduce((sum, d) => sum + (d.rollout > 0 ? d.rollout : 0), 0);
        const truncated = written >= 100 - 1e-9;
        out.push(finding('rule.distributions.incomplete', ns.key, { kind: 'rule', flag: flag.key, index: r, field: 'distributions' },
          `${percent(BUCKETS - covered, BUCKETS)} of the entities rule ${r + 1} of flag \`${flag.key}\` matches get no variant (match false${flag.defaultVariant ? `, default variant \`${flag.defaultVariant.key}\`` : ''}) and do not fall through to the next rule: ${truncated ? 'each share counts in whole tenths of a percent (truncated), so the written 100% covers less' : `the distributions add up to ${Math.round(written * 1000) / 1000}%`}`,
          truncated ? 'use shares with at most one decimal that add up to 100 (e.g. 33.4, 33.3, 33.3)' : 'make the distributions add up to 100, or add a distribution for the rest'));
      }
    }
  }
  return out;
}
