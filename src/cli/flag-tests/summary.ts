/** The counts of a run and its verdict: it passes only when every case ran and passed. */
import type { TestRun } from './types.js';

export interface Summary {
  readonly cases: number;
  readonly passed: number;
  readonly failed: number;
  /** Cases that could not run (their state is invalid). */
  readonly notRun: number;
  /** Test files with problems (their broken cases are not counted as cases). */
  readonly invalidFiles: number;
  readonly files: number;
  readonly ok: boolean;
  /** `9 passed (9 cases in 2 test files)`, `1 failed, 8 passed, ...`. */
  readonly line: string;
}

export function summarize(run: TestRun): Summary {
  let passed = 0;
  let failed = 0;
  let notRun = 0;
  for (const s of run.suites) {
    for (const c of s.cases) {
      if (c.status === 'passed') passed++;
      else if (c.status === 'failed') failed++;
      else notRun++;
    }
  }
  const invalidFiles = run.suites.filter((s) => s.problems.some((p) => p.severity === 'error')).length;
  const cases = passed + failed + notRun;
  const files = run.suites.length;
  const ok = cases > 0 && passed === cases && invalidFiles === 0 && run.invalidStates.length === 0;
  const parts: string[] = [];
  if (failed > 0) parts.push(`${failed} failed`);
  parts.push(`${passed} passed`);
  if (notRun > 0) parts.push(`${notRun} not run`);
  if (invalidFiles > 0) parts.push(`${invalidFiles} invalid test ${invalidFiles === 1 ? 'file' : 'files'}`);
  if (run.invalidStates.length > 0) parts.push(`${run.invalidStates.length} invalid ${run.invalidStates.length === 1 ? 'state' : 'states'}`);
  const line = `${parts.join(', ')} (${cases} ${cases === 1 ? 'case' : 'cases'} in ${files} test ${files === 1 ? 'file' : 'files'})`;
  return { cases, passed, failed, notRun, invalidFiles, files, ok, line };
}
