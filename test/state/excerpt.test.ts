/**
 * problemExcerpt / excerptsOf / withExcerpts: the lines a located problem points at, with their
 * bounds (context at the file's edges, CRLF, long lines cut and marked, a window around a far
 * column, surrogate pairs never split, 50 problems at most, 1 MB inputs in one scan).
 */
import t from 'tap';
import { CUT, EXCERPT_MAX_LINE_CHARS, MAX_EXCERPTED_PROBLEMS, excerptsOf, problemExcerpt, withExcerpts } from '../../src/state/excerpt.js';
import type { Problem } from '../../src/model/problem.js';

const TEXT = ['one', 'two', 'three', 'four', 'five', 'six', 'seven'].join('\n');

t.test('the line with two lines of context each side', async (t) => {
  t.same(problemExcerpt(TEXT, 4), { startLine: 2, lines: ['two', 'three', 'four', 'five', 'six'] });
});

t.test('at the edges of the file, the context is what exists', async (t) => {
  t.same(problemExcerpt(TEXT, 1), { startLine: 1, lines: ['one', 'two', 'three'] });
  t.same(problemExcerpt(TEXT, 2), { startLine: 1, lines: ['one', 'two', 'three', 'four'] });
  t.same(problemExcerpt(TEXT, 7), { startLine: 5, lines: ['five', 'six', 'seven'] });
  t.same(problemExcerpt(`${TEXT}\n`, 8), { startLine: 6, lines: ['six', 'seven', ''] }, 'the empty line after a final newline');
  t.equal(problemExcerpt(TEXT, 9), undefined, 'a line the text does not have');
  t.equal(problemExcerpt(TEXT, 0), undefined, 'an unknown line');
  t.same(problemExcerpt('', 1), { startLine: 1, lines: [''] });
});

t.test('CRLF line breaks are not part of the lines', async (t) => {
  t.same(problemExcerpt('a\r\nb\r\nc\r\n', 2), { startLine: 1, lines: ['a', 'b', 'c', ''] });
});

t.test('long lines are cut and marked', async (t) => {
  const long = 'x'.repeat(500);
  const e = problemExcerpt(`short\n${long}\nafter`, 1)!;
  t.same(e.lines, ['short', `${'x'.repeat(EXCERPT_MAX_LINE_CHARS)}${CUT}`, 'after']);
  t.same(e.truncatedLines, [2]);
  t.equal(e.firstColumn, undefined);
  const exact = 'y'.repeat(EXCERPT_MAX_LINE_CHARS);
  t.same(problemExcerpt(exact, 1), { startLine: 1, lines: [exact] }, 'a line of exactly the maximum is whole');
});

t.test('a far column on a long line: a window around it', async (t) => {
  const line = `${'a'.repeat(1000)}!${'b'.repeat(1000)}`;
  const e = problemExcerpt(line, 1, 1001)!;
  t.equal(e.firstColumn, 1001 - EXCERPT_MAX_LINE_CHARS / 4);
  const shown = e.lines[0]!;
  t.ok(shown.startsWith(CUT) && shown.endsWith(CUT));
  t.equal(shown.length, EXCERPT_MAX_LINE_CHARS + 2);
  // The character at the problem's column, found through firstColumn.
  t.equal(shown[1 + (1001 - e.firstColumn!)], '!');
  t.same(e.truncatedLines, [1]);
  const early = problemExcerpt(line, 1, 10)!;
  t.equal(early.firstColumn, undefined, 'a column near the start keeps the line start');
  t.ok(early.lines[0]!.startsWith('aaa'));
  const end = problemExcerpt(line, 1, 2001)!;
  t.ok(end.lines[0]!.endsWith('b'), 'a window at the end of the line has no trailing mark');
});

t.test('surrogate pairs are never cut in two', async (t) => {
  const smile = '😀';
  const line = smile.repeat(300); // 600 UTF-16 units
  const e = problemExcerpt(line, 1)!;
  const shown = e.lines[0]!.slice(0, -CUT.length);
  t.ok(shown.length <= EXCERPT_MAX_LINE_CHARS);
  t.equal(shown, smile.repeat(shown.length / 2), 'whole pairs only');
  const far = problemExcerpt(line, 1, 402)!; // column 402 is the low half of a pair
  const inner = far.lines[0]!.slice(CUT.length, -CUT.length);
  t.equal(inner, smile.repeat(inner.length / 2));
  t.equal(inner.length % 2, 0);
});

t.test('several positions in one scan', async (t) => {
  const [a, b, c] = excerptsOf(TEXT, [{ line: 1, column: 1 }, { line: 5, column: 2 }, { line: 40, column: 1 }]);
  t.same(a, { startLine: 1, lines: ['one', 'two', 'three'] });
  t.same(b, { startLine: 3, lines: ['three', 'four', 'five', 'six', 'seven'] });
  t.equal(c, undefined);
});

t.test('1 MB inputs complete: one line of 1 MB, and a million short lines', async (t) => {
  const one = problemExcerpt(`version: "1.4"\nflags: [${'x,'.repeat(500_000)}`, 2, 999_000)!;
  t.equal(one.lines.length, 2);
  t.ok(one.lines[1]!.length <= EXCERPT_MAX_LINE_CHARS + 2);
  const many = 'k: v\n'.repeat(200_000);
  const positions = Array.from({ length: 1000 }, (_, i) => ({ line: 1 + i * 200, column: 1 }));
  const all = excerptsOf(many, positions);
  t.equal(all.length, 1000);
  t.same(all[999], { startLine: 199_799, lines: ['k: v', 'k: v', 'k: v', 'k: v', 'k: v'] });
});

t.test('withExcerpts: located problems of known files, at most 50', async (t) => {
  const p = (file: string, line: number, column = 1): Problem => ({ severity: 'error', rule: 'r', file, line, column, message: 'm' });
  const problems = [p('', 0), p('a.yml', 0), p('a.yml', 2), p('b.yml', 1), p('unknown.yml', 3), p('a.yml', 6)];
  const asked: string[] = [];
  const out = withExcerpts(problems, (file) => {
    asked.push(file);
    return file === 'unknown.yml' ? undefined : TEXT;
  });
  t.same(asked.sort(), ['a.yml', 'b.yml', 'unknown.yml'], 'each file asked for once');
  t.equal(out[0]!.excerpt, undefined, 'no file');
  t.equal(out[1]!.excerpt, undefined, 'no line');
  t.same(out[2]!.excerpt, { startLine: 1, lines: ['one', 'two', 'three', 'four'] });
  t.same(out[3]!.excerpt, { startLine: 1, lines: ['one', 'two', 'three'] });
  t.equal(out[4]!.excerpt, undefined, 'a file whose text is unknown');
  t.same(out[5]!.excerpt!.startLine, 4);
  t.same({ ...out[2]!, excerpt: undefined }, { ...problems[2]!, excerpt: undefined }, 'the problem is otherwise unchanged');
  t.notOk('excerpt' in problems[2]!, 'the input is not changed');

  const many = Array.from({ length: 120 }, (_, i) => p('a.yml', 1 + (i % 7)));
  const bounded = withExcerpts(many, () => TEXT);
  t.equal(bounded.filter((x) => x.excerpt !== undefined).length, MAX_EXCERPTED_PROBLEMS);
  t.ok(bounded.slice(0, MAX_EXCERPTED_PROBLEMS).every((x) => x.excerpt !== undefined), 'the first ones');
});
