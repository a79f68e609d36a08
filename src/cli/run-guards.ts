/**
 * The guards on a change, for the two commands that judge one (`vexil validate --base`, `vexil diff
 * --policy`): the governing policy's guards evaluated on the diff report of the two sides
 * (diff/guards.ts), the findings located in the sides' files (guard-problems.ts) and summed up as
 * the report both print. The report's `failed` is what fails the command.
 */
import { evaluateGuards, guardsFailed } from '../diff/guards.js';
import type { DiffReport, GuardReport } from '../diff/types.js';
import type { Policy } from '../state/policy/policy-file.js';
import { guardProblems } from './guard-problems.js';
import type { GuardPolicy } from './guard-policy.js';
import type { LoadedSide } from './diff/load-side.js';

export async function runGuards(report: DiffReport, chosen: GuardPolicy & { readonly policy: Policy }, base: LoadedSide, head: LoadedSide): Promise<GuardReport> {
  const guards = chosen.policy.guards;
  const findings = guards === undefined ? [] : evaluateGuards(report, guards, report.impact);
  const problems = await guardProblems(findings, chosen.policy, { head, base });
  return { policy: chosen.display, from: chosen.from, failed: guardsFailed(problems), findings: problems };
}
