/**
 * `vexil validate` with the semantic checks, through the real CLI: warnings pass unless
 * `--strict`, `--no-checks` skips them, information never fails, the examples pass `--strict`,
 * and `--format sarif` is a SARIF 2.1.0 log valid against the official schema (the OASIS
 * sarif-2.1.0-rtm.5 JSON schema as shipped in @microsoft/jest-sarif, draft-04, read with
 * ajv-draft-04) whose results are the problems of `--format json`, one each, located.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import Ajv04Module from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { RULES } from '../../src/state/rules.js';
import { FIXTURES, tempState } from '../store/temp-state.js';
import { REPO, runCli } from './run-cli.js';

const ISSUE = 'fixtures/checks/issue-example.features.yml';
const SCHEMA = JSON.parse(readFileSync(join(REPO, 'node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'), 'utf8')) as Record<string, unknown>;

function sarifValidator() {
  // The schema's `language` pattern is not valid with the u flag (a stray `]`): read patterns as plain RegExp.
  const ajv = new Ajv04Module.default({ allErrors: true, strict: false, unicodeRegExp: false });
  addFormats.default(ajv);
  return ajv.compile(SCHEMA);
}

t.test('checks are warnings: exit 0, unless --strict; --no-checks skips them', async (t) => {
  const r = await runCli(['validate', ISSUE]);
  t.equal(r.code, 0, r.stdout + r.stderr);
  t.match(r.stdout, /issue-example\.features\.yml:27:9: warning rule\.unreachable: rule 2 of flag `colors` never decides/);
  t.match(r.stdout, /\n {2}hint: move it before rule 1/);
  t.match(r.stdout, /\nOK: 1 state file, 0 errors, 7 warnings\n$/);
  const strict = await runCli(['validate', '--strict', ISSUE]);
  t.equal(strict.code, 1);
  t.match(strict.stdout, /\nFAILED: 1 state file, 0 errors, 7 warnings\n$/);
  const skipped = await runCli(['validate', '--strict', '--no-checks', ISSUE]);
  t.equal(skipped.code, 0, skipped.stdout);
  t.equal(skipped.stdout, 'OK: 1 state file, 0 errors, 0 warnings\n');
});

t.test('the examples pass --strict (information does not fail)', async (t) => {
  const r = await runCli(['validate', '--strict', 'examples']);
  t.equal(r.code, 0, r.stdout + r.stderr);
  t.match(r.stdout, /OK: 3 state files, 0 errors, 0 warnings, 1 info\n$/);
  const gh = await runCli(['validate', '--format', 'github', 'examples']);
  t.match(gh.stdout, /^::notice file=examples\/default\.features\.yml,line=\d+,col=\d+,title=flag\.disabled\.rules::/);
});

t.test('--format sarif: valid SARIF 2.1.0, the catalogue as rules, one located result per problem', async (t) => {
  const validate = sarifValidator();
  const broken = tempState(t, 'broken');
  for (const args of [[ISSUE], ['examples'], [broken], [join(FIXTURES, 'warning')]]) {
    const r = await runCli(['validate', '--format', 'sarif', ...args]);
    const json = await runCli(['validate', '--format', 'json', ...args]);
    t.equal(r.code, json.code, `${args[0]}: the same exit status as the other formats`);
    const log = JSON.parse(r.stdout) as {
      version: string;
      runs: Array<{ tool: { driver: { name: string; rules: Array<{ id: string; defaultConfiguration: { level: string } }> } }; results: Array<Record<string, any>> }>;
    };
    t.ok(validate(log), `${args[0]}: valid against the schema ${JSON.stringify(validate.errors?.slice(0, 3))}`);
    t.equal(log.version, '2.1.0');
    t.equal(log.runs.length, 1);
    const run = log.runs[0]!;
    t.equal(run.tool.driver.name, 'vexil');
    t.same(run.tool.driver.rules.map((r) => r.id), Object.keys(RULES), 'rules: the catalogue, in order');
    t.equal(run.tool.driver.rules.find((r) => r.id === 'flag.disabled.rules')!.defaultConfiguration.level, 'note');
    const problems = JSON.parse(json.stdout) as Array<{ severity: string; rule: string; file: string; line: number; column: number; message: string }>;
    t.equal(run.results.length, problems.length, 'one result per problem');
    run.results.forEach((res, i) => {
      const p = problems[i]!;
      t.equal(res.ruleId, p.rule);
      t.equal(run.tool.driver.rules[res.ruleIndex as number]!.id, p.rule, 'ruleIndex points at the rule');
      t.equal(res.level, p.severity === 'info' ? 'note' : p.severity);
      t.ok((res.message.text as string).startsWith(p.message));
      t.equal(res.locations.length, 1, 'code scanning needs one location per result');
      const loc = res.locations[0].physicalLocation;
      t.equal(loc.artifactLocation.uri, p.file.split('/').map(encodeURIComponent).join('/'));
      t.same(loc.region, p.line > 0 ? { startLine: p.line, startColumn: p.column } : { startLine: 1, startColumn: 1 });
    });
  }
});

t.test('the schema check can fail: a log without a version is refused', async (t) => {
  const validate = sarifValidator();
  const r = await runCli(['validate', '--format', 'sarif', ISSUE]);
  const log = JSON.parse(r.stdout) as Record<string, unknown>;
  delete log.version;
  t.notOk(validate(log));
  const bad = JSON.parse(r.stdout) as { runs: Array<{ results: Array<{ level: string }> }> };
  bad.runs[0]!.results[0]!.level = 'info';
  t.notOk(validate(bad), 'a level outside SARIF is refused');
});

t.test('an unknown format names sarif among the formats', async (t) => {
  const r = await runCli(['validate', '--format', 'xml', 'examples']);
  t.equal(r.code, 2);
  t.match(r.stderr, /text, json, github, sarif/);
});
