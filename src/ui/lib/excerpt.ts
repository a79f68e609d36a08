/**
 * A rejected revision's problem with the lines it points at (the `excerpt` of each problem in
 * `/meta/snapshots`, src/state/excerpt.ts), laid out for a `<pre>`: numbered lines, the offending
 * one marked, and a caret line under the problem's column. Pure, no DOM.
 */

/** The `excerpt` field of a problem in `/meta/snapshots`. */
export interface ProblemExcerpt {
  /** The 1-based number of `lines[0]`. */
  startLine: number;
  lines: readonly string[];
  /** Lines whose text was cut (they end in `…`). */
  truncatedLines?: readonly number[];
  /** The offending line is shown from this 1-based column on, behind a leading `…`. */
  firstColumn?: number;
}

export interface ExcerptRow {
  /** The line number, right-aligned to the widest one. */
  number: string;
  text: string;
  offending: boolean;
  /**
   * Offending line only, when the column is known: the text split around the column's character
   * (`at` is one character, or empty past the end of the line) and the caret line's indent.
   */
  mark?: { before: string; at: string; after: string; caretIndent: string };
}

/** `file:line:column` (or less when the problem is not located that precisely). */
export function location(p: { file: string; line: number; column: number }): string {
  if (p.file === '') return '(no file)';
  if (p.line <= 0) return p.file;
  return p.column > 0 ? `${p.file}:${p.line}:${p.column}` : `${p.file}:${p.line}`;
}

/** The rows of an excerpt for the problem at `line`:`column` (1-based; column 0 = unknown). */
export function excerptRows(excerpt: ProblemExcerpt, line: number, column: number): ExcerptRow[] {
  const width = String(excerpt.startLine + excerpt.lines.length - 1).length;
  return excerpt.lines.map((text, i) => {
    const n = excerpt.startLine + i;
    const row: ExcerptRow = { number: String(n).padStart(width, ' '), text, offending: n === line };
    if (n === line && column > 0) {
      // Columns count UTF-16 units from the line's start; a windowed line starts at firstColumn behind `…`.
      const offset = excerpt.firstColumn !== undefined ? column - excerpt.firstColumn + 1 : column - 1;
      if (offset >= 0 && offset <= text.length) {
        const before = text.slice(0, offset);
        const at = text.slice(offset, offset + charLength(text, offset));
        // One space per character (code point), tabs kept, so the caret lines up with what the browser draws.
        const caretIndent = Array.from(before, (ch) => (ch === '\t' ? '\t' : ' ')).join('');
        row.mark = { before, at, after: text.slice(offset + at.length), caretIndent };
      }
    }
    return row;
  });
}

/** 2 for a surrogate pair at `i`, 1 for another character, 0 past the end. */
function charLength(text: string, i: number): number {
  if (i >= text.length) return 0;
  const c = text.charCodeAt(i);
  return c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? 2 : 1;
}
