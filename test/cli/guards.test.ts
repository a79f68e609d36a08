/**
 * The guards on a change through the real CLI, over real two-branch Git repositories (the real
 * `git`, a clone with a work tree as actions/checkout makes): `vexil validate DIR --base REV`
 * (located guard problems in text, JSON and SARIF valid against the official schema, exit 1; the
 * base branch's policy governs even when the pull request loosens its own; `--policy FILE`
 * overrides; a change within the limits passes), `vexil diff --policy` (the guards in text,
 * Markdown and JSON against schemas/diff.schema.json, exit 1 with the guard's message), and the
 * review comment listing the guards `validate --base` reported.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import Ajv04Module from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import t from 'tap';
import { gitUnavailableReason } from '../support/git-fixture.js';
import { createTestRepo, git, type Teardown, type TestRepo } from '../support/git-repo.js';
import { reportMissing, skipUnlessCI } from '../support/requirements.js';
import { REPO, runCli } from './run-cli.js';

const fixture = (p: string) => readFileSync(join(REPO, 'fixtures/guards', p), 'utf8');
const diffSchema = new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(readFileSync(join(REPO, 'schemas/diff.schema.json'), 'utf8')) as object);
const SARIF = JSON.parse(readFileSync(join(REPO, 'node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'), 'utf8')) as Record<string, unknown>;

function sarifValidator() {
  // As in validate-checks.test.ts: the schema's `language` pattern needs plain RegExp.
  const ajv = new Ajv04Module.default({ allErrors: true, strict: false, unicodeRegExp: false });
  addFormats.default(ajv);
  return ajv.compile(SARIF);
}

interface Reported { severity: string; rule: string; file: string; line: number; column: number; message: string }

/**
 * A repository with the state in `flags/`: `main` holds the base state and its policy, `feature`
 * the head (which loosens its own policy), `feature-ok` a change within the limits. Returns a
 * clone with `feature` checked out, as a pull request's CI job sees it.
 */
async function twoBranches(t: Teardown): Promise<{ repo: TestRepo; clone: string }> {
  const repo = await createTestRepo(t);
  const base = await repo.commit('main', { 'flags/features.yml': fixture('base/features.yml'), 'flags/.vexil/policy.yml': fixture('base/.vexil/policy.yml'), 'README.md': 'flags\n' });
  await repo.commit('feature', { 'flags/features.yml': fixture('head/features.yml'), 'flags/.vexil/policy.yml': fixture('head/.vexil/policy.yml') }, { parent: base });
  await repo.commit('feature-ok', { 'flags/features.yml': fixture('head-ok/features.yml'), 'flags/checkout.test.yml': fixture('head-ok/checkout.test.yml') }, { parent: base });
  const clone = join(repo.root, 'clone');
  await git(['clone', '-q', repo.gitdir, clone]);
  await git(['checkout', '-q', 'feature'], { cwd: clone });
  return { repo, clone };
}

const noGit = gitUnavailableReason();

t.test('validate --base: the base branch\'s guards judge the change, located, in every format', { skip: skipUnlessCI(noGit) }, async (t) => {
  if (noGit !== undefined) return reportMissing(t, 'git', noGit);
  const { clone } = await twoBranches(t);

  const text = await runCli(['validate', 'flags', '--base', 'origin/main'], { cwd: clone });
  t.equal(text.code, 1, text.stderr);
  t.match(text.stdout, /^origin\/main:flags\/features\.yml:17:5: error guard\.protected: flag `checkout\/legacy-banner` is deleted; the policy protects it from deletion \(guards\.protected\)\n {4}- key: legacy-banner\n {6}\^\n/m);
  t.match(text.stdout, /^flags\/features\.yml:10:5: error guard\.max-rollout-change: flag `checkout\/payment-provider`: rule 1 moves variant `adyen` 10% → 50%, a move of 40 percentage points; the policy allows at most 20 per change/m);
  t.match(text.stdout, /^flags\/features\.yml:4:5: error guard\.max-impact-share: flag `checkout\/payment-provider`: the outcome changes for 4,001 of 10,000 sample entities \(40\.01%\); the policy allows at most 25%/m);
  t.match(text.stdout, /^info guard\.impact\.unmeasured: .*no flag test contexts/m);
  t.notMatch(text.stdout, /old-promo/, 'an unprotected flag may go');
  t.match(text.stdout, /\nFAILED: 1 state file, 3 errors, 0 warnings, 1 info\n$/);

  const json = await runCli(['validate', 'flags', '--base', 'origin/main', '--format', 'json'], { cwd: clone });
  t.equal(json.code, 1);
  const problems = JSON.parse(json.stdout) as Reported[];
  t.same(problems.map((p) => p.rule).sort(), ['guard.impact.unmeasured', 'guard.max-impact-share', 'guard.max-rollout-change', 'guard.protected']);
  writeFileSync(join(clone, '..', 'validate.json'), json.stdout);

  const sarif = await runCli(['validate', 'flags', '--base', 'origin/main', '--format', 'sarif'], { cwd: clone });
  const log = JSON.parse(sarif.stdout) as { runs: { results: { ruleId: string; locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[] }[] }[] };
  const validate = sarifValidator();
  t.ok(validate(log), JSON.stringify(validate.errors?.slice(0, 3)));
  const results = log.runs[0]!.results;
  t.equal(results.length, 4);
  t.same(results.find((r) => r.ruleId === 'guard.protected')!.locations[0]!.physicalLocation.artifactLocation.uri, 'origin/main%3Aflags/features.yml');

  // The comment lists the guards validate --base reported, under their own heading.
  const comment = await runCli(['comment', '--dry-run', '--validate', join(clone, '..', 'validate.json')], { cwd: clone });
  t.equal(comment.code, 0, comment.stderr);
  t.match(comment.stdout, /\| Validation \| ⚠️ 0 errors, 0 warnings, 1 information \|\n\| Guards on the change \| ❌ 3 guards failed \|/);
  t.match(comment.stdout, /### Guards that failed\n\n(- .*\n)*- ❌ `origin\/main:flags\/features\.yml:17:5` \*\*guard\.protected\*\*/);
});

t.test('validate --base: --policy FILE overrides the base\'s policy; a change within the limits passes', { skip: skipUnlessCI(noGit) }, async (t) => {
  if (noGit !== undefined) return reportMissing(t, 'git', noGit);
  const { clone } = await twoBranches(t);
  const lenient = join(REPO, 'fixtures/guards/lenient-policy.yml');
  const given = await runCli(['validate', 'flags', '--base', 'origin/main', '--policy', lenient, '--format', 'json'], { cwd: clone });
  t.equal(given.code, 0, given.stdout + given.stderr);
  t.same((JSON.parse(given.stdout) as Reported[]).map((p) => p.rule), ['guard.impact.unmeasured'], 'a 40-point move within 50, no flag protected');

  // --repo names the repository from elsewhere; the folder's path in it locates the base state.
  const fromOutside = await runCli(['validate', join(clone, 'flags'), '--base', 'main', '--repo', clone, '--format', 'json'], { cwd: REPO });
  t.equal(fromOutside.code, 1, 'main of the clone is the base state; the work tree is feature');
  t.match(fromOutside.stdout, /guard\.max-rollout-change/);

  await git(['checkout', '-q', 'origin/feature-ok'], { cwd: clone });
  const ok = await runCli(['validate', 'flags', '--base', 'origin/main'], { cwd: clone });
  t.equal(ok.code, 0, ok.stdout + ok.stderr);
  t.equal(ok.stdout, 'OK: 1 state file, 0 errors, 0 warnings\n', '20 points and a 20% share against limits of 20 and 25%, with test contexts: nothing to say');


  for (const [args, message] of [
    [['validate', 'flags', '--base', 'no-such-rev'], /unknown revision "no-such-rev"/],
    [['validate', 'flags', 'flags/features.yml', '--base', 'origin/main'], /give exactly one folder/],
    [['validate', 'flags', '--repo', '.'], /--repo goes with --base/],
  ] as const) {
    const r = await runCli(args, { cwd: clone });
    t.equal(r.code, 2, args.join(' '));
    t.match(r.stderr, message);
  }
});

t.test('diff --policy: the guards in text, markdown and json, exit 1 with the guard\'s message', { skip: skipUnlessCI(noGit) }, async (t) => {
  if (noGit !== undefined) return reportMissing(t, 'git', noGit);
  const { clone } = await twoBranches(t);
  const text = await runCli(['diff', '--repo', '.', '--directory', 'flags', 'origin/main', 'HEAD', '--policy'], { cwd: clone });
  t.equal(text.code, 1);
  t.match(text.stdout, /\nguards \(origin\/main:flags\/\.vexil\/policy\.yml\): FAILED, 3 guards\n/);
  t.match(text.stderr, /^vexil: guard failed: origin\/main:flags\/features\.yml:17:5: flag `checkout\/legacy-banner` is deleted/m);
  t.match(text.stderr, /^vexil: guard failed: HEAD:flags\/features\.yml:10:5: flag `checkout\/payment-provider`: rule 1 moves variant `adyen` 10% → 50%/m);

  const json = await runCli(['diff', '--repo', '.', '--directory', 'flags', 'origin/main', 'HEAD', '--policy', '--format', 'json'], { cwd: clone });
  t.equal(json.code, 1);
  const doc = JSON.parse(json.stdout) as { guards: { policy: string; from: string; failed: boolean; findings: (Reported & { namespace?: string; flag?: string })[] } };
  t.ok(diffSchema(doc), JSON.stringify(diffSchema.errors));
  t.match(doc.guards, { policy: 'origin/main:flags/.vexil/policy.yml', from: 'base', failed: true });
  t.match(doc.guards.findings.find((f) => f.rule === 'guard.protected'), { namespace: 'checkout', flag: 'legacy-banner', file: 'origin/main:flags/features.yml', line: 17, column: 5 });

  const md = await runCli(['diff', '--repo', '.', '--directory', 'flags', 'origin/main', 'HEAD', '--policy', '--format', 'markdown'], { cwd: clone });
  t.match(md.stdout, /\n\*\*Guards\*\* \(origin/);
  t.match(md.stdout, /\n- ❌ `HEAD:flags\/features\.yml:10:5` \*\*guard\.max-rollout-change\*\*: flag \\`checkout\/payment-provider\\`/);

  // --policy=FILE replaces the sides' policy; within its limits the diff exits 0.
  const given = await runCli(['diff', '--repo', '.', '--directory', 'flags', 'origin/main', 'HEAD', `--policy=${join(REPO, 'fixtures/guards/lenient-policy.yml')}`], { cwd: clone });
  t.equal(given.code, 0, given.stderr);
  t.match(given.stdout, /\nguards \(.*lenient-policy\.yml\): passed\n/);

  // Two folders: the base folder's policy; `--policy FILE` with a space reads FILE as a third side.
  const folders = await runCli(['diff', 'fixtures/guards/base', 'fixtures/guards/head-ok', '--policy', '--format', 'json']);
  t.equal(folders.code, 0, folders.stderr);
  t.match(JSON.parse(folders.stdout), { guards: { policy: 'fixtures/guards/base/.vexil/policy.yml', from: 'base', failed: false, findings: [] } });
  const spaced = await runCli(['diff', 'fixtures/guards/base', 'fixtures/guards/head', '--policy', 'x.yml']);
  t.equal(spaced.code, 2);
  t.match(spaced.stderr, /got 3 argument\(s\) \(name a policy file as --policy=FILE\)/);
  const none = await runCli(['diff', 'fixtures/diff/base', 'fixtures/diff/head', '--policy']);
  t.equal(none.code, 2);
  t.match(none.stderr, /neither fixtures\/diff\/base nor fixtures\/diff\/head has \.vexil\/policy\.yml/);
});

t.test('a malformed base policy is reported located, and fails', { skip: skipUnlessCI(noGit) }, async (t) => {
  if (noGit !== undefined) return reportMissing(t, 'git', noGit);
  const repo = await createTestRepo(t);
  const base = await repo.commit('main', { 'features.yml': fixture('base/features.yml'), '.vexil/policy.yml': 'guards:\n  max_rollout_change: 200\n' });
  await repo.commit('feature', { 'features.yml': fixture('head-ok/features.yml') }, { parent: base });
  const clone = join(repo.root, 'clone');
  await git(['clone', '-q', '-b', 'feature', repo.gitdir, clone]);
  const r = await runCli(['validate', '.', '--base', 'origin/main'], { cwd: clone });
  t.equal(r.code, 1);
  t.match(r.stdout, /^origin\/main:\.vexil\/policy\.yml:2:23: error policy\.invalid: `guards\.max_rollout_change` must be <= 100/m);
  const d = await runCli(['diff', '--repo', '.', 'origin/main', 'HEAD', '--policy'], { cwd: clone });
  t.equal(d.code, 1);
  t.match(d.stderr, /the policy file origin\/main:\.vexil\/policy\.yml is invalid \(1 error/);
});
