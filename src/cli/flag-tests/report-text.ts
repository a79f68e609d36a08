/**
 * `vexil test --format text`: a ✓/✗ line per case, grouped by test file; a failing case shows where
 * it is, what it asked, each expectation that did not hold, the actual result, which rule or
 * rollout decided and the explain trace; then a summary line.
 */
import { countSummary, formatText } from '../format-problems.js';
import { formatDecision, formatResult, formatTrace } from '../../evaluation/explain-words.js';
import { describeMismatch } from './run-case.js';
import type { CaseResult, TestRun } from './types.js';
import { summarize } from './summary.js';

export function reportText(run: TestRun): string {
  let out = '';
  for (const s of run.invalidStates) {
    out += `the state in ${s.state} is invalid (${countSummary(s.problems)}); its cases were not run\n`;
    out += formatText(s.problems, (f) => s.lines.get(f));
    out += '\n';
  }
  for (const suite of run.suites) {
    out += `${suite.file}\n`;
    if (suite.problems.length > 0) {
      out += indent(formatText(suite.problems, (f) => (f === suite.file ? suite.lines : undefined)), '  ');
    }
    for (const r of suite.cases) out += caseText(r);
  }
  const sum = summarize(run);
  if (out !== '') out += '\n';
  out += `${sum.ok ? 'OK' : 'FAILED'}: ${sum.line}\n`;
  return out;
}

function caseText(r: CaseResult): string {
  const c = r.case;
  if (r.status === 'passed') return `  ✓ ${c.name}\n`;
  const pad = '      ';
  let out = `  ✗ ${c.name}\n`;
  out += `${pad}at ${c.file}:${c.line}:${c.column}\n`;
  const ctx = Object.keys(c.context);
  const context = ctx.length === 0 ? 'empty context' : `context ${ctx.map((k) => `${k}=${JSON.stringify(c.context[k])}`).join(' ')}`;
  out += `${pad}flag ${c.namespace}/${c.flag}, entity ${JSON.stringify(c.entity)}, ${context}\n`;
  if (r.status === 'error') {
    out += `${pad}not run: ${r.message}\n`;
    return out;
  }
  if (r.mismatches.length > 0) for (const m of r.mismatches) out += `${pad}${describeMismatch(m)}\n`;
  else out += `${pad}${r.message}\n`;
  const e = r.explanation;
  if (e !== undefined) {
    out += `${pad}actual:  ${formatResult(e)}\n`;
    out += `${pad}why:     ${formatDecision(e)}\n`;
    out += `${pad}trace:\n`;
    for (const line of formatTrace(e)) out += `${pad}  ${line}\n`;
  }
  return out;
}

function indent(text: string, pad: string): string {
  return text
    .split('\n')
    .map((l) => (l === '' ? l : pad + l))
    .join('\n');
}
