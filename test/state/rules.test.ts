/**
 * The rule catalogue (src/state/rules.ts) against the code that emits problems: every rule id the
 * code names is catalogued (read from the sources, so a new emitter is checked without a fixture),
 * every problem the fixture corpus produces has a catalogued rule, and every catalogued id is
 * emitted somewhere (no dead entries in docs/errors.md).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { load } from '../../src/state/load.js';
import { RULES, isRuleId } from '../../src/state/rules.js';
import { readTestFile } from '../../src/state/flag-tests/read-test-file.js';
import { fixtureDir, fixtureFile, listFiles, readFixture, STATE_FIXTURES } from '../support/state-fixture.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'ui' && e.name !== 'node_modules') out.push(...sourceFiles(path));
    } else if (e.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** A string literal or a template literal on one line (a template's placeholders may hold quotes). */
const LITERAL = /`[^`\n]*`|'[^'\n]*'/g;
const LIT = String.raw`(?:\`[^\`\n]*\`|'[^'\n]*')`;

/**
 * The places a rule id is written where a problem is made: `rule: '...'`, a reporter's
 * `report('error', '...'`, `finding('...'`, `problem('...'`, `new FileRefusedError('...'`,
 * `'...' satisfies RuleId` (also `(a ? 'x' : 'y') satisfies RuleId`) and `: RuleId = ...;` (the
 * values of a conditional there).
 * Template literals count with their static text (`${kind}.segment.unknown`).
 */
const EMITTERS: readonly RegExp[] = [
  new RegExp(String.raw`\brule:\s*(${LIT})`, 'g'),
  new RegExp(String.raw`\breport\(\s*'(?:error|warning)',\s*(${LIT})`, 'g'),
  new RegExp(String.raw`\bfinding\(\s*(${LIT})`, 'g'),
  new RegExp(String.raw`\bproblem\(\s*(${LIT})`, 'g'),
  new RegExp(String.raw`\bnew FileRefusedError\(\s*(${LIT})`, 'g'),
  new RegExp(String.raw`(${LIT})\s*satisfies RuleId`, 'g'),
  new RegExp(String.raw`\?\s*(${LIT}\s*:\s*${LIT})\s*\)\s*satisfies RuleId`, 'g'),
  /:\s*RuleId\s*=\s*([^;]+);/g,
];

/** In a conditional expression, the literals that are its values (after `?` or `:`), not its tests. */
const BRANCH_VALUE = new RegExp(String.raw`(?<=[?:]\s*)${LIT}`, 'g');

/** Rule ids written in `text`, as [id, line]; `${...}` parts stay in the id. */
function emittedIds(text: string): [string, number][] {
  const out: [string, number][] = [];
  for (const re of EMITTERS) {
    for (const m of text.matchAll(re)) {
      const line = text.slice(0, m.index).split('\n').length;
      const expression = m[1]!;
      const literals = expression.trimStart().startsWith("'") || expression.trimStart().startsWith('`') ? LITERAL : BRANCH_VALUE;
      for (const lit of expression.matchAll(literals)) out.push([lit[0].slice(1, -1), line]);
    }
  }
  return out;
}

/** Whether an id as written (possibly a template) names only catalogued ids. */
function catalogued(written: string): boolean {
  if (!written.includes('${')) return isRuleId(written);
  // A template: it must match some catalogued ids, each part between placeholders in place.
  const pattern = templatePattern(written);
  return Object.keys(RULES).some((id) => pattern.test(id));
}

/** The ids a template literal's text can make: each `${...}` stands for a dotted-id part. */
function templatePattern(written: string): RegExp {
  return new RegExp(`^${written.split(/\$\{[^}]*\}/).map((s) => s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')).join('[a-z-]+')}$`);
}

t.test('the scanner finds an emitted rule id the catalogue lacks (it can fail)', async (t) => {
  const ids = emittedIds([
    "report('error', 'flag.variant.unknown', path, 'm', 'h');",
    "return { severity: 'error', rule: 'yaml.syntax', file };",
    "throw new FileRefusedError('file.too-big', 'm');",
    'report(\'warning\', `${kind}.segment.unknwon`, path, m, h);',
  ].join('\n'));
  t.same(ids.map(([id]) => id).sort(), ['${kind}.segment.unknwon', 'file.too-big', 'flag.variant.unknown', 'yaml.syntax'].sort());
  t.same(ids.filter(([id]) => !catalogued(id)).map(([id]) => id).sort(), ['${kind}.segment.unknwon', 'file.too-big', 'flag.variant.unknown'].sort());
});

t.test('every rule id written in src/ where a problem is made is in the catalogue', async (t) => {
  let seen = 0;
  const missing: string[] = [];
  for (const file of sourceFiles(SRC)) {
    if (file.endsWith(join('state', 'rules.ts'))) continue;
    for (const [id, line] of emittedIds(readFileSync(file, 'utf8'))) {
      seen++;
      if (!catalogued(id)) missing.push(`${relative(ROOT, file)}:${line}: ${id}`);
    }
  }
  t.same(missing, [], 'rule ids missing from src/state/rules.ts');
  t.ok(seen >= 50, `the scan sees the emitters (${seen} rule ids written)`);
});

t.test('every catalogued rule id is written in src/ (no dead entries)', async (t) => {
  const written = new Set<string>();
  for (const file of sourceFiles(SRC)) {
    if (file.endsWith(join('state', 'rules.ts'))) continue;
    for (const [id] of emittedIds(readFileSync(file, 'utf8'))) written.add(id);
  }
  // Ids made from parts: flag test rules are `flag-test.` + ruleOf(e) (read-test-file.ts).
  const readTestFileText = readFileSync(join(SRC, 'state', 'flag-tests', 'read-test-file.ts'), 'utf8');
  const dead = Object.keys(RULES).filter((id) => {
    if (written.has(id)) return false;
    for (const w of written) if (w.includes('${') && templatePattern(w).test(id)) return false;
    if (id.startsWith('flag-test.') && readTestFileText.includes(`return '${id.slice('flag-test.'.length)}';`)) return false;
    return true;
  });
  t.same(dead, [], 'catalogued ids no code emits');
});

t.test('every problem of the fixture corpus has a catalogued rule', async (t) => {
  const rules = new Set<string>();
  // Each problem fixture alone (its name says which rule it exercises)...
  for (const name of listFiles(fixtureDir('problems'))) {
    for (const p of load([fixtureFile('problems', name)], { reference: 'main', revision: 'r' }).problems) rules.add(p.rule);
  }
  // ...every state fixture as a whole, with its index file...
  for (const e of readdirSync(STATE_FIXTURES, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const fx = readFixture(e.name);
    for (const p of fx.selectionProblems) rules.add(p.rule);
    for (const p of load(fx.files, { reference: 'main', revision: 'r' }).problems) rules.add(p.rule);
  }
  // ...and every flag test file.
  const flagTests = fileURLToPath(new URL('../../fixtures/flag-tests/', import.meta.url));
  for (const rel of listFiles(flagTests).filter((p) => p.endsWith('.test.yml'))) {
    for (const p of readTestFile(rel, readFileSync(join(flagTests, rel), 'utf8')).problems) rules.add(p.rule);
  }
  t.ok(rules.size >= 30, `the corpus yields many rules (${rules.size})`);
  t.same([...rules].filter((r) => !isRuleId(r)), [], 'rules missing from the catalogue');
});

t.test('each entry has a severity, a meaning and a hint, each one line', async (t) => {
  for (const [id, rule] of Object.entries(RULES)) {
    t.match(id, /^[a-z][a-z-]*(\.[a-z][a-z-]*)+$/, `${id}: dotted lower-case`);
    t.ok(rule.severity === 'error' || rule.severity === 'warning' || rule.severity === 'info', `${id}: severity`);
    for (const text of [rule.meaning, rule.hint]) t.ok(text.length > 0 && !text.includes('\n'), `${id}: one line`);
  }
});
