/** `vexil stale` for a terminal: one section per finding kind, each line `file:line:col  ns/flag: what`, then a summary. */
import type { FindingKind, StaleFinding, StaleReport } from './report.js';

export const SECTIONS: ReadonlyArray<{ kind: FindingKind; title: string }> = [
  { kind: 'uniform', title: 'Serving one outcome to every entity' },
  { kind: 'expired', title: 'Temporary and past their expiry date' },
  { kind: 'unreferenced', title: 'Mentioned in no source file' },
];

export function where(f: { file: string; line: number; column: number }): string {
  return f.file === '' ? '' : `${f.file}:${f.line}:${f.column}`;
}

export function owner(f: StaleFinding): string {
  return f.owner === null ? '' : ` [owner ${f.owner}]`;
}

export function formatText(r: StaleReport): string {
  let out = `state ${r.state.path}${r.state.revision !== null ? ` at ${r.state.revision.slice(0, 12)}` : ''}, today ${r.today}\n`;
  for (const s of SECTIONS) {
    const list = r.findings.filter((f) => f.kind === s.kind);
    if (list.length === 0) continue;
    out += `\n${s.title} (${list.length}):\n`;
    for (const f of list) out += `  ${where(f)}  ${f.message}${owner(f)}\n`;
  }
  const others = r.problems.filter((p) => p.rule !== 'flag.expired');
  if (others.length > 0) {
    out += `\nLifecycle metadata problems (${others.length}):\n`;
    for (const p of others) out += `  ${where(p)}  ${p.rule}: ${p.message}\n`;
  }
  out += `\n${summary(r)}\n`;
  return out;
}

export function summary(r: StaleReport): string {
  const s = r.summary;
  let line = `${s.flags} flag${s.flags === 1 ? '' : 's'}: ${s.uniform} serving one outcome, ${s.expired} expired`;
  line += r.code === null ? ' (no --code: references not checked)' : `, ${s.unreferenced} unreferenced in ${r.code.files} file${r.code.files === 1 ? '' : 's'}`;
  if (r.code !== null && !r.code.complete) line += ` (the scan stopped at its ${r.code.limit === 'files' ? 'file count' : 'byte'} bound)`;
  if (r.history !== null) line += `; history: ${r.history.commitsRead} commit${r.history.commitsRead === 1 ? '' : 's'} read (at most ${r.history.maxCommits})`;
  return line;
}
