/**
 * Reading policy files (src/state/policy/policy-file.ts): a valid file (guards included) loads;
 * malformed ones (bad YAML, wrong types and unknown keys, an unknown rule id, patterns outside the
 * linear-time subset, an error rule lowered, alias expansion, several documents) give located
 * errors naming what is wrong. Fixtures in fixtures/policy/.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { readPolicy } from '../../../src/state/policy/policy-file.js';
import { REPO } from '../../cli/run-cli.js';

const read = (rel: string) => readPolicy(rel, readFileSync(`${REPO}fixtures/policy/${rel}`));
const text = (s: string) => readPolicy('p.yml', new TextEncoder().encode(s));
const brief = (r: ReturnType<typeof readPolicy>) => r.problems.map((p) => `${p.line}:${p.column} ${p.rule}`);

t.test('the fixture policy loads, guards included', async (t) => {
  const r = read('state/.vexil/policy.yml');
  t.same(r.problems, []);
  if (!('policy' in r)) return t.fail('no policy');
  t.same([...r.policy.severities], [['segment.unused', 'off']]);
  t.same(r.policy.metadata.required, ['owner', 'expires']);
  t.same([...r.policy.metadata.patterns.keys()], ['owner', 'expires', 'ticket']);
  t.ok(r.policy.keys.flag?.test('checkout-v2'));
  t.notOk(r.policy.keys.flag?.test('Beta_Access'));
  t.same(r.policy.guards, { maxRolloutChange: 20, protected: [{ namespace: 'checkout', flags: ['payment-provider'] }], maxImpactShare: 0.25 });
});

t.test('an empty file, or one of comments only, is an empty policy', async (t) => {
  for (const s of ['', '# nothing\n']) {
    const r = text(s);
    t.ok('policy' in r, JSON.stringify(r.problems));
  }
});

t.test('bad YAML: located syntax error', async (t) => {
  const r = read('bad/syntax.yml');
  t.ok(r.problems.length > 0);
  t.equal(r.problems[0]!.rule, 'yaml.syntax');
  t.equal(r.problems[0]!.file, 'bad/syntax.yml');
  t.ok(r.problems[0]!.line >= 2, JSON.stringify(r.problems[0]));
});

t.test('wrong types, unknown keys, out of range: one located error each', async (t) => {
  const r = read('bad/types.yml');
  t.same(brief(r), ['2:19 policy.invalid', '4:13 policy.invalid', '7:3 policy.invalid', '9:21 policy.invalid']);
  t.match(r.problems[0]!.message, /`rules.segment.unused` must be one of error, warning, info, off/);
  t.match(r.problems[1]!.message, /`metadata.required` must be an array/);
  t.match(r.problems[2]!.message, /`keys` has the unknown key `namespace`/);
  t.match(r.problems[3]!.message, /`guards.max_impact_share` must be <= 1/);
  t.ok(r.problems.every((p) => p.severity === 'error' && p.hint !== undefined));
});

t.test('an unknown rule id is a located error naming it; a known one beside it is fine', async (t) => {
  const r = read('bad/unknown-rule.yml');
  t.same(brief(r), ['3:3 policy.rule.unknown']);
  t.match(r.problems[0]!.message, /`segment\.unusd`, which is not a rule id of the catalogue/);
});

t.test('patterns outside the linear-time subset, or invalid: located at the pattern', async (t) => {
  const r = read('bad/unsafe.yml');
  t.same(brief(r), ['3:12 policy.pattern.unsafe', '4:11 policy.pattern.unsafe', '6:9 policy.pattern.unsafe']);
  t.match(r.problems[0]!.message, /metadata key `owner` is refused: back-reference `\\1`/);
  t.match(r.problems[1]!.message, /metadata key `team` is refused: lookahead `\(\?!`/);
  t.match(r.problems[2]!.message, /flag keys is refused: not a valid pattern/);
});

t.test('an error that keeps a state from loading cannot be lowered; a policy rule can', async (t) => {
  const r = read('bad/lowered.yml');
  t.same(brief(r), ['2:16 policy.invalid']);
  t.match(r.problems[0]!.message, /`schema\.type` is an error that keeps the state from loading/);
});

t.test('several documents, alias expansion, invalid UTF-8: located errors', async (t) => {
  t.same(brief(text('rules: {}\n---\nrules: {}\n')), ['3:1 policy.invalid'], 'at the second document');
  const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 7; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(', ')}]`);
  const r = text(`guards:\n  protected:\n    - namespace: x\n      flags: []\nmetadata:\n  required: []\n${bomb.map((l) => `x${l}`).join('\n')}\n`);
  t.same(brief(r), ['1:1 policy.invalid']);
  t.match(r.problems[0]!.message, /more than 100000 values/);
  const bad = readPolicy('p.yml', new Uint8Array([0x72, 0x3a, 0x20, 0xff]));
  t.same(brief(bad), ['1:4 file.encoding']);
});

t.test("a namespace's patterns are checked and located like the top level's", async (t) => {
  const r = text('namespaces:\n  checkout:\n    keys: {flag: "^(?=c)"}\n    colour: red\n');
  t.same(brief(r), ['4:5 policy.invalid']);
  const unsafe = text('namespaces:\n  checkout:\n    keys: {flag: "^(?=c)"}\n');
  t.same(brief(unsafe), ['3:18 policy.pattern.unsafe']);
});
