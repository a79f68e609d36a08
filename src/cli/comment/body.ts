/**
 * The review comment's Markdown: a verdict table (validation, guards, flag tests, changes), every
 * guard, error and failing test case listed, warnings after them, then what changes in words as
 * `vexil diff --format markdown` writes it (the same renderer) with the impact on sample entities.
 * The whole is bounded by `budget` (GitHub refuses a comment over 65,536 characters; a job
 * summary over 1 MiB): lists stop with "… and N more", and a diff that does not fit is cut at a
 * line with its open <details> closed and a note saying where the rest is. The body never holds a
 * timestamp, so an unchanged result leaves the comment unchanged.
 */
import { formatMarkdown, md } from '../../diff/format-markdown.js';
import { short } from '../../diff/format-text.js';
import type { CommentInputs, ReportedCase, ReportedProblem } from './inputs.js';

/** GitHub's limit for a comment body, in characters. */
export const GITHUB_COMMENT_LIMIT = 65_536;
/** GitHub's limit for a step's job summary, in bytes. */
export const STEP_SUMMARY_LIMIT = 1024 * 1024;

export interface BodyOptions {
  /** First line of the body, hidden when rendered: how the command finds its comment again. */
  readonly marker?: string;
  readonly budget: number;
  /** Length as the host counts it: characters (comments) or UTF-8 bytes (job summaries). */
  readonly measure: (s: string) => number;
  readonly title: string;
  /** Where the full details are, for the cut notes (e.g. "the job summary", "the job log"). */
  readonly elsewhere: string;
}

/**
 * Problems whose rule is one of the policy's guards on the change (`guard.*`, as `vexil validate
 * --base` reports them) and that fail or warn: listed first, under their own heading. A guard's
 * information (`guard.impact.unmeasured`: what the impact guard could not see) is no failure: it
 * is listed with the warnings and information.
 */
const isGuard = (p: ReportedProblem) => p.rule.startsWith('guard.') && p.severity !== 'info';
const ICON = { error: '❌', warning: '⚠️', info: 'ℹ️' } as const;
/** Kept free at the end of the budget for the cut notes and the footer. */
const RESERVE = 600;

export function commentBody(inputs: CommentInputs, opts: BodyOptions): string {
  const problems = inputs.problems ?? [];
  const guards = problems.filter(isGuard);
  const errors = problems.filter((p) => !isGuard(p) && p.severity === 'error');
  const warnings = problems.filter((p) => !isGuard(p) && p.severity !== 'error');
  const failing = (inputs.cases ?? []).filter((c) => c.status !== 'passed');
  const failed = errors.length > 0 || guards.some((g) => g.severity === 'error') || failing.length > 0 || inputs.unreadable.length > 0;

  let out = opts.marker !== undefined ? `${opts.marker}\n` : '';
  out += `## ${failed ? '❌' : '✅'} ${md(opts.title)}\n\n| Check | Result |\n|---|---|\n`;
  if (inputs.problems !== undefined) {
    out += `| Validation | ${errors.length > 0 ? '❌' : warnings.length > 0 ? '⚠️' : '✅'} ${counts(errors.length, warnings.filter((w) => w.severity === 'warning').length, warnings.filter((w) => w.severity === 'info').length)} |\n`;
    // Only a policy with guards, checked against a base, reports them: no row without one.
    if (guards.length > 0) out += `| Guards on the change | ${guards.some((g) => g.severity === 'error') ? '❌' : '⚠️'} ${plural(guards.length, 'guard')} failed |\n`;
  }
  if (inputs.cases !== undefined) {
    const passed = inputs.cases.length - failing.length;
    out += `| Flag tests | ${inputs.cases.length === 0 ? '⚠️ no test case' : failing.length > 0 ? `❌ ${failing.length} failed, ${passed} passed` : `✅ ${plural(passed, 'case')} passed`} |\n`;
  }
  if (inputs.diff !== undefined) {
    const s = inputs.diff.summary;
    const words = inputs.diff.changed
      ? `flags: ${s.flagsAdded} added, ${s.flagsRemoved} removed, ${s.flagsChanged} changed · segments: ${s.segmentsAdded} added, ${s.segmentsRemoved} removed, ${s.segmentsChanged} changed`
      : 'no flag or segment change';
    out += `| Changes | ${words} |\n`;
  }
  for (const u of inputs.unreadable) out += `| ${md(u.what)} | ❌ \`${tick(u.file)}\` could not be read: ${u.reason.replace(/[|<>\r\n]/g, ' ')} |\n`;
  out += '\n';

  const room = () => opts.budget - RESERVE - opts.measure(out);
  out += list('Guards that failed', guards, problemLine, room, opts);
  out += list('Validation errors', errors, problemLine, room, opts);
  out += list('Flag tests that did not pass', failing, caseLine, room, opts);
  out += list('Warnings', warnings, problemLine, room, opts);

  if (inputs.diff !== undefined) out += cutMarkdown(formatMarkdown(inputs.diff), room(), opts);
  const rev = inputs.diff?.head.revision;
  out += `\n<sub>Written by \`vexil comment\`${rev !== undefined ? ` for ${md(short(rev))}` : ''}; updated in place on every push.</sub>\n`;
  return out;
}

function list<T>(heading: string, items: readonly T[], line: (item: T) => string, room: () => number, opts: BodyOptions): string {
  if (items.length === 0) return '';
  let out = `### ${heading}\n\n`;
  let shown = 0;
  for (const item of items) {
    const l = line(item);
    if (opts.measure(out) + opts.measure(l) > room()) break;
    out += l;
    shown++;
  }
  if (shown < items.length) out += `- … and ${items.length - shown} more (see ${opts.elsewhere})\n`;
  return `${out}\n`;
}

function problemLine(p: ReportedProblem): string {
  const where = p.file === '' ? '' : `\`${tick(p.file)}${p.line > 0 ? `:${p.line}${p.column > 0 ? `:${p.column}` : ''}` : ''}\` `;
  const hint = p.hint !== undefined && p.hint !== '' ? ` — ${md(p.hint)}` : '';
  return `- ${ICON[p.severity]} ${where}**${md(p.rule)}**: ${md(p.message)}${hint}\n`;
}

function caseLine(c: ReportedCase): string {
  const decision = c.decision !== undefined ? ` (${md(c.decision)})` : '';
  return `- ❌ \`${tick(c.file)}:${c.line}\` ${md(c.name)} — ${md(c.namespace)}/${md(c.flag)} for ${md(c.entity)}: ${md(c.message)}${decision}\n`;
}

/** Cuts Markdown at a line boundary to fit `room`, closing a <details> left open. */
function cutMarkdown(text: string, room: number, opts: BodyOptions): string {
  if (opts.measure(text) <= room) return text;
  const lines = text.split('\n');
  let out = '';
  let open = 0;
  let shown = 0;
  for (const line of lines) {
    const next = `${line}\n`;
    if (opts.measure(out) + opts.measure(next) + open * 12 > room) break;
    out += next;
    shown++;
    if (line.startsWith('<details>')) open++;
    if (line.startsWith('</details>')) open--;
  }
  out += '\n</details>\n'.repeat(Math.max(0, open));
  return `${out}\n_The list of changes is cut here (${lines.length - shown} more lines): see ${opts.elsewhere}, or run \`vexil diff\` locally._\n`;
}

function counts(errors: number, warnings: number, infos: number): string {
  const parts = [plural(errors, 'error'), plural(warnings, 'warning')];
  if (infos > 0) parts.push(plural(infos, 'information'));
  return parts.join(', ');
}

function plural(n: number, noun: string): string {
  return `${n.toLocaleString('en-US')} ${noun}${n === 1 || noun === 'information' ? '' : 's'}`;
}

/** A path inside backticks: a backtick in it would close the code span. */
function tick(s: string): string {
  return s.replace(/`/g, "'").replace(/\r?\n/g, ' ');
}
