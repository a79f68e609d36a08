/** The semantic diff in plain text (`vexil diff --format text`, change notifications): a line per change, grouped by namespace and flag/segment; ANSI colours on request. */
import { describeChange, describeImpact } from './describe.js';
import type { DiffReport, EntryStatus } from './types.js';

const MARK: Readonly<Record<EntryStatus, string>> = { added: '+', removed: '-', changed: '~' };
const COLOUR: Readonly<Record<EntryStatus, string>> = { added: '\x1b[32m', removed: '\x1b[31m', changed: '\x1b[33m' };
const RESET = '\x1b[0m';
const BOLD = '\x1b[1m';
const DIM = '\x1b[2m';

export function formatText(report: DiffReport, colour: boolean): string {
  const paint = (code: string, s: string) => (colour ? `${code}${s}${RESET}` : s);
  const base = `${report.base.reference}@${short(report.base.revision)}`;
  const head = `${report.head.reference}@${short(report.head.revision)}`;
  if (!report.changed) return `${base} → ${head}: no change\n`;
  const s = report.summary;
  let out = `${paint(BOLD, `${base} → ${head}`)}\n`;
  out += `flags: ${s.flagsAdded} added, ${s.flagsRemoved} removed, ${s.flagsChanged} changed; segments: ${s.segmentsAdded} added, ${s.segmentsRemoved} removed, ${s.segmentsChanged} changed\n`;
  const impacts = new Map((report.impact?.flags ?? []).map((i) => [`${i.namespace}/${i.flag}`, i]));
  for (const ns of report.namespaces) {
    out += `\n${paint(COLOUR[ns.status], `${MARK[ns.status]} namespace ${ns.key}`)}${ns.status !== 'changed' ? ` (${ns.status})` : ''}\n`;
    for (const c of ns.changes) out += `    ${describeChange(c)}\n`;
    for (const f of ns.flags) {
      out += `  ${paint(COLOUR[f.status], `${MARK[f.status]} flag ${f.key}`)}${f.status !== 'changed' ? ` (${f.status})` : ''}\n`;
      for (const c of f.changes) out += `      ${describeChange(c)}\n`;
    }
    for (const g of ns.segments) {
      out += `  ${paint(COLOUR[g.status], `${MARK[g.status]} segment ${g.key}`)}${g.status !== 'changed' ? ` (${g.status})` : ''}\n`;
      for (const c of g.changes) out += `      ${describeChange(c)}\n`;
    }
  }
  if (report.impact !== undefined) {
    const sample = report.impact.sample;
    out += `\n${paint(BOLD, 'impact')} ${paint(DIM, `(${sample.entities.toLocaleString('en-US')} entities, ${sampleWords(sample)})`)}\n`;
    if (impacts.size === 0) out += '  no flag to evaluate\n';
    for (const i of impacts.values()) out += `  ${i.namespace}/${i.flag}: ${describeImpact(i)}\n`;
    if (report.impact.omittedFlags > 0) out += `  (${report.impact.omittedFlags} more flags not evaluated)\n`;
  }
  return out;
}

export function sampleWords(sample: { source: string; contexts: number }): string {
  if (sample.source === 'contexts-file') return 'from the contexts file';
  return sample.contexts > 0 ? `synthetic ids over ${sample.contexts} test-file context${sample.contexts === 1 ? '' : 's'}` : 'synthetic ids, empty context';
}

export function short(revision: string): string {
  return /^[0-9a-f]{40}$/.test(revision) ? revision.slice(0, 7) : revision;
}
