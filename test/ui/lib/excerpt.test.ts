/** A problem's offending lines laid out for the status page (src/ui/lib/excerpt.ts). */
import t from 'tap';
import { excerptsOf } from '../../../src/state/excerpt.js';
import { excerptRows, location } from '../../../src/ui/lib/excerpt.js';

t.test('location', async (t) => {
  t.equal(location({ file: 'a.yml', line: 3, column: 5 }), 'a.yml:3:5');
  t.equal(location({ file: 'a.yml', line: 3, column: 0 }), 'a.yml:3');
  t.equal(location({ file: 'a.yml', line: 0, column: 0 }), 'a.yml');
  t.equal(location({ file: '', line: 0, column: 0 }), '(no file)');
});

t.test('numbered lines, the offending one marked at its column', async (t) => {
  const rows = excerptRows({ startLine: 8, lines: ['a: 1', 'b:', '  key: [x', 'c: 2', 'd: 3'] }, 10, 8);
  t.same(rows.map((r) => r.number), [' 8', ' 9', '10', '11', '12'], 'right-aligned to the widest number');
  t.same(rows.map((r) => r.offending), [false, false, true, false, false]);
  t.same(rows[2]!.mark, { before: '  key: ', at: '[', after: 'x', caretIndent: '       ' });
  t.equal(rows[0]!.mark, undefined);
});

t.test('columns past the end, unknown, tabs and surrogate pairs', async (t) => {
  t.same(excerptRows({ startLine: 1, lines: ['ab'] }, 1, 3)[0]!.mark, { before: 'ab', at: '', after: '', caretIndent: '  ' }, 'just past the end');
  t.equal(excerptRows({ startLine: 1, lines: ['ab'] }, 1, 9)[0]!.mark, undefined, 'far past the end: no caret');
  t.equal(excerptRows({ startLine: 1, lines: ['ab'] }, 1, 0)[0]!.mark, undefined, 'no column');
  t.equal(excerptRows({ startLine: 1, lines: ['\tx: y'] }, 1, 2)[0]!.mark!.caretIndent, '\t');
  const emoji = excerptRows({ startLine: 1, lines: ['😀😀x'] }, 1, 3)[0]!.mark!;
  t.same(emoji, { before: '😀', at: '😀', after: 'x', caretIndent: ' ' }, 'a pair is one character');
});

t.test('a long line windowed by the server: the caret stays on the column', async (t) => {
  const line = `${'x'.repeat(5000)}!${'y'.repeat(10)}`;
  const [excerpt] = excerptsOf(`first\n${line}\nlast`, [{ line: 2, column: 5001 }]);
  t.ok(excerpt?.firstColumn !== undefined, 'the server windowed the line');
  const row = excerptRows(excerpt!, 2, 5001)[1]!;
  t.equal(row.mark!.at, '!', 'the character at column 5001');
  t.ok(row.mark!.before.startsWith('…'));
  const short = excerptsOf('k: v\nbad line here\n', [{ line: 2, column: 5 }])[0]!;
  t.equal(excerptRows(short, 2, 5)[1]!.mark!.at, 'l', 'a short line from its start');
});
