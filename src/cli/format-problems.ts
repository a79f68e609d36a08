/**
 * The output formats of located problems: `text` for people (location, severity, rule, message,
 * the offending line with a caret, the hint), `json` for tools (an array of problems), `github`
 * for GitHub Actions workflow annotations, and `sarif` (sarif.ts) for code scanning.
 */
import type { Problem } from '../model/problem.js';
import { formatSarif } from './sarif.js';

export type OutputFormat = 'text' | 'json' | 'github' | 'sarif';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['text', 'json', 'github', 'sarif'];

/** Lines of a file's text by path, to quote the offending line; may not know every file. */
export type SourceLines = (file: string) => readonly string[] | undefined;

export function formatText(problems: readonly Problem[], lines: SourceLines = () => undefined): string {
  let out = '';
  for (const p of problems) {
    out += `${location(p)}${p.severity} ${p.rule}: ${p.message}\n`;
    const text = p.line > 0 ? lines(p.file)?.[p.line - 1] : undefined;
    if (text !== undefined) {
      out += `  ${text}\n`;
      if (p.column > 0) out += `  ${caretPad(text, p.column - 1)}^\n`;
    }
    if (p.hint !== undefined && p.hint !== '') out += `  hint: ${p.hint}\n`;
  }
  return out;
}

/** `file:line:col: `, `file: ` when the line is unknown, nothing when there is no file. */
function location(p: Problem): string {
  if (p.file === '') return '';
  if (p.line <= 0) return `${p.file}: `;
  return p.column > 0 ? `${p.file}:${p.line}:${p.column}: ` : `${p.file}:${p.line}: `;
}

/** Keeps tabs so the caret lines up with the column in a terminal. */
function caretPad(text: string, width: number): string {
  let pad = '';
  for (let i = 0; i < width; i++) pad += text[i] === '\t' ? '\t' : ' ';
  return pad;
}

export function formatJson(problems: readonly Problem[]): string {
  return `${JSON.stringify(
    problems.map((p) => ({
      severity: p.severity,
      rule: p.rule,
      file: p.file,
      line: p.line,
      column: p.column,
      message: p.message,
      ...(p.hint !== undefined ? { hint: p.hint } : {}),
    })),
    null,
    2,
  )}\n`;
}

/** `::error file=…,line=…,col=…,title=<rule>::<message>` (workflow-command escaping applied). */
export function formatGithub(problems: readonly Problem[]): string {
  let out = '';
  for (const p of problems) {
    const props: string[] = [];
    if (p.file !== '') props.push(`file=${escapeProperty(p.file)}`);
    if (p.line > 0) props.push(`line=${p.line}`);
    if (p.line > 0 && p.column > 0) props.push(`col=${p.column}`);
    props.push(`title=${escapeProperty(p.rule)}`);
    const message = p.hint !== undefined && p.hint !== '' ? `${p.message}\nhint: ${p.hint}` : p.message;
    out += `::${p.severity === 'info' ? 'notice' : p.severity} ${props.join(',')}::${escapeData(message)}\n`;
  }
  return out;
}

function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export function formatProblems(format: OutputFormat, problems: readonly Problem[], lines?: SourceLines): string {
  switch (format) {
    case 'json':
      return formatJson(problems);
    case 'github':
      return formatGithub(problems);
    case 'sarif':
      return formatSarif(problems);
    case 'text':
      return formatText(problems, lines);
  }
}

/** `N errors, M warnings` with singulars, and `, K info` when there is information. */
export function countSummary(problems: readonly Problem[]): string {
  const errors = problems.filter((p) => p.severity === 'error').length;
  const info = problems.filter((p) => p.severity === 'info').length;
  const warnings = problems.length - errors - info;
  return `${errors} ${errors === 1 ? 'error' : 'errors'}, ${warnings} ${warnings === 1 ? 'warning' : 'warnings'}${info > 0 ? `, ${info} info` : ''}`;
}
