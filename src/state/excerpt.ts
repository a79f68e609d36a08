/**
 * The offending lines of located problems, for readers that cannot open the file (the status page
 * of the UI, `/meta/snapshots`): the problem's line with up to two lines before and after it.
 *
 * Bounded whatever the file: each line shown is cut to EXCERPT_MAX_LINE_CHARS characters, only the
 * first MAX_EXCERPTED_PROBLEMS located problems get one, so all excerpts of a rejection together
 * hold at most 50 × 5 lines of ~200 characters. Finding the lines is one forward scan of each
 * file's text up to the last line asked for (linear in the file size, whatever the number of
 * problems). Pure: the caller passes the texts.
 */
import type { Problem } from '../model/problem.js';

/** Lines shown before and after the offending one. */
export const EXCERPT_CONTEXT_LINES = 2;
/** Characters shown of one line (UTF-16 units, as columns count); longer lines are cut and marked. */
export const EXCERPT_MAX_LINE_CHARS = 200;
/** Problems that get an excerpt (in the order given: sorted by file, line, column). */
export const MAX_EXCERPTED_PROBLEMS = 50;

/** Marks where text of a line was left out. */
export const CUT = '…';

export interface Excerpt {
  /** The 1-based line number of `lines[0]`. */
  readonly startLine: number;
  /**
   * The lines from `startLine`, the offending one (the problem's `line`) among them, without their
   * line break. A line longer than EXCERPT_MAX_LINE_CHARS is cut and ends in `…`.
   */
  readonly lines: readonly string[];
  /** The line numbers whose text was cut (present only when one was). */
  readonly truncatedLines?: readonly number[];
  /**
   * Present when the problem's column lies beyond what the cut would keep: the offending line is
   * then shown from this 1-based column on, behind a leading `…` (its first character after the
   * `…` is at this column), so the position stays in view on a long line.
   */
  readonly firstColumn?: number;
}

/** A problem with the lines it points at (when it is located and its file's text is known). */
export type ExcerptedProblem = Problem & { readonly excerpt?: Excerpt };

interface Position {
  readonly line: number;
  readonly column: number;
}

/** The excerpt around `line` (1-based) of `text`, or undefined when the text has no such line. */
export function problemExcerpt(text: string, line: number, column = 0): Excerpt | undefined {
  return excerptsOf(text, [{ line, column }])[0];
}

/**
 * The excerpts of several positions in one text, with one scan of it (up to the last line asked
 * for). Undefined for a position whose line the text does not have.
 */
export function excerptsOf(text: string, positions: readonly Position[]): (Excerpt | undefined)[] {
  const wanted = new Set<number>();
  let last = 0;
  for (const p of positions) {
    if (p.line <= 0) continue;
    for (let n = Math.max(1, p.line - EXCERPT_CONTEXT_LINES); n <= p.line + EXCERPT_CONTEXT_LINES; n++) wanted.add(n);
    last = Math.max(last, p.line + EXCERPT_CONTEXT_LINES);
  }
  // Start and end offsets of the wanted lines; the text after the last one is never looked at.
  const spans = new Map<number, { start: number; end: number }>();
  let start = 0;
  for (let n = 1; n <= last; n++) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    if (wanted.has(n)) spans.set(n, { start, end: end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end });
    if (newline === -1) break;
    start = newline + 1;
  }
  return positions.map((p) => {
    if (!spans.has(p.line)) return undefined;
    const lines: string[] = [];
    const truncated: number[] = [];
    let firstColumn: number | undefined;
    const from = Math.max(1, p.line - EXCERPT_CONTEXT_LINES);
    for (let n = from; n <= p.line + EXCERPT_CONTEXT_LINES; n++) {
      const span = spans.get(n);
      if (span === undefined) break;
      const shown = n === p.line ? showAround(text, span, p.column) : showStart(text, span);
      lines.push(shown.text);
      if (shown.cut) truncated.push(n);
      if (shown.firstColumn !== undefined) firstColumn = shown.firstColumn;
    }
    return {
      startLine: from,
      lines,
      ...(truncated.length > 0 ? { truncatedLines: truncated } : {}),
      ...(firstColumn !== undefined ? { firstColumn } : {}),
    };
  });
}

interface Shown {
  readonly text: string;
  readonly cut: boolean;
  readonly firstColumn?: number;
}

/** The line from its start, cut to the maximum. */
function showStart(text: string, span: { start: number; end: number }): Shown {
  if (span.end - span.start <= EXCERPT_MAX_LINE_CHARS) return { text: text.slice(span.start, span.end), cut: false };
  return { text: text.slice(span.start, pairSafeEnd(text, span.start + EXCERPT_MAX_LINE_CHARS)) + CUT, cut: true };
}

/**
 * The offending line: from its start when the column is within the first 3/4 of what is shown,
 * otherwise a window that puts the column a quarter of the way in.
 */
function showAround(text: string, span: { start: number; end: number }, column: number): Shown {
  const length = span.end - span.start;
  if (length <= EXCERPT_MAX_LINE_CHARS || column <= (EXCERPT_MAX_LINE_CHARS * 3) / 4) return showStart(text, span);
  let from = span.start + Math.min(column - 1, length) - EXCERPT_MAX_LINE_CHARS / 4;
  if (isLowSurrogate(text.charCodeAt(from))) from++; // never start in the middle of a pair
  const to = Math.min(span.end, pairSafeEnd(text, from + EXCERPT_MAX_LINE_CHARS));
  return { text: CUT + text.slice(from, to) + (to < span.end ? CUT : ''), cut: true, firstColumn: from - span.start + 1 };
}

/** `end`, moved back by one when it would split a surrogate pair. */
function pairSafeEnd(text: string, end: number): number {
  return isLowSurrogate(text.charCodeAt(end)) ? end - 1 : end;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * `problems` with an excerpt on each of the first MAX_EXCERPTED_PROBLEMS located ones whose file's
 * text `textOf` knows (asked once per file). The others are returned as they are.
 */
export function withExcerpts(problems: readonly Problem[], textOf: (file: string) => string | undefined): ExcerptedProblem[] {
  const byFile = new Map<string, number[]>();
  let located = 0;
  for (let i = 0; i < problems.length && located < MAX_EXCERPTED_PROBLEMS; i++) {
    const p = problems[i]!;
    if (p.file === '' || p.line <= 0) continue;
    located++;
    const list = byFile.get(p.file);
    if (list === undefined) byFile.set(p.file, [i]);
    else list.push(i);
  }
  const out: ExcerptedProblem[] = [...problems];
  for (const [file, indices] of byFile) {
    const text = textOf(file);
    if (text === undefined) continue;
    const excerpts = excerptsOf(
      text,
      indices.map((i) => problems[i]!),
    );
    indices.forEach((i, k) => {
      const excerpt = excerpts[k];
      if (excerpt !== undefined) out[i] = { ...problems[i]!, excerpt };
    });
  }
  return out;
}
