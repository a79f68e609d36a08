import t from 'tap';
import { selectStateFiles } from '../../src/state/load.js';
import { fixtureFile, readFixture } from '../support/state-fixture.js';

const enc = new TextEncoder();
const index = (text: string, path = '.vexil.yml') => ({ path, bytes: enc.encode(text) });

t.test('default discovery: features.yml|yaml|json and *.features.* at any depth', async (t) => {
  const paths = [
    'features.yml',
    'features.yaml',
    'features.json',
    'a/b/features.yml',
    'team.features.yaml',
    'x/y.features.json',
    'myfeatures.yml',
    'features.yml.bak',
    'notes.yml',
    'features.toml',
    './dot/features.yml',
    '.vexil.yml',
  ];
  const { paths: selected, problems } = selectStateFiles(paths);
  t.same(problems, []);
  t.same(selected, [
    './dot/features.yml',
    'a/b/features.yml',
    'features.json',
    'features.yaml',
    'features.yml',
    'myfeatures.yml',
    'team.features.yaml',
    'x/y.features.json',
  ]);
});

t.test('walk order: directory components compare before names (a/x.yml before a.yml)', async (t) => {
  const { paths } = selectStateFiles(['a.features.yml', 'a/features.yml', 'b/features.yml', 'a-b.features.yml']);
  t.same(paths, ['a/features.yml', 'a-b.features.yml', 'a.features.yml', 'b/features.yml']);
});

t.test('.flipt.yml with include and exclude', async (t) => {
  const fx = readFixture('index-flipt');
  t.equal(fx.index?.path, '.flipt.yml');
  t.same(fx.selectionProblems, []);
  t.same(fx.selected, ['flags/one.yml', 'other/two.json'], 'features.yml is not included, legacy/ is excluded');
});

t.test('.vexil.yml is preferred when both index files exist', async (t) => {
  const fx = readFixture('index-both');
  t.equal(fx.index?.path, '.vexil.yml');
  t.same(fx.selected, ['vexil/a.yml']);
});

t.test('an index without include selects nothing (with a warning); unknown keys warn', async (t) => {
  const fx = readFixture('index-no-include');
  t.same(fx.selected, []);
  t.same(
    fx.selectionProblems.map((p) => [p.severity, p.rule, p.line, p.column]),
    [
      ['warning', 'index.include.missing', 1, 1],
      ['warning', 'index.unknown-key', 4, 1],
    ],
  );
});

t.test('a broken index file is a located error and selects nothing', async (t) => {
  const fx = readFixture('index-broken');
  t.same(fx.selected, []);
  t.ok(fx.selectionProblems.length >= 1);
  for (const p of fx.selectionProblems) {
    t.equal(p.rule, 'index.syntax');
    t.equal(p.severity, 'error');
    t.equal(p.file, '.flipt.yml');
    t.ok(p.line >= 2 && p.column >= 1, `located at ${p.line}:${p.column}`);
  }
});

t.test('an empty index file is an error (Flipt fails on it too)', async (t) => {
  const fx = readFixture('index-empty');
  t.same(fx.selected, []);
  t.same(fx.selectionProblems.map((p) => [p.rule, p.file, p.line, p.column]), [['index.empty', '.vexil.yml', 1, 1]]);
});

t.test('a malformed glob is located at its list item', async (t) => {
  const fx = readFixture('index-bad-glob');
  t.same(fx.selected, []);
  t.same(fx.selectionProblems.map((p) => [p.rule, p.line, p.column]), [['index.glob.invalid', 2, 5]]);
  t.match(fx.selectionProblems[0].message, /unclosed character class/);
});

t.test('wrong types in the index file', async (t) => {
  const r = selectStateFiles(['features.yml'], index('include: "*.yml"\nexclude:\n  - 3\n'));
  t.same(r.paths, []);
  t.same(r.problems.map((p) => [p.rule, p.line, p.column]), [
    ['index.type', 1, 10],
    ['index.type', 3, 5],
  ]);
  const scalar = selectStateFiles(['features.yml'], index('just text\n'));
  t.same(scalar.problems.map((p) => p.rule), ['index.type']);
});

t.test('the index file itself is never a state file, a comment-only index is empty', async (t) => {
  const r = selectStateFiles(['.vexil.yml', 'a.yml'], index('include:\n  - "*.yml"\n'));
  t.same(r.paths, ['a.yml']);
  const c = selectStateFiles(['a.yml'], index('# nothing here\n'));
  t.same(c.problems.map((p) => p.rule), ['index.empty']);
  const bytes = fixtureFile('index-flipt', '.flipt.yml');
  t.same(selectStateFiles(['flags/a.yml'], bytes).paths, ['flags/a.yml']);
});

t.test('index globs that backtrack exponentially in a regex engine, against a 1 MB path, complete', async (t) => {
  // Synthetic paths: the sources cannot produce a path this long, the loader must not care.
  const segment = `${'a'.repeat(199)}/`;
  const long = segment.repeat(5 * 1024) + 'a'.repeat(200);
  const hostile = ['*a*a*a*a*a*a*b', '{*a,*a*}*a*a*a*a*b', '**?**?**?*b', '*[a]*[a]*[a]*[a]*b'];
  const text = `include:\n${[...hostile, '*.features.yml'].map((g) => `  - "${g}"\n`).join('')}exclude:\n${hostile.map((g) => `  - "${g.replace(/b$/, 'c')}"\n`).join('')}`;
  const { paths, problems } = selectStateFiles([long, `${long}.features.yml`, 'x.features.yml'], index(text));
  t.same(problems, []);
  t.same(paths, [`${long}.features.yml`, 'x.features.yml']);
});
