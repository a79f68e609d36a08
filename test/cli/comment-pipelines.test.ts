/**
 * The CI files that ship with vexil, run as CI runs them: the GitHub Action's script
 * (ci/github/review.sh, with the environment action.yml gives it) and the GitLab template's job
 * script (ci/gitlab/vexil.gitlab-ci.yml), in a clone of a real Git repository whose pull request
 * changes flag state in a sub-folder, against the loopback GitHub/GitLab API. vexil is this
 * checkout's CLI (VEXIL) instead of npx. Two pushes: one comment, updated; the job's exit status
 * follows validation and the flag tests. Also: action.yml pins the package's own version, and
 * passes every input to the script.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { gitUnavailableReason } from '../support/git-fixture.js';
import { createTestRepo, git } from '../support/git-repo.js';
import { reportMissing, skipUnlessCI } from '../support/requirements.js';
import { startReviewApi } from '../support/review-api.js';
import { REPO } from './run-cli.js';

const TOKEN = 'ghp_pipelineT0ken0123456789abcdef';
const VEXIL = `${process.execPath} --import=${pathToFileURL(join(REPO, 'node_modules/tsx/dist/loader.mjs')).href} ${join(REPO, 'src/cli/main.ts')}`;
const fixture = (p: string) => readFileSync(join(REPO, 'fixtures', p), 'utf8');
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };

interface Action {
  inputs: Record<string, { default?: string }>;
  runs: { using: string; steps: Array<{ run?: string; env?: Record<string, string>; 'working-directory'?: string }> };
}

t.test('action.yml: composite, builds vexil from its own checkout, hands every input to the script', async (t) => {
  const action = parse(readFileSync(join(REPO, 'action.yml'), 'utf8')) as Action;
  t.equal(action.runs.using, 'composite');
  const build = action.runs.steps.find((s) => s.run?.includes('npm ci'));
  t.equal(build?.['working-directory'], '${{ github.action_path }}', 'vexil is built in the action\'s checkout');
  const step = action.runs.steps.find((s) => s.run?.includes('ci/github/review.sh'));
  t.ok(step, 'a step runs ci/github/review.sh');
  const script = readFileSync(join(REPO, 'ci/github/review.sh'), 'utf8');
  t.equal(step!.env?.VEXIL, 'node ${{ github.action_path }}/bin/vexil.js', 'the script runs the vexil built there');
  for (const [name, value] of Object.entries(step!.env ?? {})) {
    t.ok(script.includes(name), `review.sh reads ${name}`);
    if (name === 'VEXIL') continue;
    const input = /^\$\{\{ inputs\.([a-z-]+) \}\}$/.exec(value)?.[1];
    t.ok(input !== undefined && input in action.inputs, `${name} comes from an input`);
  }
  for (const input of Object.keys(action.inputs).filter((i) => i !== 'node-version')) {
    t.ok(Object.values(step!.env ?? {}).includes(`\${{ inputs.${input} }}`), `input ${input} reaches the script`);
  }
  const gitlab = parse(readFileSync(join(REPO, 'ci/gitlab/vexil.gitlab-ci.yml'), 'utf8')) as { variables: Record<string, string> };
  t.equal(gitlab.variables.VEXIL_VERSION, pkg.version, 'the GitLab template pins the same version');
});

function bash(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C', GIT_CONFIG_NOSYSTEM: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

const noGit = gitUnavailableReason();
t.test('the GitHub Action script and the GitLab job: two pushes, one comment each, exit status from validate and test', { skip: skipUnlessCI(noGit) }, async (t) => {
  if (noGit !== undefined) return reportMissing(t, 'git', noGit); // reached under CI only: fails
  const repo = await createTestRepo(t);
  const base = await repo.commit('main', { 'README.md': 'flags\n', 'flags/features.yml': fixture('diff/base/features.yml') });
  await repo.commit('feature', { 'flags/features.yml': fixture('diff/head/features.yml'), 'flags/payments.test.yml': fixture('diff/head/payments.test.yml') }, { parent: base });
  const clone = join(repo.root, 'clone');
  await git(['clone', '-q', repo.gitdir, clone]);
  const push = async (files?: Record<string, string>) => {
    if (files) await repo.commit('feature', files);
    await git(['fetch', '-q', 'origin'], { cwd: clone });
    await git(['checkout', '-q', '--detach', 'origin/feature'], { cwd: clone });
  };
  await push();

  const api = await startReviewApi(t, { token: TOKEN });
  const temp = join(repo.root, 'runner-temp');
  mkdirSync(temp);
  const event = join(temp, 'event.json');
  writeFileSync(event, JSON.stringify({ pull_request: { number: 12 } }));
  const summary = join(temp, 'summary.md');
  const github = {
    VEXIL,
    STATE_DIR: 'flags',
    BASE_REF: 'main',
    IMPACT: '500',
    STRICT: 'false',
    REQUIRE_TESTS: 'false',
    COMMENT: 'true',
    MARKER: 'vexil-review',
    GITHUB_TOKEN: TOKEN,
    GITHUB_EVENT_NAME: 'pull_request',
    GITHUB_EVENT_PATH: event,
    GITHUB_REPOSITORY: 'acme/flags',
    GITHUB_API_URL: api.url,
    GITHUB_STEP_SUMMARY: summary,
    RUNNER_TEMP: temp,
  };
  const script = readFileSync(join(REPO, 'ci/github/review.sh'), 'utf8');
  const gitlabJob = (parse(readFileSync(join(REPO, 'ci/gitlab/vexil.gitlab-ci.yml'), 'utf8')) as { 'vexil-review': { script: string[] } })['vexil-review'].script.join('\n');
  const gitlab = {
    VEXIL,
    VEXIL_STATE_DIR: 'flags',
    VEXIL_IMPACT: '500',
    VEXIL_STRICT: 'false',
    VEXIL_REQUIRE_TESTS: 'false',
    VEXIL_MARKER: 'vexil-review',
    GITLAB_TOKEN: TOKEN,
    CI_PROJECT_DIR: clone,
    CI_PROJECT_ID: '77',
    CI_MERGE_REQUEST_IID: '5',
    CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main',
    CI_MERGE_REQUEST_DIFF_BASE_SHA: base,
    CI_API_V4_URL: `${api.url}/api/v4`,
  };

  // Push 1: valid state, passing flag tests.
  const gh1 = await bash(script, clone, github);
  t.equal(gh1.code, 0, gh1.out);
  const gl1 = await bash(gitlabJob, clone, gitlab);
  t.equal(gl1.code, 0, gl1.out);
  t.match(gh1.out, /::group::vexil diff origin\/main HEAD/);
  t.match(gh1.out, /vexil: created comment \d+ on acme\/flags#12/);
  t.match(gl1.out, /vexil: created comment \d+ on project 77 !5/);
  const ghBody1 = api.threads.get('github:acme/flags#12')![0]!.body;
  t.match(ghBody1, /^<!-- vexil-review -->\n## ✅ vexil: flag review\n/);
  t.match(ghBody1, /\| Flag tests \| ✅ 3 cases passed \|/);
  t.match(ghBody1, /rule 2: adyen 50% → 60%/);
  t.match(ghBody1, /of 500 entities move stripe → adyen/);

  // Push 2: a flag test that fails. Both jobs fail; each comment is updated in place.
  await push({ 'flags/payments.test.yml': fixture('diff/head/payments.test.yml').replace('expect: {variant: adyen}', 'expect: {variant: stripe}') });
  const gh2 = await bash(script, clone, github);
  t.equal(gh2.code, 1, gh2.out);
  t.match(gh2.out, /vexil: updated comment \d+ on acme\/flags#12/);
  t.match(gh2.out, /vexil: validation exited 0, flag tests exited 1/);
  const gl2 = await bash(gitlabJob, clone, gitlab);
  t.equal(gl2.code, 1, gl2.out);
  t.match(gl2.out, /vexil: updated comment \d+ on project 77 !5/);

  for (const key of ['github:acme/flags#12', 'gitlab:77!5']) {
    const list = api.threads.get(key)!;
    t.equal(list.length, 1, `${key}: one comment`);
    t.match(list[0]!.body, /## ❌ vexil: flag review/);
    t.match(list[0]!.body, /\| Flag tests \| ❌ 1 failed, 2 passed \|/);
    t.match(list[0]!.body, /EU customers pay with adyen — default\/payment-provider for u-1: variant: expected stripe, got adyen/);
  }
  t.notOk(`${gh1.out}${gh2.out}${gl1.out}${gl2.out}`.includes(TOKEN), 'the token is in no job log');
  t.equal(readFileSync(summary, 'utf8').match(/^## /gm)?.length, 2, 'a job summary per run');
  t.ok(readFileSync(join(clone, '.vexil-review/flag-tests.xml'), 'utf8').includes('<testsuites'), 'the GitLab job keeps a JUnit report');
});
