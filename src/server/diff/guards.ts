/**
 * The guards of `GET /api/v1/diff?...&policy=true`: which policy judges the change (the base
 * reference's `.vexil/policy.yml`, else the head's, as `vexil validate --base` and `vexil diff
 * --policy` choose, so a branch cannot loosen the guards it is judged by; kept with each snapshot
 * by store/state-policy.ts) and the findings of diff/guards.ts on the diff report, with the
 * policy's `rules:` severities applied. The answer names the namespace and flag of each finding
 * and no file position: the server holds snapshots, not files (the CLI locates them).
 *
 * Refused with 400 (FailedPrecondition) and the policy file's located problems in `details`: a
 * policy file that cannot be read or is malformed. Refused with 400 too: neither reference has a
 * policy file (there are no guards to check, and answering "passed" would be a silent pass), unless
 * the request says `policy=auto` (the UI's diff page: guards when a side has a policy, none otherwise).
 */
import { evaluateGuards, guardsFailed } from '../../diff/guards.js';
import type { DiffReport, GuardProblem, GuardReport } from '../../diff/types.js';
import { Code, VexilError } from '../../errors.js';
import type { Snapshot } from '../../model/snapshot.js';
import { applySeverities } from '../../state/policy/apply-severities.js';
import type { Policy } from '../../state/policy/policy-file.js';
import { STATE_POLICY_PATH, statePolicyOf } from '../../store/state-policy.js';
import { formatProblem } from '../../store/refusals.js';

export interface ChosenPolicy {
  readonly from: 'base' | 'head';
  readonly policy: Policy;
}

/** The base's policy, else the head's; throws the 400 described above. */
export function choosePolicy(base: Snapshot, head: Snapshot, refs: { base: string; head: string }): ChosenPolicy {
  for (const [from, snapshot] of [['base', base], ['head', head]] as const) {
    const kept = statePolicyOf(snapshot);
    if (kept === undefined) continue;
    if ('policy' in kept) return { from, policy: kept.policy };
    const first = kept.problems[0]!;
    throw new VexilError(Code.FailedPrecondition, `the policy file of ${from} reference "${refs[from]}" is invalid: ${formatProblem(first)}`, { details: [...kept.problems] });
  }
  throw new VexilError(Code.FailedPrecondition, `policy=true: neither reference "${refs.base}" nor "${refs.head}" has ${STATE_POLICY_PATH}`);
}

/** For `policy=auto`: whether either side has a policy file (then `choosePolicy` decides, with its refusals). */
export function hasPolicy(base: Snapshot, head: Snapshot): boolean {
  return statePolicyOf(base) !== undefined || statePolicyOf(head) !== undefined;
}

export function guardReport(report: DiffReport, chosen: ChosenPolicy): GuardReport {
  const guards = chosen.policy.guards;
  const findings = guards === undefined ? [] : evaluateGuards(report, guards, report.impact);
  const problems: GuardProblem[] = findings.map((f) => ({
    severity: f.severity,
    rule: f.rule,
    ...(f.namespace !== undefined ? { namespace: f.namespace } : {}),
    ...(f.flag !== undefined ? { flag: f.flag } : {}),
    file: '',
    line: 0,
    column: 0,
    message: f.message,
    hint: f.hint,
  }));
  const shown = applySeverities(problems, chosen.policy.severities);
  return { policy: STATE_POLICY_PATH, from: chosen.from, failed: guardsFailed(shown), findings: shown };
}
