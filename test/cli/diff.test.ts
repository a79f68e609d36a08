/**
 * `vexil diff` through the real CLI: two folders (text, json against schemas/diff.schema.json,
 * markdown against the stored fixtures/diff/expected.md), two revisions of a real Git repository
 * with --repo, the contexts file, --fail-on-change, usage errors (exit 2), and colour on a terminal.
 */
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import t from 'tap';
import { gitUnavailableReason } from '../support/git-fixture.js';
import { createTestRepo, git } from '../support/git-repo.js';
import { reportMissing, skipUnlessCI } from '../support/requirements.js';
import { REPO, runCli } from './run-cli.js';

const schema = JSON.parse(readFileSync(join(REPO, 'schemas/diff.schema.json'), 'utf8')) as object;
const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);
const fixture = (p: string) => readFileSync(join(REPO, 'fixtures/diff', p), 'utf8');

t.test('two folders, text: each change in words, the impact, exit 0', async (t) => {
  const r = await runCli(['diff', 'fixtures/diff/base', 'fixtures/diff/head']);
  t.equal(r.code, 0, r.stderr);
  t.notMatch(r.stdout, /\x1b\[/, 'no colour when stdout is not a terminal');
  t.match(r.stdout, /^fixtures\/diff\/base@\w+ → fixtures\/diff\/head@\w+\n/);
  for (const line of [
    '  ~ flag payment-provider',
    '      rule 2: adyen 50% → 60%',
    '      rule 2: stripe 50% → 40%',
    '      variant stripe: attachment {"fee":1.4} → {"fee":1.5}',
    '      rollout 1 moved to position 2',
    '      rollout 2 (now 1): threshold 25% → 50%',
    '  + flag new-checkout (added)',
    '  - flag old-banner (removed)',
    '      constraint added: region is "ch"',
    'impact (10,000 entities, synthetic ids over 3 test-file contexts)',
  ]) {
    t.ok(r.stdout.includes(`${line}\n`), line);
  }
  t.match(r.stdout, /default\/payment-provider: \d+\.\d% of 10,000 entities move stripe → adyen\n/);
});

t.test('two folders, markdown: equal to the stored expected file', async (t) => {
  const r = await runCli(['diff', 'fixtures/diff/base', 'fixtures/diff/head', '--format', 'markdown']);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, fixture('expected.md'));
});

t.test('json: valid against the schema; --namespace; --impact 0', async (t) => {
  const r = await runCli(['diff', 'fixtures/diff/base', 'fixtures/diff/head', '--format', 'json', '--impact', '500']);
  t.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { changed: boolean; summary: Record<string, number>; impact: { sample: { entities: number }; flags: { flag: string }[] } };
  t.ok(validate(doc), JSON.stringify(validate.errors));
  t.equal(doc.changed, true);
  t.same(doc.summary, { namespacesAdded: 0, namespacesRemoved: 0, namespacesChanged: 1, flagsAdded: 1, flagsRemoved: 1, flagsChanged: 2, segmentsAdded: 0, segmentsRemoved: 0, segmentsChanged: 1 });
  t.equal(doc.impact.sample.entities, 500);
  t.same(doc.impact.flags.map((f) => f.flag), ['dark-mode', 'payment-provider']);

  const none = await runCli(['diff', 'fixtures/diff/base', 'fixtures/diff/head', '--format', 'json', '--impact', '0', '--namespace', 'other']);
  const d2 = JSON.parse(none.stdout) as Record<string, unknown>;
  t.ok(validate(d2));
  t.equal(d2.changed, false);
  t.notOk('impact' in d2);
});

t.test('--fail-on-change: 1 when something changed, 0 when not', async (t) => {
  t.equal((await runCli(['diff', 'fixtures/diff/base', 'fixtures/diff/head', '--fail-on-change', '--impact', '0'])).code, 1);
  const same = await runCli(['diff', 'fixtures/diff/base', 'fixtures/diff/base', '--fail-on-change']);
  t.equal(same.code, 0);
  t.match(same.stdout, /no change\n$/);
});

t.test('--contexts FILE: the sample is the file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-diff-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'contexts.jsonl');
  writeFileSync(file, Array.from({ length: 40 }, (_, i) => JSON.stringify({ entityId: `u${i}`, context: { region: i % 2 === 0 ? 'ch' : 'us' } })).join('\n'));
  const r = await runCli(['diff', 'fixtures/diff/base', 'fixtures/diff/head', '--format', 'json', '--contexts', file]);
  t.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { impact: { sample: unknown; flags: { flag: string; evaluated: number; transitions: { from: string; to: string; count: number }[] }[] } };
  t.same(doc.impact.sample, { source: 'contexts-file', entities: 40, contexts: 40 });
  const pay = doc.impact.flags.find((f) => f.flag === 'payment-provider')!;
  // The 20 Swiss entities now match the eu rule: all of them end on adyen.
  t.ok(pay.transitions.every((x) => x.to === 'adyen'));
  t.ok(pay.transitions.reduce((n, x) => n + x.count, 0) >= 1);

  writeFileSync(file, '{"entityId":"a"}\n{"entityId":2}\n');
  const bad = await runCli(['diff', 'fixtures/diff/base', 'fixtures/diff/head', '--contexts', file]);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /contexts\.jsonl:2: entityId must be a string/);
});

t.test('usage errors exit 2 and name the problem', async (t) => {
  const cases: [string[], RegExp][] = [
    [['diff', 'fixtures/diff/base'], /expected BASE and HEAD/],
    [['diff', 'fixtures/diff/base', 'fixtures/diff/head', '--format', 'html'], /unknown format "html"/],
    [['diff', 'fixtures/diff/base', 'fixtures/diff/head', '--impact', '100001'], /--impact must be an integer from 0 to 100000/],
    [['diff', 'fixtures/diff/base', 'nowhere'], /no such folder: nowhere/],
    [['diff', '--repo', '.', 'main', 'no-such-branch-xyz'], /unknown revision "no-such-branch-xyz"/],
  ];
  for (const [args, message] of cases) {
    const r = await runCli(args);
    t.equal(r.code, 2, args.join(' '));
    t.match(r.stderr, message);
  }
  const help = await runCli(['diff', '--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /^Usage: vexil diff BASE HEAD/);
});

const noGit = gitUnavailableReason();
t.test('--repo: two revisions of a real Git repository (branch names, HEAD, short commit id, origin/main in a clone)', { skip: skipUnlessCI(noGit) }, async (t) => {
  if (noGit !== undefined) return reportMissing(t, 'git', noGit); // reached under CI only: fails
  const repo = await createTestRepo(t);
  const baseCommit = await repo.commit('main', { 'features.yml': fixture('base/features.yml') });
  await repo.commit('feature', { 'features.yml': fixture('head/features.yml'), 'payments.test.yml': fixture('head/payments.test.yml') }, { parent: baseCommit });
  const r = await runCli(['diff', '--repo', repo.gitdir, 'main', 'feature']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, new RegExp(`^main@${baseCommit.slice(0, 7)} → feature@[0-9a-f]{7}\\n`));
  t.ok(r.stdout.includes('      rule 2: adyen 50% → 60%\n'));
  t.ok(r.stdout.includes('impact (10,000 entities, synthetic ids over 3 test-file contexts)\n'), 'contexts of the head revision\'s test files');

  // HEAD of the bare repository is main; an abbreviated commit id names the same commit.
  const same = await runCli(['diff', '--repo', repo.gitdir, 'HEAD', baseCommit.slice(0, 10), '--format', 'json']);
  t.equal(same.code, 0, same.stderr);
  t.equal((JSON.parse(same.stdout) as { changed: boolean }).changed, false);

  // The markdown is the same whether the states come from folders or from Git (names aside).
  const md = await runCli(['diff', '--repo', repo.gitdir, 'main', 'feature', '--format', 'markdown']);
  const norm = (s: string) => s.replace(/^### .*\n/, '');
  t.equal(norm(md.stdout), norm(fixture('expected.md')));

  // As in CI (actions/checkout): a clone with a work tree, origin/main against HEAD (packed refs after gc).
  const clone = join(repo.root, 'clone');
  await git(['clone', '-q', repo.gitdir, clone]);
  await git(['checkout', '-q', 'feature'], { cwd: clone });
  await git(['gc', '-q'], { cwd: clone });
  const ci = await runCli(['diff', '--repo', '.', '--format', 'markdown', 'origin/main', 'HEAD'], { cwd: clone });
  t.equal(ci.code, 0, ci.stderr);
  t.match(ci.stdout, /^### Flag changes: origin\/main \([0-9a-f]{7}\) → HEAD \([0-9a-f]{7}\)\n/);
  t.equal(norm(ci.stdout), norm(fixture('expected.md')));

  // In a linked worktree (`git worktree add`: `.git` is a file pointing into the main repository),
  // branches come from the shared refs and HEAD is the worktree's own.
  const linked = join(repo.root, 'linked');
  await git(['worktree', 'add', '-q', linked, 'main'], { cwd: clone });
  const wt = await runCli(['diff', '--repo', '.', '--format', 'markdown', 'HEAD', 'feature'], { cwd: linked });
  t.equal(wt.code, 0, wt.stderr);
  t.match(wt.stdout, new RegExp(`^### Flag changes: HEAD \\(${baseCommit.slice(0, 7)}\\) → feature \\([0-9a-f]{7}\\)\n`), 'HEAD is the worktree\'s (main), not the clone\'s (feature)');
  t.equal(norm(wt.stdout), norm(fixture('expected.md')));

  // An invalid revision: located problems, exit 1.
  await repo.commit('broken', { 'features.yml': 'version: "1.4"\nflags:\n  - key: x\n' }, { parent: baseCommit });
  const broken = await runCli(['diff', '--repo', repo.gitdir, 'main', 'broken']);
  t.equal(broken.code, 1);
  t.match(broken.stderr, /the state in broken is invalid/);
});

t.test('a real terminal gets colour, NO_COLOR turns it off', async (t) => {
  // `script` (util-linux) runs the CLI on a pseudo-terminal, so stdout.isTTY is true as in a shell.
  const { spawnSync } = await import('node:child_process');
  const probe = spawnSync('script', ['--version'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    reportMissing(t, 'the colour', 'util-linux `script` (runs a command on a pseudo-terminal) is not installed: apt-get install util-linux');
    return;
  }
  const cli = `node --import tsx src/cli/main.ts diff fixtures/diff/base fixtures/diff/head`;
  const onTty = (env: Record<string, string>) =>
    spawnSync('script', ['-q', '-e', '-c', cli, '/dev/null'], { cwd: REPO, encoding: 'utf8', env: { ...process.env, ...env, TERM: 'xterm' } });
  const coloured = onTty({ NO_COLOR: '' });
  t.equal(coloured.status, 0, coloured.stderr);
  t.match(coloured.stdout, /\x1b\[\d+(;\d+)*m/, 'ANSI colour sequences on a terminal');
  t.match(coloured.stdout.replace(/\x1b\[[0-9;]*m/g, ''), /rule 2: adyen 50% → 60%/, 'the same text under the colours');
  const plain = onTty({ NO_COLOR: '1' });
  t.equal(plain.status, 0, plain.stderr);
  t.notMatch(plain.stdout, /\x1b\[/, 'NO_COLOR: none');
  t.match(plain.stdout, /rule 2: adyen 50% → 60%/);
});
