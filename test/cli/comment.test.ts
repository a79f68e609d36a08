/**
 * `vexil comment` end to end against a loopback server speaking GitHub's issue-comment API and
 * GitLab's merge-request notes API (test/support/review-api.ts): three pushes with different
 * state leave exactly one comment holding the latest report, found again across pages (Link /
 * x-next-page) among other people's comments; a rate-limit answer is waited out once; a 401 is a
 * clear error with exit 1; the token appears in no output; the report's content comes from the
 * JSON of `vexil validate`, `vexil test` and `vexil diff` run in the same way as CI runs them; a
 * diff too large for one comment is cut under GitHub's 65,536 characters.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { run } from '../../src/cli/run.js';
import { runComment } from '../../src/cli/comment/command.js';
import type { CliIO } from '../../src/cli/io.js';
import { startReviewApi, type StoredComment } from '../support/review-api.js';
import { REPO, runCli } from './run-cli.js';

const TOKEN = 'ghp_s3cretT0kenValue0123456789';
const MARKER = '<!-- vexil-review -->';

/** Runs a vexil command in this process (as `vexil ...` would), capturing its output. */
async function vexil(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s), cwd: REPO };
  const code = args[0] === 'comment' ? await runComment(args.slice(1), io, { env }) : await run(args, io);
  return { code, stdout, stderr };
}

/** One CI run: validate, test and diff written to files as the action does, then the comment. */
async function ciRun(dir: string, push: { validate: string; test: string; base: string; head: string }, comment: string[], env: NodeJS.ProcessEnv) {
  const out = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const validate = out('validate.json', (await vexil(['validate', push.validate, '--format', 'json'])).stdout);
  const test = out('test.json', (await vexil(['test', push.test, '--format', 'json'])).stdout);
  const diff = out('diff.json', (await vexil(['diff', push.base, push.head, '--format', 'json', '--impact', '2000'])).stdout);
  return vexil(['comment', ...comment, '--validate', validate, '--test', test, '--diff', diff], env);
}

const PUSHES = [
  // 1: nothing changes yet, everything passes.
  { validate: 'fixtures/diff/head', test: 'fixtures/diff/head', base: 'fixtures/diff/base', head: 'fixtures/diff/base' },
  // 2: the flag change, tests pass.
  { validate: 'fixtures/diff/head', test: 'fixtures/diff/head', base: 'fixtures/diff/base', head: 'fixtures/diff/head' },
  // 3: a state with problems and failing test cases.
  { validate: 'fixtures/state/problems/distribution.variant.unknown.yml', test: 'fixtures/flag-tests/failing', base: 'fixtures/diff/base', head: 'fixtures/diff/head' },
];

function ours(list: readonly StoredComment[] | undefined): StoredComment[] {
  return (list ?? []).filter((c) => c.body.startsWith(MARKER));
}

t.test('GitHub: three pushes, one comment with the latest report, found across pages', async (t) => {
  const api = await startReviewApi(t, { token: TOKEN, maxPerPage: 50 });
  // Other people's comments first: ours lands on the third page of 50.
  const thread: StoredComment[] = Array.from({ length: 120 }, (_, i) => ({ id: i + 1, body: `comment ${i}`, author: 'someone' }));
  // A reviewer pasted our marker into a reply: not our comment, never edited.
  thread[10]!.body = `> as the bot said\n> ${MARKER}\nI disagree`;
  api.threads.set('github:acme/flags#7', thread);
  const dir = mkdtempSync(join(tmpdir(), 'vexil-comment-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const summary = join(dir, 'summary.md');
  writeFileSync(summary, '');
  const event = join(dir, 'event.json');
  writeFileSync(event, JSON.stringify({ action: 'synchronize', pull_request: { number: 7 } }));
  const env = { GITHUB_TOKEN: TOKEN, GITHUB_REPOSITORY: 'acme/flags', GITHUB_EVENT_PATH: event, GITHUB_STEP_SUMMARY: summary };

  const actions: string[] = [];
  for (const push of PUSHES) {
    const r = await ciRun(dir, push, ['--provider', 'github', '--api-url', `${api.url}/api/v3`], env);
    t.equal(r.code, 0, r.stderr);
    t.notOk(`${r.stdout}${r.stderr}`.includes(TOKEN), 'the token is in no output');
    actions.push(/vexil: (\w+) comment \d+ on acme\/flags#7/.exec(r.stdout)?.[1] ?? r.stdout);
  }
  t.same(actions, ['created', 'updated', 'updated']);
  const mine = ours(api.threads.get('github:acme/flags#7'));
  t.equal(thread[10]!.body, `> as the bot said\n> ${MARKER}\nI disagree`, 'the reply is left alone');
  t.equal(mine.length, 1, 'exactly one comment of ours');
  t.equal(api.threads.get('github:acme/flags#7')!.length, 121, 'nobody else\'s comment touched');
  const body = mine[0]!.body;
  t.ok(body.startsWith(`${MARKER}\n## ❌ vexil: flag review\n`), 'the latest run (failing) is the content');
  t.match(body, /\| Validation \| ❌ 1 error, 0 warnings \|/);
  t.match(body, /- ❌ `[^`]*distribution\.variant\.unknown\.yml:\d+:\d+` \*\*distribution\.variant\.unknown\*\*: /);
  t.match(body, /### Flag tests that did not pass/);
  t.match(body, /\| Changes \| flags: 1 added, 1 removed, 2 changed/);
  t.match(body, /rule 2: adyen 50% → 60%/, 'the changes in the words of vexil diff');
  t.match(body, /\*\*Impact:\*\* [\d.]+% of 2,000 entities move stripe → adyen/);

  // The same report again: nothing to write.
  const again = await vexil(['comment', '--provider', 'github', '--api-url', `${api.url}/api/v3`, '--validate', join(dir, 'validate.json'), '--test', join(dir, 'test.json'), '--diff', join(dir, 'diff.json')], env);
  t.match(again.stdout, /vexil: unchanged comment/);

  // Every request: the token as a Bearer credential, GitHub's media type and API version; pages of 100 asked.
  for (const r of api.requests) {
    t.equal(r.headers.authorization, `Bearer ${TOKEN}`);
    t.equal(r.headers.accept, 'application/vnd.github+json');
    t.equal(r.headers['x-github-api-version'], '2022-11-28');
  }
  const lists = api.requests.filter((r) => r.method === 'GET');
  t.ok(lists.some((r) => r.query.includes('page=3')), 'followed Link rel="next" to the third page');
  t.ok(lists.every((r) => r.path === '/api/v3/repos/acme/flags/issues/7/comments'));
  t.same(api.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`), [
    'POST /api/v3/repos/acme/flags/issues/7/comments',
    `PATCH /api/v3/repos/acme/flags/issues/comments/${mine[0]!.id}`,
    `PATCH /api/v3/repos/acme/flags/issues/comments/${mine[0]!.id}`,
  ]);

  const written = readFileSync(summary, 'utf8');
  t.equal(written.match(/^## /gm)?.length, 4, 'one job summary section per run');
  t.notOk(written.includes(MARKER), 'the summary has no marker');
});

t.test('GitLab: three pushes, one note; x-next-page; system notes skipped; JOB-TOKEN', async (t) => {
  const api = await startReviewApi(t, { token: TOKEN, maxPerPage: 40 });
  api.threads.set('gitlab:42!3', Array.from({ length: 90 }, (_, i) => ({ id: i + 1, body: i % 3 === 0 ? 'added 1 commit' : `note ${i}`, author: 'someone', system: i % 3 === 0 })));
  const dir = mkdtempSync(join(tmpdir(), 'vexil-comment-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { GITLAB_TOKEN: TOKEN, CI_PROJECT_ID: '42', CI_MERGE_REQUEST_IID: '3', CI_API_V4_URL: `${api.url}/api/v4` };
  const actions: string[] = [];
  for (const push of PUSHES) {
    const r = await ciRun(dir, push, ['--provider', 'gitlab'], env);
    t.equal(r.code, 0, r.stderr);
    t.notOk(`${r.stdout}${r.stderr}`.includes(TOKEN));
    actions.push(/vexil: (\w+) comment \d+ on project 42 !3/.exec(r.stdout)?.[1] ?? r.stdout);
  }
  t.same(actions, ['created', 'updated', 'updated']);
  t.equal(ours(api.threads.get('gitlab:42!3')).length, 1);
  t.match(ours(api.threads.get('gitlab:42!3'))[0]!.body, /## ❌ vexil: flag review/);
  t.ok(api.requests.every((r) => r.headers['private-token'] === TOKEN && r.headers.authorization === undefined));
  t.ok(api.requests.some((r) => r.method === 'GET' && r.query.includes('page=3')), 'followed x-next-page');
  t.ok(api.requests.some((r) => r.method === 'PUT'));

  // In a job with only CI_JOB_TOKEN, the job token goes in JOB-TOKEN; a project path is URL-encoded.
  api.threads.set('gitlab:acme/flags!9', []);
  const job = await vexil(['comment', '--provider', 'gitlab', '--project', 'acme/flags', '--number', '9', '--diff', join(dir, 'diff.json')], { CI_JOB_TOKEN: TOKEN, CI_API_V4_URL: `${api.url}/api/v4` });
  t.equal(job.code, 0, job.stderr);
  t.equal(api.requests.at(-1)!.headers['job-token'], TOKEN);
  t.equal(api.requests.at(-1)!.path, '/api/v4/projects/acme%2Fflags/merge_requests/9/notes');
  t.equal(ours(api.threads.get('gitlab:acme/flags!9')).length, 1);
});

t.test('a rate-limit answer is waited out once and the request retried (GitHub 403, GitLab 429)', async (t) => {
  const api = await startReviewApi(t, { token: TOKEN });
  const dir = mkdtempSync(join(tmpdir(), 'vexil-comment-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'diff.json'), (await vexil(['diff', 'fixtures/diff/base', 'fixtures/diff/head', '--format', 'json', '--impact', '0'])).stdout);
  const waits: number[] = [];
  const sleep = (ms: number) => {
    waits.push(ms);
    return Promise.resolve();
  };
  let stdout = '';
  const io: CliIO = { stdout: (s) => void (stdout += s), stderr: () => undefined, cwd: dir };
  api.rateLimit();
  t.equal(await runComment(['--provider', 'github', '--api-url', api.url, '--repository', 'acme/flags', '--number', '1', '--diff', 'diff.json'], io, { env: { GITHUB_TOKEN: TOKEN }, sleep }), 0);
  api.rateLimit();
  t.equal(await runComment(['--provider', 'gitlab', '--api-url', `${api.url}/api/v4`, '--project', '5', '--number', '2', '--diff', 'diff.json'], io, { env: { GITLAB_TOKEN: TOKEN }, sleep }), 0);
  t.equal(waits.length, 2, 'one wait per rate-limit answer');
  t.equal(waits[1], 1000, 'GitLab: retry-after seconds');
  t.same(api.requests.map((r) => r.status), [403, 200, 201, 429, 200, 201]);
  t.match(stdout, /created comment \d+ on acme\/flags#1\n.*created comment \d+ on project 5 !2\n/s);

  // Still limited after two retries: a clear error, exit 1, nothing written.
  api.rateLimit(3);
  let stderr = '';
  const io2: CliIO = { stdout: () => undefined, stderr: (s) => void (stderr += s), cwd: dir };
  t.equal(await runComment(['--provider', 'gitlab', '--api-url', `${api.url}/api/v4`, '--project', '5', '--number', '3', '--diff', 'diff.json'], io2, { env: { GITLAB_TOKEN: TOKEN }, sleep }), 1);
  t.match(stderr, /^vexil: GitLab API rate limit: GET http:\/\/127\.0\.0\.1:\d+\/api\/v4\/projects\/5\/merge_requests\/3\/notes answered 429 after 2 retries; the host asks to wait 1 s\n$/);
  t.equal(api.threads.get('gitlab:5!3')?.length ?? 0, 0);
});

t.test('the real CLI: a 401 is a clear error, exit 1, and the token is printed nowhere', async (t) => {
  const api = await startReviewApi(t, { token: 'the-right-token' });
  const dir = mkdtempSync(join(tmpdir(), 'vexil-comment-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'diff.json'), (await vexil(['diff', 'fixtures/diff/base', 'fixtures/diff/head', '--format', 'json', '--impact', '0'])).stdout);
  const r = await runCli(['comment', '--provider', 'github', '--api-url', api.url, '--repository', 'acme/flags', '--number', '4', '--diff', 'diff.json'], { cwd: dir, env: { GITHUB_TOKEN: TOKEN } });
  t.equal(r.code, 1);
  t.match(r.stderr, /^vexil: GitHub API: GET http:\/\/127\.0\.0\.1:\d+\/repos\/acme\/flags\/issues\/4\/comments answered 401: Bad credentials \(the token is missing, expired or not valid for this host\)\n$/);
  t.notOk(`${r.stdout}${r.stderr}`.includes(TOKEN));
  t.equal(api.threads.get('github:acme/flags#4')?.length ?? 0, 0);

  const gl = await runCli(['comment', '--provider', 'gitlab', '--api-url', `${api.url}/api/v4`, '--project', '1', '--number', '1', '--diff', 'diff.json'], { cwd: dir, env: { GITLAB_TOKEN: TOKEN } });
  t.equal(gl.code, 1);
  t.match(gl.stderr, /GitLab API: GET .* answered 401: 401 Unauthorized/);
  t.notOk(`${gl.stdout}${gl.stderr}`.includes(TOKEN));
});

t.test('usage errors exit 2: no token, no pull request, bad flags', async (t) => {
  const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
    [['comment', '--diff', 'x.json'], {}, /--provider is required/],
    [['comment', '--provider', 'bitbucket', '--diff', 'x.json'], {}, /unknown provider "bitbucket"/],
    [['comment', '--provider', 'github'], {}, /nothing to report/],
    [['comment', '--provider', 'github', '--diff', 'x.json', '--repository', 'a/b', '--number', '1'], {}, /GITHUB_TOKEN is not set/],
    [['comment', '--provider', 'github', '--diff', 'x.json', '--repository', 'a/b'], { GITHUB_TOKEN: TOKEN }, /no pull request number/],
    [['comment', '--provider', 'github', '--diff', 'x.json', '--repository', 'a/b', '--number', '0'], { GITHUB_TOKEN: TOKEN }, /--number must be a positive integer/],
    [['comment', '--provider', 'gitlab', '--diff', 'x.json', '--number', '1'], { GITLAB_TOKEN: TOKEN }, /no project/],
    [['comment', '--provider', 'github', '--diff', 'x.json', '--marker', 'Bad Marker'], {}, /--marker must be/],
  ];
  for (const [args, env, message] of cases) {
    let stderr = '';
    const io: CliIO = { stdout: () => undefined, stderr: (s) => void (stderr += s), cwd: REPO };
    const { UsageError } = await import('../../src/cli/usage.js');
    const err = await runComment(args.slice(1), io, { env }).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(err instanceof UsageError, args.join(' '));
    t.match((err as Error).message, message);
    t.notOk(stderr.includes(TOKEN));
  }
  const help = await vexil(['help', 'comment']);
  t.match(help.stdout, /^Usage: vexil comment --provider github\|gitlab/);
});

t.test('a missing or foreign input is said in the comment; a huge diff is cut under 65,536 characters', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-comment-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'empty.json'), '');
  writeFileSync(join(dir, 'other.json'), '{"hello": 1}');
  const r = await vexil(['comment', '--dry-run', '--validate', join(dir, 'empty.json'), '--test', join(dir, 'nowhere.json'), '--diff', join(dir, 'other.json')]);
  t.equal(r.code, 0);
  t.match(r.stdout, /^<!-- vexil-review -->\n## ❌ /);
  t.match(r.stdout, /\| validation report \| ❌ `[^`]*empty\.json` could not be read: empty/);
  t.match(r.stdout, /\| flag test report \| ❌ `[^`]*nowhere\.json` could not be read: no such file/);
  t.match(r.stdout, /\| diff \| ❌ `[^`]*other\.json` could not be read: not the JSON of `vexil diff --format json`/);
  t.match(r.stderr, /the diff .*other\.json could not be read/);

  // A guard on the change (as `vexil validate --base` reports one) is listed first, under its own heading.
  writeFileSync(join(dir, 'guards.json'), JSON.stringify([
    { severity: 'warning', rule: 'segment.unused', file: 'features.yml', line: 3, column: 5, message: 'segment `old` is used by no flag' },
    { severity: 'error', rule: 'guard.max-rollout-change', file: 'features.yml', line: 12, column: 7, message: 'rollout of flag `checkout` moves 40 points (at most 20)' },
  ]));
  const g = await vexil(['comment', '--dry-run', '--validate', join(dir, 'guards.json')]);
  t.match(g.stdout, /\| Validation \| ⚠️ 0 errors, 1 warning \|\n\| Guards on the change \| ❌ 1 guard failed \|\n/);
  t.match(g.stdout, /### Guards that failed\n\n- ❌ `features\.yml:12:7` \*\*guard\.max-rollout-change\*\*: rollout of flag \\`checkout\\` moves 40 points \(at most 20\)\n\n### Warnings\n/);

  // 800 changed flags with their impact (the stored diff's namespaces forty times): far beyond one comment.
  const stored = JSON.parse(readFileSync(join(REPO, 'fixtures/diff/generated-2000-impact-10000.json'), 'utf8')) as { namespaces: { key: string }[]; impact: { flags: { namespace: string }[] } };
  const copies = Array.from({ length: 20 }, (_, i) => i);
  stored.namespaces = copies.flatMap((i) => stored.namespaces.map((n) => ({ ...n, key: `${n.key}-${i}` })));
  stored.impact.flags = copies.flatMap((i) => stored.impact.flags.map((f) => ({ ...f, namespace: `${f.namespace}-${i}` })));
  writeFileSync(join(dir, 'big.json'), JSON.stringify(stored));
  const big = await vexil(['comment', '--dry-run', '--diff', join(dir, 'big.json')]);
  t.equal(big.code, 0, big.stderr);
  t.ok(big.stdout.length <= 65_536, `${big.stdout.length} characters`);
  t.ok(big.stdout.length > 60_000, 'the room is used');
  t.match(big.stdout, /_The list of changes is cut here \(\d+ more lines\): see the job summary or the job log, or run `vexil diff` locally\._/);
  t.equal(big.stdout.split('<details>').length, big.stdout.split('</details>').length, 'every <details> closed');
});

t.test('rate-limit answers as each host writes them, and what is not one', async (t) => {
  const { rateLimitWait } = await import('../../src/cli/comment/api-request.js');
  const now = 1_800_000_000_000;
  const answer = (status: number, headers: Record<string, string>) => new Response(null, { status, headers });
  t.equal(rateLimitWait(answer(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1000 + 30) }), now), 30_000, 'GitHub primary: until x-ratelimit-reset');
  t.equal(rateLimitWait(answer(429, { 'retry-after': '7' }), now), 7_000, 'retry-after seconds');
  t.equal(rateLimitWait(answer(403, { 'retry-after': '5', 'x-ratelimit-remaining': '12' }), now), 5_000, 'GitHub secondary: retry-after');
  t.equal(rateLimitWait(answer(429, { 'ratelimit-remaining': '0', 'ratelimit-reset': String(now / 1000 + 2) }), now), 2_000, 'GitLab: RateLimit-Reset');
  t.equal(rateLimitWait(answer(429, {}), now), 60_000, 'a bare 429: the longest wait');
  t.equal(rateLimitWait(answer(403, { 'x-ratelimit-remaining': '4999' }), now), undefined, 'a 403 with quota left is a refusal');
  t.equal(rateLimitWait(answer(401, { 'retry-after': '1' }), now), undefined);
  t.equal(rateLimitWait(answer(200, { 'x-ratelimit-remaining': '0' }), now), undefined);

  // A wait longer than the command will sit through: no retry, the error says how long.
  const { createServer } = await import('node:http');
  const slow = createServer((_req, res) => {
    res.writeHead(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600), 'content-type': 'application/json' });
    res.end('{"message":"API rate limit exceeded"}');
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    slow.closeAllConnections();
    slow.close();
  });
  const dir = mkdtempSync(join(tmpdir(), 'vexil-comment-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'v.json'), '[]');
  let stderr = '';
  const waits: number[] = [];
  const io: CliIO = { stdout: () => undefined, stderr: (s) => void (stderr += s), cwd: dir };
  const port = (slow.address() as { port: number }).port;
  const code = await runComment(['--provider', 'github', '--api-url', `http://127.0.0.1:${port}`, '--repository', 'a/b', '--number', '1', '--validate', 'v.json'], io, {
    env: { GITHUB_TOKEN: TOKEN },
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  });
  t.equal(code, 1);
  t.same(waits, [], 'no wait of an hour');
  t.match(stderr, /GitHub API rate limit: GET .* answered 403; the host asks to wait 3[56]\d\d s\n$/);
});
