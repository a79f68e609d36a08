/**
 * The guards section of `vexil diff --policy` in text and Markdown (the JSON carries the report as
 * it is): which policy judged the change, then each finding located, with its rule id and message.
 */
import type { GuardProblem, GuardReport } from './types.js';
import { md } from './format-markdown.js';

const where = (g: GuardProblem) => (g.file === '' ? '' : `${g.file}${g.line > 0 ? `:${g.line}:${g.column}` : ''}: `);

export function formatGuardsText(r: GuardReport): string {
  const failed = r.findings.filter((g) => g.severity === 'error').length;
  let out = `\nguards (${r.policy}): ${r.failed ? `FAILED, ${failed} ${failed === 1 ? 'guard' : 'guards'}` : 'passed'}\n`;
  for (const g of r.findings) out += `  ${where(g)}${g.severity} ${g.rule}: ${g.message}\n${g.hint !== undefined ? `    hint: ${g.hint}\n` : ''}`;
  return out;
}

export function formatGuardsMarkdown(r: GuardReport): string {
  const failed = r.findings.filter((g) => g.severity === 'error').length;
  let out = `\n**Guards** (${md(r.policy)}): ${r.failed ? `❌ ${failed} failed` : '✅ passed'}\n\n`;
  const icon = { error: '❌', warning: '⚠️', info: 'ℹ️' } as const;
  for (const g of r.findings) out += `- ${icon[g.severity]} ${g.file !== '' ? `\`${where(g).slice(0, -2).replace(/`/g, "'")}\` ` : ''}**${md(g.rule)}**: ${md(g.message)}\n`;
  return out;
}
