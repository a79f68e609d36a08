/** `vexil stale --format markdown`: a heading, one table per finding kind, a summary line; text from the state escaped (diff's `md`). */
import { md } from '../../diff/format-markdown.js';
import type { StaleFinding, StaleReport } from './report.js';
import { SECTIONS, summary, where } from './format-text.js';

export function formatMarkdown(r: StaleReport): string {
  let out = `### Stale flags: ${md(r.state.path)}${r.state.revision !== null ? ` (${r.state.revision.slice(0, 12)})` : ''}\n\n`;
  for (const s of SECTIONS) {
    const list = r.findings.filter((f) => f.kind === s.kind);
    if (list.length === 0) continue;
    out += `**${s.title}** (${list.length})\n\n| Flag | Owner | Detail | Location |\n|---|---|---|---|\n`;
    for (const f of list) out += `| \`${f.namespace}/${f.flag}\` | ${md(f.owner ?? '')} | ${md(detail(f))} | ${md(where(f))} |\n`;
    out += '\n';
  }
  if (r.findings.length === 0) out += 'No stale flags.\n\n';
  return `${out}<sub>${md(summary(r))}</sub>\n`;
}

function detail(f: StaleFinding): string {
  if (f.kind === 'expired') return `expired on ${f.expires}`;
  if (f.kind === 'unreferenced') return 'key found in no source file';
  const o = f.outcome!;
  const what = o.kind === 'boolean' ? `always ${o.value}` : o.kind === 'disabled' ? 'disabled' : o.variant === '' ? 'no variant' : `always ${o.variant}`;
  if (f.since === null || f.since === undefined) return what;
  return `${what} since ${f.since.bounded ? 'at least ' : ''}${f.since.commit.slice(0, 12)} (${f.since.date.slice(0, 10)}, ${f.since.subject})`;
}
