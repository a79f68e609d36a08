/**
 * `vexil test --format github`: GitHub Actions workflow annotations. Every case that did not pass
 * becomes `::error file=…,line=…,col=…,title=…::…` at the line where the case starts in its test
 * file, with what differed, the actual result and which rule/rollout decided; problems of states
 * and test files are annotated where they are. Ends with the summary as a plain log line.
 */
import { formatGithub } from '../format-problems.js';
import { formatDecision, formatResult } from '../../evaluation/explain-words.js';
import { describeMismatch } from './run-case.js';
import { summarize } from './summary.js';
import type { CaseResult, TestRun } from './types.js';

export function reportGithub(run: TestRun): string {
  let out = '';
  for (const s of run.invalidStates) out += formatGithub(s.problems);
  for (const suite of run.suites) {
    out += formatGithub(suite.problems);
    for (const r of suite.cases) if (r.status !== 'passed') out += annotation(r);
  }
  const sum = summarize(run);
  return `${out}${sum.ok ? 'OK' : 'FAILED'}: ${sum.line}\n`;
}

function annotation(r: CaseResult): string {
  const c = r.case;
  const title = `${r.status === 'error' ? 'flag test not run' : 'flag test failed'}: ${c.name}`;
  const lines: string[] = [];
  if (r.mismatches.length > 0) lines.push(...r.mismatches.map(describeMismatch));
  else lines.push(r.message);
  lines.push(`flag ${c.namespace}/${c.flag}, entity ${JSON.stringify(c.entity)}`);
  if (r.explanation !== undefined) lines.push(`actual: ${formatResult(r.explanation)}`, `why: ${formatDecision(r.explanation)}`);
  const props = [`file=${escapeProperty(c.file)}`, `line=${c.line}`, `col=${c.column}`, `title=${escapeProperty(title)}`];
  return `::error ${props.join(',')}::${escapeData(lines.join('\n'))}\n`;
}

/** Workflow-command escaping (the same rules format-problems.ts applies). */
function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
