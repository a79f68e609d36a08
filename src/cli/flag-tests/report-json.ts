/**
 * `vexil test --format json`: an array with one object per case, in file order. `expected` holds
 * the expectations as given (reason in its long form), `actual` the result in the same vocabulary
 * (null when the flag could not be evaluated), `decision` the one-line explanation, and `trace`
 * the whole explain trace of a case that did not pass. Problems of test files and states are not
 * cases: the command prints them on stderr.
 */
import { formatDecision } from '../../evaluation/explain-words.js';
import type { TestRun } from './types.js';

export function reportJson(run: TestRun): string {
  const out = run.suites.flatMap((s) =>
    s.cases.map((r) => {
      const c = r.case;
      return {
        file: c.file,
        line: c.line,
        column: c.column,
        name: c.name,
        namespace: c.namespace,
        flag: c.flag,
        entity: c.entity,
        context: { ...c.context },
        status: r.status,
        expected: c.expect,
        actual: r.actual ?? null,
        mismatches: r.mismatches,
        message: r.message,
        ...(r.explanation !== undefined ? { decision: formatDecision(r.explanation) } : {}),
        ...(r.explanation !== undefined && r.status !== 'passed' ? { trace: r.explanation } : {}),
        durationMs: r.durationMs,
      };
    }),
  );
  return `${JSON.stringify(out, null, 2)}\n`;
}
