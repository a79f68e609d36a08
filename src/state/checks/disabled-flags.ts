/**
 * `flag.disabled.rules` (information): a disabled variant flag with rules that would decide if it
 * were enabled. While disabled every entity gets FLAG_DISABLED (and the default variant), so the
 * rules are not in force: worth knowing before someone flips `enabled`. Boolean flags are not
 * concerned: their rollouts apply whether enabled or not (`enabled` is only the fall-through).
 */
import { finding, type CheckContext, type CheckReport } from './check-report.js';

export function disabledFlagChecks(ctx: CheckContext): CheckReport[] {
  const out: CheckReport[] = [];
  for (const ns of ctx.snapshot.namespaces.values()) {
    for (const flag of ns.flags.values()) {
      if (flag.type !== 'VARIANT_FLAG_TYPE' || flag.enabled || flag.rules.length === 0) continue;
      const deciding = ctx.decisions(flag).never.filter((n) => n === undefined).length;
      if (deciding === 0) continue;
      out.push(finding('flag.disabled.rules', ns.key, { kind: 'flag', flag: flag.key, field: 'enabled' },
        `flag \`${flag.key}\` is disabled: every entity gets FLAG_DISABLED${flag.defaultVariant ? ` and variant \`${flag.defaultVariant.key}\`` : ''}; its ${deciding === 1 ? 'rule' : `${deciding} rules`} would decide once it is enabled`,
        'enable the flag when its rules should apply, or remove the rules'));
    }
  }
  return out;
}
