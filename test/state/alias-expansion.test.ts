/**
 * YAML alias expansion is bounded for whole state files ("billion laughs"): through `vexil
 * validate` and through a served local folder, such a file is a located problem
 * (`yaml.alias-expansion`, at the alias that passes the budget), refused without being expanded,
 * while the last good snapshot stays served and memory stays bounded. The fixtures put the
 * aliases of aliases anywhere: top level, metadata, descriptions, constraint values, valid rules
 * and distributions, and a cycle.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ALIAS_EXPANSION_RULE, MAX_ALIAS_EXPANSION } from '../../src/state/alias-expansion.js';
import { REPO, runCli } from '../cli/run-cli.js';
import { get, startTestServer } from '../server/support.js';
import { nextEvent } from '../store/temp-state.js';

const BOMBS = join(REPO, 'fixtures/state/alias-bombs');
const BUDGET = join(REPO, 'fixtures/state/alias-budget');
const MB = 1024 * 1024;

interface JsonProblem {
  severity: string;
  rule: string;
  file: string;
  line: number;
  column: number;
  message: string;
}

/** The character a 1-based line/column points at in `text`. */
function charAt(text: string, line: number, column: number): string | undefined {
  return text.split('\n')[line - 1]?.[column - 1];
}

t.test('vexil validate: each billion-laughs file is one located problem at an alias; exit 1', async (t) => {
  const files = readdirSync(BOMBS).sort();
  t.equal(files.length, 6);
  const r = await runCli(['validate', '--format', 'json', BOMBS]);
  t.equal(r.code, 1, r.stderr);
  const problems = JSON.parse(r.stdout) as JsonProblem[];
  t.same(problems.map((p) => p.file), files.map((f) => join(BOMBS, f)), 'one problem per file, nothing else');
  for (const p of problems) {
    t.match(p, { severity: 'error', rule: ALIAS_EXPANSION_RULE }, p.file);
    t.equal(charAt(readFileSync(p.file, 'utf8'), p.line, p.column), '*', `${p.file}:${p.line}:${p.column} points at an alias`);
  }
  const cycle = problems.find((p) => p.file.endsWith('f-cycle.features.yml'))!;
  t.match(cycle.message, /infinite/);
  const valid = problems.find((p) => p.file.endsWith('e-valid-rules.features.yml'))!;
  t.match(valid.message, /1,000,000 values beyond those written out/);

  const text = await runCli(['validate', BOMBS]);
  t.equal(text.code, 1);
  t.match(text.stdout, /e-valid-rules\.features\.yml:\d+:\d+: error yaml\.alias-expansion: /);
  t.match(text.stdout, /FAILED: 6 state files, 6 errors, 0 warnings/);
});

t.test('vexil validate: the budget is shared by the files of a state', async (t) => {
  const both = await runCli(['validate', '--format', 'json', BUDGET]);
  t.equal(both.code, 1, both.stderr);
  const problems = JSON.parse(both.stdout) as JsonProblem[];
  t.equal(problems.length, 1);
  t.match(problems[0], { rule: ALIAS_EXPANSION_RULE, file: join(BUDGET, 'b.features.yml'), message: /files together/ });
  t.equal(charAt(readFileSync(join(BUDGET, 'b.features.yml'), 'utf8'), problems[0]!.line, problems[0]!.column), '*');

  for (const file of ['a.features.yml', 'b.features.yml']) {
    const alone = await runCli(['validate', join(BUDGET, file)]);
    t.equal(alone.code, 0, `${file} alone is within the budget: ${alone.stdout}`);
  }
});

t.test('vexil validate: 1 MB of aliases within the budget loads (the measure is linear)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-aliases-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // 20,000 flags sharing one list of variants and one list of rules through aliases: each alias
  // adds a few values, about 200,000 in all.
  const lines = [
    'version: "1.4"',
    'segments: [{key: s, name: S, match_type: ALL_MATCH_TYPE}]',
    'flags:',
    '  - {key: f0, name: F, variants: &vs [{key: a}, {key: b}], rules: &rs [{segment: s, distributions: [{variant: a, rollout: 50}]}]}',
  ];
  for (let i = 1; i < 20_000; i++) lines.push(`  - {key: flag-number-${i}, name: Flag ${i}, variants: *vs, rules: *rs}`);
  const text = lines.join('\n') + '\n';
  t.ok(text.length > MB, `${text.length} bytes`);
  writeFileSync(join(dir, 'features.yml'), text);
  // Loading is measured here; the checks would report on each of the 20,000 disabled flags.
  const r = await runCli(['validate', '--no-checks', dir]);
  t.equal(r.code, 0, r.stdout + r.stderr);
  t.equal(r.stdout, 'OK: 1 state file, 0 errors, 0 warnings\n');
});

t.test('served: an edit to a billion-laughs file keeps the last good snapshot and is reported at /meta/snapshots', async (t) => {
  const { url, store, dir } = await startTestServer(t);
  const good = store.get()!.revision;
  const before = await get(`${url}/api/v1/namespaces/default/flags/color`);
  t.equal(before.status, 200);
  const rssBefore = process.memoryUsage().rss;

  for (const bomb of readdirSync(BOMBS).sort()) {
    const text = readFileSync(join(BOMBS, bomb), 'utf8');
    const rejected = nextEvent(store, 'rejected');
    writeFileSync(join(dir, 'features.yml'), text);
    await store.refresh();
    await rejected;

    const flag = await get(`${url}/api/v1/namespaces/default/flags/color`);
    t.equal(flag.status, 200, `${bomb}: the last good snapshot is still served`);
    t.equal(flag.headers.get('x-vexil-revision'), good);
    t.same(flag.body, before.body);

    const snaps = await get(`${url}/meta/snapshots`);
    const [ref] = snaps.body.references;
    t.equal(ref.revision.id, good);
    const problems = ref.lastRejected.problems as JsonProblem[];
    t.equal(problems.length, 1, `${bomb}: one problem`);
    t.match(problems[0], { severity: 'error', rule: ALIAS_EXPANSION_RULE, file: 'features.yml' });
    t.equal(charAt(text, problems[0]!.line, problems[0]!.column), '*', `${bomb}: located at an alias`);
  }

  const growth = process.memoryUsage().rss - rssBefore;
  t.ok(growth < 200 * MB, `RSS grew by ${(growth / MB).toFixed(1)} MB over six refused files (bound: 200 MB)`);
  t.equal(MAX_ALIAS_EXPANSION, 1_000_000, 'the documented limit');
});
