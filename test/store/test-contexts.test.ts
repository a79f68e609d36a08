/**
 * The flag test contexts a snapshot keeps (src/store/test-contexts.ts): which files are read, the
 * `tests:` section of the index, broken files skipped, and the bounds (count, size of one context,
 * size of a file). End to end (readState → store → GET /api/v1/diff, and `vexil diff --repo`) in
 * test/server/diff.test.ts.
 */
import t from 'tap';
import { MAX_TEST_CONTEXT_CHARS, MAX_TEST_CONTEXTS, MAX_TEST_FILE_BYTES, readTestContexts } from '../../src/store/test-contexts.js';
import type { SourceFile } from '../../src/sources/types.js';

function file(path: string, text: string, size?: number): SourceFile {
  const bytes = new TextEncoder().encode(text);
  return { path, contentId: path, ...(size !== undefined ? { size } : {}), bytes: async () => bytes };
}

const cases = (contexts: string[]) => `tests:\n${contexts.map((c, i) => `  - {flag: f, entity: e${i}, context: ${c}, expect: {match: true}}`).join('\n')}\n`;

t.test('test files and the index tests section; distinct contexts in path order; others ignored', async (t) => {
  const got = await readTestContexts([
    file('b/more.test.yaml', cases(['{plan: pro}', '{plan: free, age: 30}'])),
    file('a.test.yml', cases(['{plan: free, age: 30}', '{age: "30", plan: free}', '{}'])),
    file('.vexil.yml', `version: "1.0"\ntests:\n  - {flag: f, entity: e, context: {region: eu}, expect: {match: true}}\n`),
    file('features.yml', cases(['{ignored: yes}'])),
    file('notes.test.txt', cases(['{ignored: yes}'])),
    file('broken.test.yml', 'tests: [ {flag: f, context: {plan: "unclosed\n'),
    file('not-utf8.test.yml', '\u0000'),
  ]);
  t.same(got.map((c) => ({ ...c })), [{ region: 'eu' }, { age: '30', plan: 'free' }, {}, { plan: 'pro' }]);
  t.equal(Object.getPrototypeOf(got[0]), null, 'null prototype, as request contexts');
  t.ok(Object.isFrozen(got) && Object.isFrozen(got[0]));
});

t.test('bounds: contexts kept, one context size, file size', async (t) => {
  const many = Array.from({ length: MAX_TEST_CONTEXTS + 200 }, (_, i) => `{n: "${i}"}`);
  t.equal((await readTestContexts([file('many.test.yml', cases(many))])).length, MAX_TEST_CONTEXTS);

  const big = `{plan: "${'x'.repeat(MAX_TEST_CONTEXT_CHARS)}"}`;
  const kept = await readTestContexts([file('big.test.yml', cases([big, '{plan: small}']))]);
  t.same(kept.map((c) => ({ ...c })), [{ plan: 'small' }], 'a context over the size bound is skipped, the others kept');

  // ~1 MB, under the file bound: parsed, and its one oversized context skipped (completes quickly).
  const hostile = await readTestContexts([file('hostile.test.yml', cases([`{plan: "${'y'.repeat(1_000_000)}"}`]))]);
  t.same(hostile, []);
  const tooLarge = await readTestContexts([file('large.test.yml', cases(['{plan: pro}']), MAX_TEST_FILE_BYTES + 1)]);
  t.same(tooLarge, [], 'a file announced over the bound is not read');
});
