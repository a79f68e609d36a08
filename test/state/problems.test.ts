import t from 'tap';
import { problemExcerpt } from '../../src/state/excerpt.js';
import { load } from '../../src/state/load.js';
import { YAML_PACKAGE_LIMIT } from '../../src/state/locate.js';
import type { StateFile } from '../../src/state/load.js';
import type { Problem } from '../../src/model/problem.js';
import { fixtureDir, fixtureFile, listFiles, readFixture } from '../support/state-fixture.js';

const enc = new TextEncoder();
const file = (path: string, text: string): StateFile => ({ path, bytes: enc.encode(text) });
const opts = { reference: 'main', revision: 'r' };
const brief = (ps: readonly Problem[]) => ps.map((p) => [p.severity, p.rule, p.line, p.column]);

/**
 * Every file of fixtures/state/problems loaded alone: exactly these problems, at these positions
 * (the file name says which rule it exercises).
 */
const EXPECTED: Record<string, [string, string, number, number][]> = {
  'constraint.operator.invalid.yml': [
    ['error', 'constraint.operator.invalid', 8, 19],
    ['error', 'constraint.operator.invalid', 12, 19],
    ['error', 'constraint.operator.invalid', 16, 19],
  ],
  'constraint.operator.le.yml': [
    ['warning', 'constraint.operator.le', 8, 19],
    ['warning', 'constraint.operator.le', 16, 19],
  ],
  'constraint.value.array.yml': [
    ['error', 'constraint.value.array', 9, 16],
    ['error', 'constraint.value.array', 13, 16],
    ['error', 'constraint.value.array', 17, 16],
  ],
  'constraint.value.datetime.yml': [
    ['error', 'constraint.value.datetime', 9, 16],
  ],
  'constraint.value.number.yml': [
    ['error', 'constraint.value.number', 6, 77],
    ['error', 'constraint.value.number', 7, 9],
  ],
  'distribution.rollout.range.yml': [
    ['error', 'distribution.rollout.range', 14, 22],
    ['error', 'distribution.rollout.range', 18, 22],
  ],
  'distribution.variant.unknown.yml': [
    ['error', 'distribution.variant.unknown', 15, 22],
  ],
  'file.encoding.yml': [
    ['error', 'file.encoding', 2, 13],
  ],
  'file.extension.toml': [
    ['error', 'file.extension', 1, 1],
  ],
  'flag.default-variant.multiple.yml': [
    ['error', 'flag.default-variant.multiple', 9, 9],
  ],
  'flag.rollouts-on-variant.yml': [
    ['error', 'flag.rollouts-on-variant', 5, 5],
  ],
  'flag.rules-on-boolean.yml': [
    ['warning', 'flag.rules-on-boolean', 9, 5],
  ],
  'json.syntax.json': [
    ['error', 'json.syntax', 3, 15],
  ],
  'noext': [],
  'rollout.segment.unknown.yml': [
    ['error', 'rollout.segment.unknown', 7, 16],
  ],
  'rollout.threshold.range.yml': [
    ['error', 'rollout.threshold.range', 7, 23],
  ],
  'rule.distributions.sum.yml': [
    ['error', 'rule.distributions.sum', 19, 9],
  ],
  'rule.rank.ignored.yml': [
    ['warning', 'rule.rank.ignored', 10, 9],
  ],
  'rule.segment.unknown.yml': [
    ['error', 'rule.segment.unknown', 5, 18],
    ['error', 'rule.segment.unknown', 7, 18],
    ['error', 'rule.segment.unknown', 7, 25],
  ],
  'schema.additional-property.yml': [
    ['error', 'schema.additional-property', 4, 5],
    ['error', 'schema.required', 6, 5],
    ['error', 'schema.additional-property', 8, 5],
  ],
  'schema.any-of.yml': [
    ['error', 'schema.type', 1, 12],
    ['error', 'schema.type', 6, 18],
    ['error', 'schema.enum', 9, 21],
  ],
  'schema.enum.yml': [
    ['error', 'schema.enum', 1, 10],
    ['error', 'schema.enum', 5, 11],
    ['error', 'schema.enum', 9, 17],
  ],
  'schema.exclusive.yml': [
    ['error', 'schema.exclusive', 7, 11],
    ['error', 'schema.required', 10, 11],
    ['error', 'schema.exclusive', 11, 9],
  ],
  'schema.pattern.yml': [
    ['error', 'schema.pattern', 1, 12],
    ['error', 'schema.pattern', 3, 10],
    ['error', 'schema.pattern', 4, 11],
    ['error', 'schema.pattern', 6, 11],
  ],
  'schema.required.yml': [
    ['error', 'schema.required', 2, 5],
    ['error', 'schema.required', 4, 5],
    ['error', 'schema.required', 7, 9],
  ],
  'schema.type.yml': [
    ['error', 'schema.type', 1, 10],
    ['error', 'schema.type', 5, 14],
    ['error', 'schema.type', 8, 21],
    ['error', 'schema.type', 17, 16],
  ],
  'variant.attachment.invalid.yml': [
    ['error', 'variant.attachment.invalid', 7, 11],
  ],
  'variant.duplicate.yml': [
    ['error', 'variant.duplicate', 7, 14],
  ],
  'version.unsupported.yml': [
    ['error', 'version.unsupported', 5, 5],
    ['error', 'version.unsupported', 6, 5],
    ['error', 'version.unsupported', 13, 5],
    ['error', 'version.unsupported', 17, 9],
  ],
  'warnings.yml': [
    ['warning', 'namespace.key.missing', 2, 3],
    ['warning', 'constraint.value.boolean', 11, 16],
    ['warning', 'flag.variants-on-boolean', 16, 5],
    ['warning', 'rollout.segment.empty', 20, 11],
    ['warning', 'rule.segment.empty', 25, 11],
  ],
  'yaml.duplicate-key.yml': [
    ['error', 'yaml.duplicate-key', 4, 5],
  ],
  'yaml.syntax.yml': [
    ['error', 'yaml.syntax', 4, 3],
    ['error', 'yaml.syntax', 4, 10],
    ['error', 'yaml.syntax', 4, 10],
    ['error', 'yaml.syntax', 5, 24], // the unclosed quote runs to the end: its last character
  ],
  'yaml.syntax.indentation.yml': [
    ['error', 'yaml.syntax', 7, 10], // the mis-indented key, not the whitespace before it
  ],
};

t.test('each problem fixture: rule ids, severities, lines and columns', async (t) => {
  const names = listFiles(fixtureDir('problems')).sort();
  t.same(names, Object.keys(EXPECTED).sort(), 'every fixture has expectations');
  for (const name of names) {
    const r = load([fixtureFile('problems', name)], opts);
    t.same(brief(r.problems), EXPECTED[name], name);
    for (const p of r.problems) {
      t.equal(p.file, name);
      t.ok(p.message.length > 0 && (p.hint ?? '').length > 0, `${p.rule} has a message and a hint`);
    }
    const errors = r.problems.filter((p) => p.severity === 'error').length;
    t.equal(r.snapshot !== undefined, errors === 0, `${name}: a snapshot iff no error`);
  }
});

t.test('a syntax error is placed on the offending token, where the excerpt shows a character', async (t) => {
  const caret = (text: string, p: Problem) => {
    const e = problemExcerpt(text, p.line, p.column)!;
    return e.lines[p.line - e.startLine]![p.column - 1];
  };
  const indentation = fixtureFile('problems', 'yaml.syntax.indentation.yml');
  const [p] = load([indentation], opts).problems;
  t.match(p, { rule: 'yaml.syntax', line: 7, column: 10, message: /Sequence item without - indicator/ });
  t.equal(caret(new TextDecoder().decode(indentation.bytes), p!), 'd', 'the caret is on `description`, the key one column left of its siblings');

  // Past YAML_PACKAGE_LIMIT only js-yaml reports, at the end of the input for an unclosed quote.
  const big = `# ${'x'.repeat(YAML_PACKAGE_LIMIT)}\nflags:\n  - key: color\n    name: "unclosed\n`;
  const [q] = load([file('big.yml', big)], opts).problems;
  t.match(q, { rule: 'yaml.syntax', line: 4, column: 19, message: /unexpected end of the stream within a double quoted scalar/ });
  t.equal(caret(big, q!), 'd', 'the last character read, not the empty line after the final newline');
});

t.test('messages name the field and the flag or segment', async (t) => {
  const one = (name: string) => load([fixtureFile('problems', name)], opts).problems;
  t.match(one('schema.required.yml')[0].message, /flag `nameless` is missing the required field `name`/);
  t.match(one('schema.additional-property.yml')[2], { message: /unknown field `matchType` in segment `s`/, hint: /did you mean `match_type`\?/ });
  t.match(one('schema.type.yml')[3], { message: /`value` of constraint 1 of segment `s` must be a string/, hint: /value: "42"/ });
  t.match(one('schema.type.yml')[0].hint, /version: "1.2"/);
  t.match(one('distribution.variant.unknown.yml')[0].message, /distribution 2 of rule 1 of flag `color` references unknown variant `green`/);
  t.match(one('rule.segment.unknown.yml')[0].message, /rule 1 of flag `color` references unknown segment `nobody`/);
  t.match(one('constraint.operator.le.yml')[0].hint, /use lt or lte/);
  t.match(one('version.unsupported.yml')[0].message, /`type` needs document version 1.1 or later; this document is version 1.0/);
  t.match(one('rule.distributions.sum.yml')[0].message, /add up to 110.5%/);
});

t.test('33.33 + 66.67 is not over 100; lt is accepted for numbers and datetimes', async (t) => {
  const sum = load([fixtureFile('problems', 'rule.distributions.sum.yml')], opts).problems;
  t.same(sum.map((p) => p.line), [19], 'only the second rule');
  const le = load([fixtureFile('problems', 'constraint.operator.le.yml')], opts);
  t.ok(le.snapshot, 'le loads (with warnings)');
  t.same(le.snapshot!.namespaces.get('default')!.segments.get('adults')!.constraints.map((c) => c.operator), ['le', 'lt', 'le']);
  t.same(le.snapshot!.warnings, le.problems);
});

t.test('duplicate keys across files are errors located at the later definition', async (t) => {
  const fx = readFixture('duplicates');
  const r = load(fx.files, opts);
  t.equal(r.snapshot, undefined);
  t.same(
    r.problems.map((p) => [p.rule, p.file, p.line, p.column]),
    [
      ['segment.duplicate', 'b.features.yml', 3, 10],
      ['flag.duplicate', 'b.features.yml', 7, 10],
    ],
  );
  t.match(r.problems[1].message, /flag `color` is defined twice in namespace `default` \(first in a\.features\.yml\)/);
});

t.test('all problems of all files, sorted by file, line, column', async (t) => {
  const files = ['yaml.syntax.yml', 'schema.enum.yml', 'variant.duplicate.yml', 'constraint.operator.le.yml'].map((n) => fixtureFile('problems', n));
  const r = load(files, opts);
  const sorted = [...r.problems].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column));
  t.same(r.problems, sorted);
  t.same(
    [...new Set(r.problems.map((p) => p.file))],
    ['constraint.operator.le.yml', 'schema.enum.yml', 'variant.duplicate.yml', 'yaml.syntax.yml'],
  );
  // 2 + 3 + 1 + 4 from the files alone, plus flag `color` now defined in two of them.
  t.equal(r.problems.length, 2 + 3 + 1 + 4 + 1);
  t.ok(r.problems.some((p) => p.rule === 'flag.duplicate' && p.file === 'variant.duplicate.yml' && p.line === 2));
});

t.test('schema and semantic problems of one document are reported together', async (t) => {
  const r = load(
    [file('features.yml', 'flags:\n  - key: a\n    name: A\n    enabled: 1\n    variants: [{key: x}, {key: x}]\n    rules:\n      - segment: missing\n')],
    opts,
  );
  t.same(brief(r.problems), [
    ['error', 'schema.type', 4, 14],
    ['error', 'variant.duplicate', 5, 32],
    ['error', 'rule.segment.unknown', 7, 18],
  ]);
});

t.test('a file that does not parse does not cause "unknown segment" noise elsewhere', async (t) => {
  const r = load(
    [file('a.features.yml', 'flags:\n  - key: a\n    name: A\n    rules:\n      - segment: defined-in-b\n'), file('b.features.yml', 'segments: [\n')],
    opts,
  );
  t.same(r.problems.map((p) => [p.rule, p.file]), [['yaml.syntax', 'b.features.yml']]);
});

t.test('a document that is not a mapping', async (t) => {
  const r = load([file('features.yml', '- just\n- a list\n'), file('b.json', '"a string"')], opts);
  t.same(r.problems.map((p) => [p.rule, p.file, p.line, p.column]), [
    ['schema.type', 'b.json', 1, 1],
    ['schema.type', 'features.yml', 1, 1],
  ]);
  t.match(r.problems[1].message, /a document must be a mapping \(got a list\)/);
});

t.test('problems in the second document of a stream are located in it', async (t) => {
  const yaml = 'flags: [{key: a, name: A}]\n---\n# comment\n---\nflags:\n  - key: b\n    nam: B\n';
  const r = load([file('features.yml', yaml)], opts);
  t.same(r.problems.map((p) => [p.rule, p.line, p.column]), [
    ['schema.required', 6, 5],
    ['schema.additional-property', 7, 5],
  ]);
  const json = '{"flags": [{"key": "a", "name": "A"}]}\n{"flags": [{"key": "b", "name": 7}]}';
  const j = load([file('f.json', json)], opts);
  t.same(j.problems.map((p) => [p.rule, p.line, p.column]), [['schema.type', 2, 33]]);
});

t.test('positions through anchors, merge keys, empty values and flow collections', async (t) => {
  const yaml = [
    'flags:',
    '  - &base',
    '    key: a',
    '    name: A',
    '    enabled: "no"',
    '  - <<: *base',
    '    key: b',
    '  - key: c',
    '    name: C',
    '    description:',
    '    variants: [{key: x, name: ""}]',
    '',
  ].join('\n');
  const r = load([file('features.yml', yaml)], opts);
  t.same(brief(r.problems), [
    ['error', 'schema.type', 5, 14],
    ['error', 'schema.type', 5, 14],
    ['error', 'schema.type', 10, 5],
    ['error', 'schema.pattern', 11, 31],
  ], 'the merged field points at its anchored definition; an empty value at its key');
  t.match(r.problems[1].message, /flag `b`/);
  t.match(r.problems[2].message, /`description` of flag `c` must be a string \(got nothing\)/);
});

t.test('CRLF line endings and a byte order mark do not shift positions', async (t) => {
  const r = load([{ path: 'f.yml', bytes: enc.encode('\ufeffflags:\r\n  - key: a\r\n    nam: A\r\n') }], opts);
  t.same(r.problems.map((p) => [p.rule, p.line, p.column]), [
    ['schema.required', 2, 5],
    ['schema.additional-property', 3, 5],
  ]);
});
