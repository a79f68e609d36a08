/**
 * The policy file's demands on a state (snapshot): `metadata.required` (every flag's metadata has
 * the keys: `policy.metadata.required`), `metadata.patterns` (a present value matches its key's
 * pattern: `policy.metadata.pattern`) and `keys` (flag and segment keys match:
 * `policy.key.pattern`), with a namespace's own demands merged over the top level's. Reports name places like the semantic checks (checks/check-report.ts), so
 * they are located and sorted with them. Pure; patterns run bounded (linear-regex.ts).
 */
import type { Snapshot } from '../../model/snapshot.js';
import { finding, type CheckReport } from '../checks/check-report.js';
import { MAX_SUBJECT_LENGTH } from './linear-regex.js';
import { demandsFor, type Policy } from './policy-file.js';

export function policyChecks(snapshot: Snapshot, policy: Policy): CheckReport[] {
  const out: CheckReport[] = [];
  for (const ns of snapshot.namespaces.values()) {
    const demands = demandsFor(policy, ns.key);
    const { required, patterns } = demands.metadata;
    const { flag: flagKey, segment: segmentKey } = demands.keys;
    for (const flag of ns.flags.values()) {
      if (flagKey !== undefined && !flagKey.test(flag.key)) {
        out.push(finding('policy.key.pattern', ns.key, { kind: 'flag', flag: flag.key, field: 'key' },
          `flag key \`${flag.key}\` does not match the policy's flag key pattern \`${flagKey.source}\``,
          `rename the flag to match \`${flagKey.source}\` (and update the code that evaluates it)`));
      }
      const m = flag.metadata ?? {};
      const missing = required.filter((k) => !Object.hasOwn(m, k));
      if (missing.length > 0) {
        const names = missing.map((k) => `\`${k}\``).join(', ');
        out.push(finding('policy.metadata.required', ns.key, { kind: 'flag', flag: flag.key, field: flag.metadata === undefined ? 'key' : 'metadata-map' },
          `flag \`${flag.key}\` has no ${names} in its metadata, which the policy requires`,
          `add ${names} under the flag's \`metadata\`${flag.metadata === undefined ? ' (document version 1.3 or later)' : ''}`));
      }
      for (const [key, re] of patterns) {
        if (!Object.hasOwn(m, key)) continue;
        const value = String(m[key]);
        if (re.test(value)) continue;
        const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value;
        const long = value.length > MAX_SUBJECT_LENGTH ? ` (over ${MAX_SUBJECT_LENGTH} characters, not matched)` : '';
        out.push(finding('policy.metadata.pattern', ns.key, { kind: 'flag', flag: flag.key, field: 'metadata', key },
          `flag \`${flag.key}\` has \`${key}: ${shown}\`${long}, which does not match the policy's pattern \`${re.source}\``,
          `write a value of \`${key}\` that matches \`${re.source}\``));
      }
    }
    if (segmentKey === undefined) continue;
    for (const segment of ns.segments.values()) {
      if (segmentKey.test(segment.key)) continue;
      out.push(finding('policy.key.pattern', ns.key, { kind: 'segment', segment: segment.key },
        `segment key \`${segment.key}\` does not match the policy's segment key pattern \`${segmentKey.source}\``,
        `rename the segment to match \`${segmentKey.source}\` (and the rules and rollouts that use it)`));
    }
  }
  return out;
}
