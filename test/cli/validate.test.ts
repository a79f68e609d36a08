import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { FIXTURES, tempState } from '../store/temp-state.js';
import { runCli, spawnCli } from './run-cli.js';

const LOCATION = /^(.+):(\d+):(\d+): (error|warning) ([a-z0-9.-]+): (.+)$/;

t.test('examples/ is valid: exit 0 and an OK summary', async (t) => {
  const r = await runCli(['validate', 'examples']);
  t.equal(r.code, 0, r.stdout + r.stderr);
  // The one information: the disabled `legacy-dashboard` flag has a rule (examples/default.features.yml).
  t.match(r.stdout, /^examples\/default\.features\.yml:\d+:\d+: info flag\.disabled\.rules: flag `legacy-dashboard` is disabled/);
  t.match(r.stdout, /\nOK: 3 state files, 0 errors, 0 warnings, 1 info\n$/);
  t.equal(r.stderr, '');
});

t.test('the default PATH is the working folder', async (t) => {
  const dir = tempState(t, 'hello');
  const r = await runCli(['validate'], { cwd: dir });
  t.equal(r.code, 0, r.stdout + r.stderr);
  t.equal(r.stdout, 'OK: 1 state file, 0 errors, 0 warnings\n');
});

t.test('text: file:line:col: severity rule: message, the line, a caret, the hint, a summary; exit 1', async (t) => {
  const dir = tempState(t, 'broken');
  const r = await runCli(['validate', dir]);
  t.equal(r.code, 1);
  const lines = r.stdout.split('\n');
  const first = LOCATION.exec(lines[0] ?? '');
  t.ok(first, `first line is located: ${lines[0]}`);
  const [, file, line, col, severity, rule, message] = first!;
  t.equal(file, `${dir}/features.yml`);
  t.equal(severity, 'error');
  t.match(rule, /\./, 'a dotted rule id');
  t.match(message, /nobody-defined-this/);
  const source = readFileSync(join(dir, 'features.yml'), 'utf8').split('\n');
  t.equal(lines[1], `  ${source[Number(line) - 1]}`, 'the offending line');
  t.equal(lines[2], `  ${' '.repeat(Number(col) - 1)}^`, 'a caret under the column');
  t.match(lines[3], /^ {2}hint: \S/, 'the hint');
  t.match(lines.at(-2), /^FAILED: 1 state file, [1-9]\d* errors?, 0 warnings$/, 'summary last');
  t.equal(lines.at(-1), '');
});

t.test('json: an array of located problems', async (t) => {
  const dir = tempState(t, 'broken');
  const r = await runCli(['validate', '--format', 'json', dir]);
  t.equal(r.code, 1);
  const problems = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
  t.ok(Array.isArray(problems) && problems.length > 0);
  t.match(problems[0], {
    severity: 'error',
    rule: String,
    file: `${dir}/features.yml`,
    line: Number,
    column: Number,
    message: /nobody-defined-this/,
  });
  t.ok((problems[0]!.line as number) > 0);

  const ok = await runCli(['validate', '-f', 'json', '--no-checks', 'examples']);
  t.equal(ok.code, 0);
  t.same(JSON.parse(ok.stdout), [], 'valid state: an empty array');
});

t.test('github: workflow annotations', async (t) => {
  const dir = tempState(t, 'broken');
  const r = await runCli(['validate', '--format=github', dir]);
  t.equal(r.code, 1);
  const first = r.stdout.split('\n')[0]!;
  t.match(first, /^::error file=[^,]+,line=\d+,col=\d+,title=[a-z0-9.-]+::.+/);
  t.ok(first.startsWith(`::error file=${dir}/features.yml,`), first);
  t.notMatch(r.stdout, /^(OK|FAILED):/m, 'no summary line');

  const w = await runCli(['validate', '--format', 'github', join(FIXTURES, 'warning')]);
  t.equal(w.code, 0);
  t.match(w.stdout, /^::warning file=.+features\.yml,line=\d+,col=\d+,title=[a-z0-9.-]+::/);
});

t.test('warnings pass, unless --strict', async (t) => {
  const dir = join(FIXTURES, 'warning');
  const r = await runCli(['validate', dir]);
  t.equal(r.code, 0, r.stdout);
  t.match(r.stdout, /^.+features\.yml:\d+:\d+: warning [a-z0-9.-]+: .+$/m);
  // `le` never matches: its segment matches nobody and the rule using it never decides.
  t.match(r.stdout, /^OK: 1 state file, 0 errors, 3 warnings$/m);
  const s = await runCli(['validate', '--strict', dir]);
  t.equal(s.code, 1);
  t.match(s.stdout, /^FAILED: 1 state file, 0 errors, 3 warnings$/m);
});

t.test('files named directly are checked together; references resolve across them', async (t) => {
  const flags = join(FIXTURES, 'two-files/flags.features.yml');
  const segments = join(FIXTURES, 'two-files/segments.features.yml');
  const both = await runCli(['validate', flags, segments]);
  t.equal(both.code, 0, both.stdout);
  t.equal(both.stdout, 'OK: 2 state files, 0 errors, 0 warnings\n');
  const alone = await runCli(['validate', flags]);
  t.equal(alone.code, 1, 'without the segments file the rule names an unknown segment');
  t.match(alone.stdout, new RegExp(`^${flags.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: error `, 'm'));
});

t.test('several folders: each is its own state; one bad one fails the run', async (t) => {
  const bad = tempState(t, 'broken');
  const r = await runCli(['validate', 'examples', bad]);
  t.equal(r.code, 1);
  t.match(r.stdout, /^FAILED: 4 state files, /m);
});

t.test('an index glob that backtracks exponentially in a regex engine, against a long path, completes', async (t) => {
  const dir = tempState(t, 'hello');
  // 15 components of 250 bytes (the per-name limit): a 3,764-character path, under PATH_MAX.
  const name = 'a'.repeat(250);
  const deep = join(dir, ...Array.from({ length: 14 }, () => name));
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, name), 'not a state file\n');
  writeFileSync(join(dir, '.vexil.yml'), 'include:\n  - "*a*a*a*a*a*a*b"\n  - "{*a,*a*}*a*a*a*a*b"\n  - features.yml\nexclude:\n  - "*a*a*a*a*a*a*c"\n');
  const r = await runCli(['validate', dir]);
  t.equal(r.code, 0, r.stdout + r.stderr);
  t.equal(r.stdout, 'OK: 1 state file, 0 errors, 0 warnings\n', 'the long path is matched (and left out) like any other');
});

t.test('a reader that goes away (`| head`) ends the command quietly, not with an EPIPE crash', async (t) => {
  const child = spawnCli(['validate', '--format', 'json', 'examples']);
  // Close the pipe before the command writes anything: its first write meets a closed pipe.
  child.stdout!.destroy();
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  t.equal(code, 0, 'the exit status of the command (valid state)');
  t.notMatch(stderr, /EPIPE|Unhandled|Error:/, 'no crash on stderr');
});
