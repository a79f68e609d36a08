/**
 * Encoding and decoding of history rows shared by the SQLite and PostgreSQL stores: problems as a
 * JSON column, texts cut to MAX_TEXT, and a decoded row refused field by field when it is not what
 * vexil writes (a row edited by hand reads as absent fields, never as a crash).
 */
import { MAX_PROBLEMS, MAX_TEXT, type HistoryEntry, type HistoryKind, type HistoryProblem, type NewHistoryEvent } from './types.js';

/** The columns both stores read, in their SQL names. */
export interface RawHistoryRow {
  seq: number | string;
  scope: string;
  kind: string;
  reference: string;
  revision: string;
  author: string | null;
  message: string | null;
  committed_at: string | null;
  at: number | string | Date;
  until: number | string | Date | null;
  replaced_by: string | null;
  problems: string | null;
  problem_count: number | null;
}

export const HISTORY_COLUMNS = 'seq, scope, kind, reference, revision, author, message, committed_at, at, until, replaced_by, problems, problem_count';

export function cut(s: string | undefined): string | null {
  if (s === undefined) return null;
  return s.length > MAX_TEXT ? s.slice(0, MAX_TEXT) : s;
}

export function problemsColumn(e: NewHistoryEvent): string | null {
  if (e.problems === undefined) return null;
  const kept = e.problems.slice(0, MAX_PROBLEMS).map((p) => ({
    severity: p.severity,
    rule: p.rule,
    file: cut(p.file) ?? '',
    line: p.line,
    column: p.column,
    message: cut(p.message) ?? '',
  }));
  return JSON.stringify(kept);
}

function ms(v: number | string | Date): number {
  return v instanceof Date ? v.getTime() : Number(v);
}

function parseProblems(text: string | null): HistoryProblem[] | undefined {
  if (text === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as HistoryProblem[]) : undefined;
  } catch {
    return undefined;
  }
}

export function fromRow(r: RawHistoryRow): HistoryEntry {
  const problems = parseProblems(r.problems);
  return {
    seq: Number(r.seq),
    scope: r.scope,
    kind: (r.kind === 'rejected' ? 'rejected' : 'served') satisfies HistoryKind,
    reference: r.reference,
    revision: r.revision,
    ...(r.author !== null ? { author: r.author } : {}),
    ...(r.message !== null ? { message: r.message } : {}),
    ...(r.committed_at !== null ? { committedAt: r.committed_at } : {}),
    at: ms(r.at),
    ...(r.until !== null ? { until: ms(r.until) } : {}),
    ...(r.replaced_by !== null ? { replacedBy: r.replaced_by } : {}),
    ...(problems !== undefined ? { problems } : {}),
    ...(r.problem_count !== null ? { problemCount: Number(r.problem_count) } : {}),
  };
}
