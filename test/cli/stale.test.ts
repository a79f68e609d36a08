/**
 * `vexil stale` through the real CLI: the fixture state in text, JSON (valid against
 * schemas/stale.schema.json) and markdown; a real Git repository whose flag became 100% at a known
 * commit (named as "since", bounded by --max-commits, state in a sub-folder, unchanged trees not
 * reloaded); the --code scan over a tree with .gitignore files (nested, negation), a binary, a
 * file over the size bound, .git, and the file and byte bounds; bad input (exit 1 or 2, a clear
 * message).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import t from 'tap';
import { gitUnavailableReason } from '../support/git-fixture.js';
import { createTestRepo } from '../support/git-repo.js';
import { reportMissing, skipUnlessCI } from '../support/requirements.js';
import { REPO, runCli } from './run-cli.js';

const schema = JSON.parse(readFileSync(join(REPO, 'schemas/stale.schema.json'), 'utf8')) as object;
const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);
const part = (name: string) => readFileSync(join(REPO, 'fixtures/stale/parts', name), 'utf8');
const STATE = 'fixtures/stale/state';

interface Finding { kind: string; flag: string; file: string; line: number; column: number; since?: { commit: string; bounded: boolean } | null; outcome?: unknown }
interface Report { findings: Finding[]; summary: Record<string, number>; code: { files: number; skipped: Record<string, number>; complete: boolean; limit: string | null } | null; history: { commitsRead: number } | null; problems: { rule: string; file: string; line: number }[] }

function tmp(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-stale-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('the fixture: text, one line per finding with its location; exit 0', async (t) => {
  const r = await runCli(['stale', STATE, '--today', '2026-11-27']);
  t.equal(r.code, 0, r.stderr);
  for (const line of [
    'state fixtures/stale/state, today 2026-11-27',
    'Serving one outcome to every entity (6):',
    '  fixtures/stale/state/flags.features.yml:31:5  default/beta-access serves true to every entity',
    '  fixtures/stale/state/flags.features.yml:23:5  default/switched-off serves FLAG_DISABLED (variant v2) to every entity',
    'Temporary and past their expiry date (2):',
    'Lifecycle metadata problems (1):',
    '17 flags: 6 serving one outcome, 2 expired (no --code: references not checked)',
  ]) {
    t.ok(r.stdout.includes(`${line}\n`), line);
  }
  t.match(r.stdout, /flags\.features\.yml:\d+:\d+ {2}default\/old-experiment is temporary and expired on 2026-01-31 \[owner @growth\]\n/);
});

t.test('the fixture: json valid against the schema, markdown tables', async (t) => {
  const r = await runCli(['stale', STATE, '--today', '2026-11-27', '--format', 'json']);
  t.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as Report;
  t.ok(validate(doc), JSON.stringify(validate.errors));
  t.same(doc.summary, { flags: 17, uniform: 6, expired: 2, unreferenced: 0 });
  t.same(doc.findings.filter((f) => f.kind === 'expired').map((f) => f.flag), ['old-experiment', 'timed-out']);
  t.same(doc.problems.map((p) => p.rule), ['flag.expired', 'flag.expires.invalid', 'flag.expired']);
  t.ok(doc.problems.every((p) => p.file === 'fixtures/stale/state/flags.features.yml' && p.line > 0));
  t.equal(doc.history, null);
  t.equal(doc.code, null);
  const beta = doc.findings.find((f) => f.flag === 'beta-access')!;
  t.same(beta.outcome, { kind: 'boolean', value: true });
  t.equal(beta.since, null);

  const m = await runCli(['stale', STATE, '--today', '2026-11-27', '--format', 'markdown']);
  t.equal(m.code, 0, m.stderr);
  t.match(m.stdout, /^### Stale flags: fixtures\/stale\/state\n/);
  t.ok(m.stdout.includes('| `default/beta-access` |  | always true | fixtures/stale/state/flags.features.yml:31:5 |\n'));
  t.ok(m.stdout.includes('| `default/old-experiment` | @growth | expired on 2026-01-31 |'));
});

const noGit = gitUnavailableReason();
t.test('--repo: the commit since which a flag has served one outcome', { skip: skipUnlessCI(noGit) }, async (t) => {
  if (noGit !== undefined) return reportMissing(t, 'git', noGit); // reached under CI only: fails
  const repo = await createTestRepo(t);
  const c1 = await repo.commit('main', { 'flags/features.yml': part('before.features.yml') }, { message: 'checkout-v2 at 50%' });
  const c2 = await repo.commit('main', { 'flags/notes.md': 'state notes\n' }, { message: 'notes beside the state' });
  const c3 = await repo.commit('main', { 'flags/features.yml': part('after.features.yml') }, { message: 'checkout-v2 to everyone' });
  const c4 = await repo.commit('main', { 'README.md': 'outside the state folder\n' }, { message: 'readme' });
  const c5 = await repo.commit('main', { 'flags/notes.md': 'more notes\n' }, { message: 'more notes' });

  const r = await runCli(['stale', 'flags', '--repo', repo.gitdir, '--format', 'json', '--today', '2026-11-27']);
  t.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as Report & { state: { path: string; revision: string } };
  t.ok(validate(doc), JSON.stringify(validate.errors));
  t.same(doc.state.revision, c5);
  const since = (flag: string) => doc.findings.find((f) => f.kind === 'uniform' && f.flag === flag)?.since;
  t.equal(since('checkout-v2')?.commit, c3, 'became 100% at c3');
  t.equal(since('checkout-v2')?.bounded, false);
  t.equal(since('always-on')?.commit, c1, 'true since the first commit');
  t.equal(since('always-on')?.bounded, false);
  t.equal(doc.history!.commitsRead, 5);
  t.not(c2, c4);
  const expired = doc.findings.find((f) => f.kind === 'expired')!;
  t.equal(expired.flag, 'checkout-v2');
  t.equal(expired.file, 'flags/features.yml');

  const text = await runCli(['stale', 'flags', '--repo', repo.gitdir, '--today', '2026-11-27']);
  t.ok(text.stdout.includes(`flags/features.yml:3:5  default/checkout-v2 serves true to every entity, since commit ${c3.slice(0, 12)} (`), text.stdout);

  // Bounded: two commits read (c5, c4); both runs go on beyond them.
  const b = JSON.parse((await runCli(['stale', 'flags', '--repo', repo.gitdir, '--format', 'json', '--max-commits', '2'])).stdout) as Report;
  t.equal(b.history!.commitsRead, 2);
  for (const f of b.findings.filter((x) => x.kind === 'uniform')) t.same([f.since!.commit, f.since!.bounded], [c4, true], f.flag);

  // --rev: at c2 checkout-v2 was not uniform; always-on was since c1.
  const old = JSON.parse((await runCli(['stale', 'flags', '--repo', repo.gitdir, '--rev', c2, '--format', 'json'])).stdout) as Report;
  t.same(old.findings.filter((f) => f.kind === 'uniform').map((f) => [f.flag, f.since!.commit]), [['always-on', c1]]);
});

t.test('--code: whole-word keys in the files git would track, within the bounds', async (t) => {
  const root = tmp(t);
  const w = (rel: string, data: string | Uint8Array) => {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), data);
  };
  w('flags/features.yml', part('code.features.yml'));
  w('.gitignore', 'build/\n*.gen.ts\n!keep.gen.ts\n');
  w('src/app.ts', 'if (client.isEnabled("used-flag")) showBetaAccess("beta-access", beta_mode);\n');
  w('src/cli.sh', 'run --cli-switch\n');
  w('build/out.js', 'ignored-only\n');
  w('src/x.gen.ts', 'generated-only\n');
  w('src/keep.gen.ts', 'negated-back\n');
  w('sub/.gitignore', 'local.txt\n');
  w('sub/local.txt', 'nested-ignored\n');
  w('sub/other.txt', 'nothing here\n');
  w('assets/logo.bin', Buffer.concat([Buffer.from([0x89, 0x50, 0, 0]), Buffer.from(' binary-only ')]));
  w('docs/big.txt', `${'x'.repeat(3000)} big-only\n`);
  w('.git/config', 'git-only\n');
  w('...', 'cli-switch appears here too\n'); // a name the ignore package refuses as a path

  const r = await runCli(['stale', 'flags', '--code', '.', '--max-file-bytes', '2000', '--format', 'json'], { cwd: root });
  t.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as Report;
  t.ok(validate(doc), JSON.stringify(validate.errors));
  const unreferenced = doc.findings.filter((f) => f.kind === 'unreferenced').map((f) => f.flag).sort();
  t.same(unreferenced, ['beta', 'big-only', 'binary-only', 'generated-only', 'git-only', 'ignored-only', 'nested-ignored']);
  t.same(doc.code!.skipped, { tooLarge: 1, binary: 1, unreadable: 0 });
  t.equal(doc.code!.complete, true);
  // Read: both .gitignore files, app.ts, cli.sh, keep.gen.ts, `...`, other.txt, logo.bin (the state folder is skipped).
  t.equal(doc.code!.files, 8);
  const f = doc.findings.find((x) => x.flag === 'beta')!;
  t.same([f.file, f.line, f.column], ['flags/features.yml', 4, 6]);

  const few = JSON.parse((await runCli(['stale', 'flags', '--code', '.', '--max-files', '2', '--format', 'json'], { cwd: root })).stdout) as Report;
  t.same([few.code!.files, few.code!.complete, few.code!.limit], [2, false, 'files']);
  // Folders count against the same bound: a deep tree of empty folders is not walked to its end.
  mkdirSync(join(root, 'deep/a/b/c/d/e'), { recursive: true });
  const deep = JSON.parse((await runCli(['stale', 'flags', '--code', 'deep', '--max-files', '3', '--format', 'json'], { cwd: root })).stdout) as Report;
  t.same([deep.code!.files, deep.code!.complete, deep.code!.limit], [0, false, 'files']);
  const text = await runCli(['stale', 'flags', '--code', '.', '--max-code-bytes', '100'], { cwd: root });
  t.match(text.stdout, /\(scan stopped at a bound\)/);
  t.match(text.stdout, /\(the scan stopped at its byte bound\)\n/);
});

t.test('bad input: a clear message, exit 1 (cannot read) or 2 (usage)', { skip: skipUnlessCI(noGit) }, async (t) => {
  if (noGit !== undefined) return reportMissing(t, 'git', noGit);
  const dir = tmp(t);
  writeFileSync(join(dir, 'file.txt'), 'x');
  const cases: [string[], number, RegExp][] = [
    [['stale', '--repo', dir], 1, /^vexil: not a Git repository: /],
    [['stale', join(dir, 'missing')], 1, /^vexil: no such folder: /],
    [['stale', join(dir, 'file.txt')], 1, /^vexil: no such folder: /],
    [['stale', STATE, '--code', join(dir, 'file.txt')], 1, /is not a folder/],
    [['stale', STATE, '--code', join(dir, 'missing')], 1, /cannot read --code folder .*ENOENT/],
    [['stale', 'fixtures/state/duplicates'], 1, /the state in fixtures\/state\/duplicates is invalid/],
    [['stale', STATE, '--today', '2026-02-30'], 2, /--today must be a date YYYY-MM-DD/],
    [['stale', STATE, '--max-files', '5'], 2, /go with --code/],
    [['stale', STATE, '--rev', 'main'], 2, /go with --repo/],
    [['stale', STATE, '--code', '.', '--max-files', '0'], 2, /--max-files must be a positive integer/],
    [['stale', STATE, '--format', 'xml'], 2, /unknown format "xml"/],
    [['stale', 'a', 'b'], 2, /expected at most one DIR/],
  ];
  for (const [args, code, message] of cases) {
    const r = await runCli(args);
    t.equal(r.code, code, args.join(' '));
    t.match(r.stderr, message, args.join(' '));
  }
  const repo = await createTestRepo(t);
  await repo.commit('main', { 'features.yml': part('before.features.yml') });
  const r = await runCli(['stale', '--repo', repo.gitdir, '--rev', 'nope']);
  t.equal(r.code, 1);
  t.match(r.stderr, /unknown revision "nope"/);
  // A linked work tree: .git is a file naming the repository's private folder.
  const worktree = join(dir, 'worktree');
  mkdirSync(worktree);
  writeFileSync(join(worktree, '.git'), `gitdir: ${repo.gitdir}/worktrees/x\n`);
  const w = await runCli(['stale', '--repo', worktree]);
  t.equal(w.code, 1);
  t.match(w.stderr, /is a linked work tree or a submodule \(\.git is a file\)/);
  // The state's folder given as ./sub/ reads the same as sub.
  await repo.commit('main', { 'sub/features.yml': part('after.features.yml') });
  const sub = JSON.parse((await runCli(['stale', './sub/', '--repo', repo.gitdir, '--format', 'json'])).stdout) as Report & { state: { path: string } };
  t.equal(sub.state.path, 'sub');
  t.same(sub.findings.filter((f) => f.kind === 'uniform').map((f) => f.file), ['sub/features.yml', 'sub/features.yml']);
});
