/**
 * `flag.rollouts.no-effect`: a boolean flag whose rollouts cannot change what it answers. Flipt
 * answers the flag's `enabled` value when no rollout matches, so when every rollout that can
 * decide answers that same value (or none can decide), everyone gets `enabled` whatever the
 * rollouts say (the public incident: `enabled: true` with a `value: true` segment rollout serves
 * true to everyone).
 */
import { finding, type CheckContext, type CheckReport } from './check-report.js';

export function booleanNoEffectChecks(ctx: CheckContext): CheckReport[] {
  const out: CheckReport[] = [];
  for (const ns of ctx.snapshot.namespaces.values()) {
    for (const flag of ns.flags.values()) {
      if (flag.type !== 'BOOLEAN_FLAG_TYPE' || flag.rollouts.length === 0) continue;
      const never = ctx.decisions(flag).never;
      let deciding = 0;
      let other = false;
      for (let i = 0; i < flag.rollouts.length; i++) {
        if (never[i] !== undefined) continue;
        const r = flag.rollouts[i];
        const value = r.threshold !== undefined ? r.threshold.value : r.segment!.value;
        deciding++;
        if (value !== flag.enabled) other = true;
      }
      if (other) continue;
      const v = String(flag.enabled);
      const why = deciding === 0 ? 'none of them ever decides' : `every rollout that can decide answers ${v}`;
      out.push(finding('flag.rollouts.no-effect', ns.key, { kind: 'flag', flag: flag.key, field: 'rollouts' },
        `the rollouts of flag \`${flag.key}\` cannot change its outcome: ${why}, and an entity no rollout matches gets ${v} too (the flag's \`enabled\`), so everyone gets ${v}`,
        flag.enabled
          ? 'to serve true only to the entities the rollouts match, set `enabled: false`; otherwise remove the rollouts'
          : 'to serve false only to the entities the rollouts match, set `enabled: true`; otherwise remove the rollouts'));
    }
  }
  return out;
}
