/**
 * `variant.unserved`: a variant of a variant flag with rules that evaluation never serves: not
 * the default variant, and in no distribution over 0% (a share truncated to 0 buckets counts as
 * 0%) of a rule that can decide. Clients reading it get it only from the flag's listing. Disabled flags are
 * judged as if enabled (flag.disabled.rules covers their being disabled).
 */
import { finding, type CheckContext, type CheckReport } from './check-report.js';

export function unservedVariantChecks(ctx: CheckContext): CheckReport[] {
  const out: CheckReport[] = [];
  for (const ns of ctx.snapshot.namespaces.values()) {
    for (const flag of ns.flags.values()) {
      const v = flag.compiled.variant;
      // A flag without rules serves its default (or nothing) to everyone: its other variants are
      // the alternatives a default is switched to, not a mistake.
      if (v === null || flag.variants.length === 0 || flag.rules.length === 0) continue;
      const served = new Set<string>();
      if (flag.defaultVariant !== undefined) served.add(flag.defaultVariant.key);
      const never = ctx.decisions(flag).never;
      for (let r = 0; r < v.rules.length; r++) {
        if (never[r] !== undefined) continue;
        let prev = 0;
        const rule = v.rules[r];
        for (let i = 0; i < rule.bounds.length; i++) {
          if (rule.bounds[i] > prev && prev < 1000) served.add(rule.hits[i].variantKey);
          prev = rule.bounds[i];
        }
      }
      for (let i = 0; i < flag.variants.length; i++) {
        const variant = flag.variants[i];
        if (served.has(variant.key)) continue;
        out.push(finding('variant.unserved', ns.key, { kind: 'variant', flag: flag.key, index: i },
          `variant \`${variant.key}\` of flag \`${flag.key}\` is never served: it is not the default variant and no rule that can decide gives it a share over 0%`,
          'give it a share in a rule, make it the default variant, or remove it'));
      }
    }
  }
  return out;
}
