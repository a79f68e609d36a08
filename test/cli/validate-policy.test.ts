/**
 * `vexil validate` with a policy file, through the real CLI: the state folder's
 * `.vexil/policy.yml` is read by default and `--policy FILE` replaces it; its checks report
 * located errors (exit 1); `rules:` severities move the exit status (`off` drops a problem,
 * `error` fails on it, `warning` passes unless `--strict`); a malformed or missing policy file is
 * a located error and fails the run. Fixtures in fixtures/policy/.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { runCli } from './run-cli.js';

const STATE = 'fixtures/policy/state';
const FLAGS = `${STATE}/flags.features.yml`;

/** A policy file in the test's folder (a new call replaces the folder). */
function policy(t: Test, text: string): string {
  const dir = t.testdir({});
  const path = join(dir, 'policy.yml');
  writeFileSync(path, text);
  return path;
}

t.test('the folder policy: each policy rule reported, located; segment.unused turned off', async (t) => {
  const r = await runCli(['validate', STATE]);
  t.equal(r.code, 1, r.stdout + r.stderr);
  const heads = r.stdout.split('\n').filter((l) => l.startsWith(STATE));
  t.same(heads.map((l) => l.split(': ').slice(0, 2).join(': ')), [
    `${FLAGS}:7:10: error policy.key.pattern`,
    `${FLAGS}:12:7: error policy.metadata.pattern`,
    `${FLAGS}:15:10: error policy.metadata.required`,
    `${FLAGS}:24:5: error policy.metadata.required`,
    `${FLAGS}:37:10: error policy.key.pattern`,
  ]);
  t.match(r.stdout, /flag `no-metadata` has no `owner`, `expires` in its metadata/);
  t.match(r.stdout, /\n {2}hint: add `expires` under the flag's `metadata`\n/);
  t.notMatch(r.stdout, /segment\.unused|checkout-v2|`internal`/);
  t.match(r.stdout, /\nFAILED: 1 state file, 5 errors, 0 warnings\n$/);
});

t.test('severities: warning passes unless --strict; off drops; error fails', async (t) => {
  const lowered = policy(t, 'rules: {policy.key.pattern: warning, segment.unused: info}\nkeys: {flag: "^[a-z0-9-]+$"}\n');
  const r = await runCli(['validate', '--policy', lowered, STATE]);
  t.equal(r.code, 0, r.stdout);
  t.match(r.stdout, /flags\.features\.yml:7:10: warning policy\.key\.pattern/);
  t.match(r.stdout, /flags\.features\.yml:37:10: info segment\.unused/);
  t.match(r.stdout, /\nOK: 1 state file, 0 errors, 1 warning, 2 info\n$/);
  const strict = await runCli(['validate', '--strict', '--policy', lowered, STATE]);
  t.equal(strict.code, 1, strict.stdout);

  const none = policy(t, '{}\n');
  const plain = await runCli(['validate', '--strict', '--policy', none, STATE]);
  t.equal(plain.code, 1, 'without the policy, segment.unused is a warning: --strict fails');
  t.match(plain.stdout, /warning segment\.unused/);
  const off = policy(t, 'rules: {segment.unused: off}\n');
  const quiet = await runCli(['validate', '--strict', '--policy', off, STATE]);
  t.equal(quiet.code, 0, quiet.stdout);
  t.equal(quiet.stdout, 'OK: 1 state file, 0 errors, 0 warnings\n');
  const raised = policy(t, 'rules: {segment.unused: error}\n');
  const failed = await runCli(['validate', '--policy', raised, STATE]);
  t.equal(failed.code, 1, failed.stdout);
  t.match(failed.stdout, /flags\.features\.yml:37:10: error segment\.unused/);
});

t.test("a namespace's own demands apply in that namespace only", async (t) => {
  const r = await runCli(['validate', 'fixtures/policy/namespaces']);
  t.equal(r.code, 1, r.stdout);
  t.match(r.stdout, /flags\.features\.yml:18:10: error policy\.key\.pattern: flag key `payment-provider` does not match the policy's flag key pattern `\^checkout-/);
  t.match(r.stdout, /flags\.features\.yml:22:5: error policy\.metadata\.required: flag `payment-provider` has no `ticket`/);
  t.match(r.stdout, /\nFAILED: 1 state file, 2 errors, 0 warnings\n$/);
});

t.test('time_properties: which properties the request-time check reads', async (t) => {
  const state = [
    'version: "1.3"',
    'segments:',
    '  - key: old',
    '    name: Old',
    '    match_type: ALL_MATCH_TYPE',
    '    constraints:',
    '      - {type: DATETIME_COMPARISON_TYPE, property: request_time, operator: lt, value: "2020-01-01T00:00:00Z"}',
    '',
  ].join('\n');
  const dir = t.testdir({ 'flags.features.yml': state, '.vexil': { 'policy.yml': 'time_properties: [request_time]\nrules: {segment.unused: off}\n' } });
  const r = await runCli(['validate', dir]);
  t.match(r.stdout, /flags\.features\.yml:7:\d+: warning constraint\.time\.decided/);
  writeFileSync(join(dir, 'other-policy.yml'), 'rules: {segment.unused: off}\n');
  const plain = await runCli(['validate', '--policy', join(dir, 'other-policy.yml'), dir]);
  t.notMatch(plain.stdout, /constraint\.time\.decided/);
  t.match(plain.stdout, /OK: 1 state file, 0 errors, 0 warnings\n$/);
});

t.test('a state file given directly reads no folder policy', async (t) => {
  const r = await runCli(['validate', FLAGS]);
  t.equal(r.code, 0, r.stdout);
  t.match(r.stdout, /OK: 1 state file, 0 errors, 2 warnings\n$/);
});

t.test('malformed policy files: located errors, exit 1, in every format', async (t) => {
  const r = await runCli(['validate', '--policy', 'fixtures/policy/bad/unknown-rule.yml', STATE]);
  t.equal(r.code, 1);
  t.match(r.stdout, /^fixtures\/policy\/bad\/unknown-rule\.yml:3:3: error policy\.rule\.unknown: `rules` names `segment\.unusd`/m);
  t.match(r.stdout, /\n {4}segment\.unusd: off\n {4}\^\n/);
  const json = await runCli(['validate', '--format', 'json', '--policy', 'fixtures/policy/bad/unsafe.yml', STATE]);
  t.equal(json.code, 1);
  const problems = JSON.parse(json.stdout) as Array<{ rule: string; file: string; line: number; column: number }>;
  t.same(problems.filter((p) => p.file.endsWith('unsafe.yml')).map((p) => `${p.line}:${p.column} ${p.rule}`), [
    '3:12 policy.pattern.unsafe', '4:11 policy.pattern.unsafe', '6:9 policy.pattern.unsafe',
  ]);
  const syntax = await runCli(['validate', '--policy', 'fixtures/policy/bad/syntax.yml', STATE]);
  t.equal(syntax.code, 1);
  t.match(syntax.stdout, /^fixtures\/policy\/bad\/syntax\.yml:\d+:\d+: error yaml\.syntax/m);
  const missing = await runCli(['validate', '--policy', 'no/such/policy.yml', STATE]);
  t.equal(missing.code, 1);
  t.match(missing.stdout, /no\/such\/policy\.yml: error file\.unreadable: the policy file no\/such\/policy\.yml could not be read/);
});
