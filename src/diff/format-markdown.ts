/**
 * The semantic diff in Markdown (`vexil diff --format markdown`, the UI diff page's "Copy as Markdown"): made for a pull-request comment. A heading, a summary table
 * (one row per changed flag and segment, with its impact), then a collapsible `<details>` per flag
 * and segment listing its changes. Text from the state is escaped so it cannot break the table or
 * open HTML.
 */
import { describeChange, describeImpact, percent } from './describe.js';
import type { DiffReport, FlagImpact } from './types.js';
import { sampleWords, short } from './format-text.js';

const ICON = { added: '🟢 added', removed: '🔴 removed', changed: '🟡 changed' } as const;

/** Escapes Markdown and HTML specials; a table cell also loses its newlines. */
export function md(s: string): string {
  return s.replace(/[\\`*_[\]#+!|<>&~]/g, (c) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '&' ? '&amp;' : `\\${c}`)).replace(/\r?\n/g, ' ');
}

export function formatMarkdown(report: DiffReport): string {
  const base = `${md(report.base.reference)} (${md(short(report.base.revision))})`;
  const head = `${md(report.head.reference)} (${md(short(report.head.revision))})`;
  let out = `### Flag changes: ${base} → ${head}\n\n`;
  if (!report.changed) return `${out}No flag or segment changes.\n`;
  const s = report.summary;
  out += `**Flags:** ${s.flagsAdded} added, ${s.flagsRemoved} removed, ${s.flagsChanged} changed · **Segments:** ${s.segmentsAdded} added, ${s.segmentsRemoved} removed, ${s.segmentsChanged} changed\n\n`;
  const impacts = new Map((report.impact?.flags ?? []).map((i) => [`${i.namespace}/${i.flag}`, i]));
  out += report.impact !== undefined ? '| Namespace | Item | Change | Impact |\n|---|---|---|---|\n' : '| Namespace | Item | Change |\n|---|---|---|\n';
  const cell = (i: FlagImpact | undefined) => (i === undefined ? '' : i.changed === 0 ? 'none' : `${percent(i.ratio)} of entities`);
  for (const ns of report.namespaces) {
    for (const f of ns.flags) {
      out += `| ${md(ns.key)} | flag \`${f.key.replace(/`/g, "'")}\` | ${ICON[f.status]}${f.changes.length > 0 ? ` (${f.changes.length})` : ''} |`;
      out += report.impact !== undefined ? ` ${cell(impacts.get(`${ns.key}/${f.key}`))} |\n` : '\n';
    }
    for (const g of ns.segments) out += `| ${md(ns.key)} | segment \`${g.key.replace(/`/g, "'")}\` | ${ICON[g.status]}${g.changes.length > 0 ? ` (${g.changes.length})` : ''} |${report.impact !== undefined ? ' |' : ''}\n`;
  }
  out += '\n';
  for (const ns of report.namespaces) {
    if (ns.status !== 'changed') out += `Namespace **${md(ns.key)}** ${ns.status}.\n\n`;
    for (const c of ns.changes) out += `- namespace ${md(ns.key)}: ${md(describeChange(c))}\n`;
    for (const f of ns.flags) {
      const i = impacts.get(`${ns.key}/${f.key}`);
      if (f.changes.length === 0 && i === undefined) continue;
      out += `<details><summary>${md(ns.key)}/${md(f.key)}: ${f.changes.length} change${f.changes.length === 1 ? '' : 's'}</summary>\n\n`;
      for (const c of f.changes) out += `- ${md(describeChange(c))}\n`;
      if (i !== undefined) out += `\n**Impact:** ${md(describeImpact(i))}\n`;
      out += '\n</details>\n\n';
    }
    for (const g of ns.segments) {
      if (g.changes.length === 0) continue;
      out += `<details><summary>${md(ns.key)} segment ${md(g.key)}: ${g.changes.length} change${g.changes.length === 1 ? '' : 's'}</summary>\n\n`;
      for (const c of g.changes) out += `- ${md(describeChange(c))}\n`;
      out += '\n</details>\n\n';
    }
  }
  const unlisted = [...impacts.values()].filter((i) => !report.namespaces.some((n) => n.key === i.namespace && n.flags.some((f) => f.key === i.flag)));
  if (unlisted.length > 0) {
    out += '**Impact on flags reading a changed segment:**\n\n';
    for (const i of unlisted) out += `- ${md(i.namespace)}/${md(i.flag)}: ${md(describeImpact(i))}\n`;
    out += '\n';
  }
  if (report.impact !== undefined && report.impact.omittedFlags > 0) out += `${report.impact.omittedFlags} more flags were not evaluated.\n\n`;
  if (report.impact !== undefined) out += `<sub>Impact over ${report.impact.sample.entities.toLocaleString('en-US')} entities (${sampleWords(report.impact.sample)}).</sub>\n`;
  return out;
}
