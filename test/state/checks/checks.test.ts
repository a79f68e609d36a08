/**
 * Each semantic check on the fixtures of fixtures/checks/: `<rule>.yml` triggers it at exactly
 * these places, `<rule>.near-miss.yml` (state that looks alike but is fine, or cannot be decided
 * exactly) never does. The example reports each of its mistakes. Loaded as `vexil
 * validate` loads files, with "today" injected.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { load } from '../../../src/state/load.js';
import type { Problem } from '../../../src/model/problem.js';
import { RULES } from '../../../src/state/rules.js';

const DIR = fileURLToPath(new URL('../../../fixtures/checks/', import.meta.url));
const TODAY = new Date('2026-11-27T12:00:00Z');

function loadChecked(name: string, today = TODAY): readonly Problem[] {
  const r = load([{ path: name, bytes: new Uint8Array(readFileSync(DIR + name)) }], { reference: 'main', revision: 'r', checks: { today } });
  if (r.snapshot === undefined) throw new Error(`${name} does not load: ${JSON.stringify(r.problems)}`);
  return r.problems;
}

const at = (ps: readonly Problem[], rule: string) => ps.filter((p) => p.rule === rule).map((p) => `${p.line}:${p.column}`);

/** Rule id → the line:column of every report in `<rule>.yml`. */
const EXPECTED: Record<string, string[]> = {
  'flag.rollouts.no-effect': ['7:5', '15:5'],
  'rule.unreachable': ['14:9', '31:9', '36:9', '48:9', '54:9'],
  'rollout.unreachable': ['8:9', '14:9', '20:9', '28:9', '32:9'],
  'rule.distributions.incomplete': ['11:9', '25:9'],
  'segment.unmatchable': ['17:9', '24:9', '30:9', '36:9', '42:9', '48:9', '54:9', '59:9', '65:9', '71:9', '77:9', '83:9'],
  'segment.unused': ['12:10', '15:10'],
  'variant.unserved': ['8:14', '9:14', '10:14', '11:14'],
  'flag.disabled.rules': ['5:5', '14:10'],
  'constraint.time.decided': ['15:9', '20:9'],
  'flag.expired': ['12:7', '19:7'],
};

t.test('every check family has a fixture and a near miss', async (t) => {
  const files = new Set(readdirSync(DIR));
  for (const rule of Object.keys(EXPECTED)) {
    t.ok(files.has(`${rule}.yml`), `${rule}.yml`);
    t.ok(files.has(`${rule}.near-miss.yml`), `${rule}.near-miss.yml`);
    t.ok(Object.hasOwn(RULES, rule), `${rule} is catalogued`);
  }
});

for (const [rule, places] of Object.entries(EXPECTED)) {
  t.test(`${rule}: reported where it applies, not on the near misses`, async (t) => {
    const problems = loadChecked(`${rule}.yml`);
    t.same(at(problems, rule), places);
    for (const p of problems.filter((x) => x.rule === rule)) {
      t.equal(p.severity, RULES[rule as keyof typeof RULES].severity, 'the catalogue severity');
      t.ok(p.message.length > 20 && p.hint !== undefined && p.hint.length > 10, 'a message and a hint');
    }
    t.same(at(loadChecked(`${rule}.near-miss.yml`), rule), [], 'no report on the near misses');
  });
}

t.test('the near misses of segment.unmatchable report nothing at all about their segments', async (t) => {
  const ps = loadChecked('segment.unmatchable.near-miss.yml');
  t.same(ps.map((p) => p.rule), []);
});

t.test("the issue's example: each mistake, with its message", async (t) => {
  const ps = loadChecked('issue-example.features.yml');
  t.same(ps.map((p) => [p.severity, p.rule, p.line, p.column]), [
    ['warning', 'flag.rollouts.no-effect', 8, 5],
    ['warning', 'rollout.unreachable', 9, 9],
    ['warning', 'variant.unserved', 19, 14],
    ['warning', 'rule.distributions.incomplete', 22, 9],
    ['warning', 'rule.unreachable', 27, 9],
    ['warning', 'segment.unmatchable', 43, 9],
    ['warning', 'segment.unused', 47, 10],
  ]);
  const text = ps.map((p) => p.message).join('\n');
  t.match(text, /everyone gets true/);
  t.match(text, /20% of the entities rule 1 of flag `colors` matches get no variant .* do not fall through/);
  t.match(text, /rule 1 before it matches every entity \(segment `everyone` has no constraints\)/);
  t.match(text, /constraints 1, 2 on `plan` cannot all hold/);
});

t.test('today is injected: the same constraint is decided or not by the date given', async (t) => {
  t.same(at(loadChecked('constraint.time.decided.yml', new Date('2020-01-01T00:00:00Z')), 'constraint.time.decided'), []);
  t.same(at(loadChecked('constraint.time.decided.near-miss.yml', new Date('2031-01-01T00:00:00Z')), 'constraint.time.decided'), ['15:9']);
});

t.test('without the checks option, load reports none of them', async (t) => {
  const r = load([{ path: 'x.yml', bytes: new Uint8Array(readFileSync(DIR + 'issue-example.features.yml')) }], { reference: 'main', revision: 'r' });
  t.same(r.problems, []);
});

t.test('a state with errors gets no checks (its errors come first)', async (t) => {
  const text = readFileSync(DIR + 'issue-example.features.yml', 'utf8').replace('variant: green', 'variant: purple');
  const r = load([{ path: 'x.yml', bytes: new TextEncoder().encode(text) }], { reference: 'main', revision: 'r', checks: { today: TODAY } });
  t.same(r.problems.map((p) => p.rule), ['distribution.variant.unknown']);
});
