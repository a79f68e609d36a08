/**
 * The policy file's `rules:` severities applied to reported problems: a problem of a named rule
 * takes the policy's severity, or is dropped for `off`. Problems of the policy file itself are
 * never changed (they come from reading it, not from the state). Rules the catalogue makes errors
 * that stop a state from loading cannot be lowered: policy-file.ts refuses that when reading.
 */
import type { Problem } from '../../model/problem.js';
import type { RuleId } from '../rules.js';
import type { PolicySeverity } from './policy-file.js';

export function applySeverities<P extends Problem>(problems: readonly P[], severities: ReadonlyMap<RuleId, PolicySeverity>): P[] {
  if (severities.size === 0) return [...problems];
  const out: P[] = [];
  for (const p of problems) {
    const s = severities.get(p.rule as RuleId);
    if (s === undefined) out.push(p);
    else if (s !== 'off') out.push(s === p.severity ? p : { ...p, severity: s });
  }
  return out;
}
