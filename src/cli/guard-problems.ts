/**
 * Guard findings (diff/guards.ts) as located problems for `vexil validate --base` and `vexil diff
 * --policy`: a finding about a flag of the head state points at that flag's declaration there (at
 * its `rules`, `rollouts` or `enabled` when the finding names one, else at its key); one about a
 * deleted flag points at the flag's declaration in the base state, whose files the caller names as
 * `REV:path` for a Git revision (git's own notation: `git show REV:path` opens it) or by the base
 * folder's path. A finding about no flag (a deleted empty namespace, an unmeasured impact guard)
 * has no file. The policy's `rules:` severities apply to them like to any problem.
 *
 * Locating re-parses the state files that hold a finding's flag (state/checks/locate-flags.ts),
 * only when there is a finding: a change that passes its guards costs nothing here.
 */
import type { GuardFinding } from '../diff/guards.js';
import type { GuardProblem } from '../diff/types.js';
import type { SourceFile } from '../sources/types.js';
import { locateFlags, type FlagPlace } from '../state/checks/locate-flags.js';
import type { StateFile } from '../state/load.js';
import { applySeverities } from '../state/policy/apply-severities.js';
import type { Policy } from '../state/policy/policy-file.js';

/** The files of one side: every file, the state files the index selected, and how a path is shown. */
export interface SideFiles {
  readonly files: readonly SourceFile[];
  readonly stateFiles: readonly string[];
  readonly display: (path: string) => string;
}

export async function guardProblems(findings: readonly GuardFinding[], policy: Policy, sides: { head: SideFiles; base: SideFiles }): Promise<GuardProblem[]> {
  const located = new Map<GuardFinding, { file: string; line: number; column: number }>();
  for (const side of ['head', 'base'] as const) {
    const mine = findings.filter((f) => f.side === side && f.flag !== undefined);
    if (mine.length === 0) continue;
    const places: FlagPlace[] = mine.map((f) => ({ namespace: f.namespace!, flag: f.flag!, ...(f.field !== undefined ? { under: [f.field] } : {}) }));
    const files = await stateFilesOf(sides[side]);
    locateFlags(files, places).forEach((pos, i) => {
      if (pos !== undefined) located.set(mine[i]!, { file: sides[side].display(pos.file), line: pos.line, column: pos.column });
    });
  }
  const problems: GuardProblem[] = findings.map((f) => ({
    severity: f.severity,
    rule: f.rule,
    ...(f.namespace !== undefined ? { namespace: f.namespace } : {}),
    ...(f.flag !== undefined ? { flag: f.flag } : {}),
    ...(located.get(f) ?? { file: '', line: 0, column: 0 }),
    message: f.message,
    hint: f.hint,
  }));
  return applySeverities(problems, policy.severities);
}

async function stateFilesOf(side: SideFiles): Promise<StateFile[]> {
  const wanted = new Set(side.stateFiles);
  const out: StateFile[] = [];
  for (const f of side.files) {
    if (!wanted.has(f.path)) continue;
    try {
      out.push({ path: f.path, bytes: await f.bytes() });
    } catch {
      // The side loaded, so its files were read once; a file gone since is left unlocated.
    }
  }
  return out;
}
