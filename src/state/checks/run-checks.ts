/**
 * The semantic checks of `vexil validate`: mistakes that pass validation because the state is
 * well formed yet does something nobody meant, computed from the evaluation semantics (the
 * compiled flags and the evaluator's own constraint matching), one family per file. Runs on a
 * built snapshot (a state with errors has none: its errors come first). Pure: "today" comes in
 * through the options. The policy file's metadata and key checks (policy/policy-checks.ts) run
 * last, when the options carry a policy. Reports come in family order; load.ts locates and sorts them.
 */
import type { Snapshot } from '../../model/snapshot.js';
import { booleanNoEffectChecks } from './boolean-no-effect.js';
import { CheckContext, type CheckOptions, type CheckReport } from './check-report.js';
import { disabledFlagChecks } from './disabled-flags.js';
import { distributionChecks } from './distributions.js';
import { lifecycleChecks } from './lifecycle.js';
import { policyChecks } from '../policy/policy-checks.js';
import { requestTimeChecks } from './request-time.js';
import { unmatchableChecks } from './unmatchable.js';
import { unreachableChecks } from './unreachable.js';
import { unservedVariantChecks } from './unserved-variants.js';
import { unusedSegmentChecks } from './unused-segments.js';

export type { CheckOptions, CheckReport } from './check-report.js';

const FAMILIES: ReadonlyArray<(ctx: CheckContext) => CheckReport[]> = [
  booleanNoEffectChecks,
  unreachableChecks,
  distributionChecks,
  unmatchableChecks,
  unusedSegmentChecks,
  unservedVariantChecks,
  disabledFlagChecks,
  requestTimeChecks,
  (ctx) => lifecycleChecks(ctx.snapshot, ctx.options.today),
  (ctx) => (ctx.options.policy !== undefined ? policyChecks(ctx.snapshot, ctx.options.policy) : []),
];

export function runChecks(snapshot: Snapshot, options: CheckOptions): CheckReport[] {
  const ctx = new CheckContext(snapshot, options);
  const out: CheckReport[] = [];
  for (const family of FAMILIES) out.push(...family(ctx));
  return out;
}
