/**
 * `vexil test --format junit`: JUnit XML as CI test reports read it. One <testsuite> per test
 * file, one <testcase> per case (classname `<namespace>/<flag>`, with file and line); a failing
 * case has a <failure> whose message says what differed and whose body holds the expected and
 * actual results and the explain trace; a case that could not run has an <error>. A test file with
 * problems gets one extra <testcase> with an <error> listing them.
 */
import { formatText } from '../format-problems.js';
import { formatDecision, formatResult, formatTrace } from '../../evaluation/explain-words.js';
import { describeMismatch } from './run-case.js';
import type { CaseResult, SuiteResult, TestRun } from './types.js';

export function reportJunit(run: TestRun): string {
  let tests = 0;
  let failures = 0;
  let errors = 0;
  let time = 0;
  const suites: string[] = [];
  for (const s of run.suites) {
    const x = suiteXml(s);
    tests += x.tests;
    failures += x.failures;
    errors += x.errors;
    time += s.durationMs;
    suites.push(x.xml);
  }
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<testsuites name="vexil test" tests="${tests}" failures="${failures}" errors="${errors}" time="${seconds(time)}">\n` +
    suites.join('') +
    '</testsuites>\n'
  );
}

function suiteXml(s: SuiteResult): { xml: string; tests: number; failures: number; errors: number } {
  let body = '';
  let failures = 0;
  let errors = 0;
  let tests = s.cases.length;
  if (s.problems.length > 0) {
    tests++;
    errors++;
    const n = s.problems.length;
    body +=
      `    <testcase name="${attr(`${s.file} is a valid test file`)}" classname="${attr(s.file)}" file="${attr(s.file)}" time="0">\n` +
      `      <error message="${attr(`${n} ${n === 1 ? 'problem' : 'problems'} in the test file; the cases with problems were not run`)}" type="InvalidTestFile">${text(formatText(s.problems, () => s.lines))}</error>\n` +
      '    </testcase>\n';
  }
  for (const r of s.cases) {
    if (r.status === 'failed') failures++;
    if (r.status === 'error') errors++;
    body += caseXml(r);
  }
  const xml =
    `  <testsuite name="${attr(s.file)}" tests="${tests}" failures="${failures}" errors="${errors}" skipped="0" time="${seconds(s.durationMs)}" file="${attr(s.file)}">\n` +
    `    <properties>\n      <property name="state" value="${attr(s.state)}"/>\n    </properties>\n` +
    body +
    '  </testsuite>\n';
  return { xml, tests, failures, errors };
}

function caseXml(r: CaseResult): string {
  const c = r.case;
  const open = `    <testcase name="${attr(c.name)}" classname="${attr(`${c.namespace}/${c.flag}`)}" file="${attr(c.file)}" line="${c.line}" time="${seconds(r.durationMs)}"`;
  if (r.status === 'passed') return `${open}/>\n`;
  const tag = r.status === 'failed' ? 'failure' : 'error';
  const type = r.status === 'failed' ? 'FlagTestFailure' : 'StateInvalid';
  return `${open}>\n      <${tag} message="${attr(r.message)}" type="${type}">${text(detail(r))}</${tag}>\n    </testcase>\n`;
}

/** The body of a failure/error: what was asked, what differed, the result and the trace. */
function detail(r: CaseResult): string {
  const c = r.case;
  const lines: string[] = [`${c.file}:${c.line}:${c.column}`];
  const ctx = Object.keys(c.context).map((k) => `${k}=${JSON.stringify(c.context[k])}`);
  lines.push(`flag ${c.namespace}/${c.flag}, entity ${JSON.stringify(c.entity)}, ${ctx.length === 0 ? 'empty context' : `context ${ctx.join(' ')}`}`);
  for (const m of r.mismatches) lines.push(describeMismatch(m));
  if (r.mismatches.length === 0 && r.message !== '') lines.push(r.message);
  const e = r.explanation;
  if (e !== undefined) {
    lines.push(`actual:  ${formatResult(e)}`, `why:     ${formatDecision(e)}`, 'trace:');
    for (const l of formatTrace(e)) lines.push(`  ${l}`);
  }
  if (r.problems !== undefined && r.problems.length > 0) lines.push('', formatText(r.problems).trimEnd());
  return `${lines.join('\n')}\n`;
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(6);
}

/**
 * Characters XML 1.0 cannot hold at all (most C0 controls, lone surrogates, U+FFFE/U+FFFF) are
 * written as `\u{…}` text; the rest is escaped.
 */
const NOT_XML_CHAR = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function clean(s: string): string {
  return s.replace(NOT_XML_CHAR, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);
}

export function text(s: string): string {
  return clean(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function attr(s: string): string {
  return text(s).replace(/"/g, '&quot;').replace(/'/g, '&apos;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
}
