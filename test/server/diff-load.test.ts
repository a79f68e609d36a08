/**
 * `GET /api/v1/diff` under load, through a real `vexil serve` on a real Git repository served
 * over HTTP (test support's git server), with a generated 2,000-flag state whose head changes 20
 * flags (test/support/changed-state.ts):
 * - the answer with the impact preview is byte-identical to the one recorded before the impact
 *   work was cut into slices (fixtures/diff/generated-2000-impact-10000.json, revisions aside);
 * - `diff.max_concurrent: 1`: while one diff is held in flight (its head is a commit the server
 *   must fetch, and the Git server holds the fetch), another is answered 503 with Retry-After;
 *   once the first is released, it answers 200 and the next diff is served again;
 * - a diff whose client goes away is abandoned (logged 499) and frees its place (`max_concurrent: 1`);
 * - the event loop stays responsive: `/health` answers at least 10 times, one request after the
 *   other, while one diff with the impact over 100,000 entities is in flight (counted, not timed).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import tap, { type Test } from 'tap';
import { REPO, serveCli } from '../cli/run-cli.js';
import { changedState } from '../support/changed-state.js';
import { generateState } from '../support/generate-state.js';
import { gitUnavailableReason, startGitFixture, type GitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';
import { writeServeConfig } from '../support/serve-config.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());
const GOLDEN = join(REPO, 'fixtures/diff/generated-2000-impact-10000.json');

const filesOf = (files: ReadonlyArray<{ path: string; text: string }>) => Object.fromEntries(files.map((f) => [f.path, f.text]));

/** Contexts the generated segments read: the impact samples them (a flag test file of both sides). */
const CONTEXTS_TEST = `tests:
${[
  '{ plan: pro, age: "30", beta: "true", country: fr, build: "4", signup: "2024-06-01T00:00:00Z" }',
  '{ plan: free, age: "17", beta: "false", country: us, build: "1" }',
  '{ plan: team, age: "45", beta: "true", country: de, build: "2", signup: "2025-06-01T00:00:00Z" }',
  '{ plan: pro, age: "19", country: it }',
  '{}',
]
  .map((c, i) => `  - name: context ${i + 1}\n    flag: flag_000000\n    entity: user-${i + 1}\n    context: ${c}\n    expect: { match: true }\n`)
  .join('')}`;

/**
 * A repository whose `main` holds a generated 2,000-flag state and `feature` the same with 20
 * flags changed, both with a flag test file of five contexts.
 */
async function generatedRepo(t: Test): Promise<{ g: GitFixture; base: string; head: string }> {
  const g = await startGitFixture(t);
  const generated = generateState({ flags: 2000 });
  const { files, changed } = changedState(generated);
  t.equal(changed, 20, 'the head changes 20 flags');
  const base = await g.repo.commit('main', { ...filesOf(generated), 'default/contexts.test.yml': CONTEXTS_TEST });
  const head = await g.repo.commit('feature', { ...filesOf(files), 'default/contexts.test.yml': CONTEXTS_TEST }, { parent: base });
  return { g, base, head };
}

async function serve(t: Test, g: GitFixture, extra: readonly string[] = []): Promise<string> {
  return (await serveWithLogs(t, g, extra)).url;
}

async function serveWithLogs(t: Test, g: GitFixture, extra: readonly string[] = []): Promise<{ url: string; logs: Array<Record<string, unknown>> }> {
  const { config } = writeServeConfig(t, 'vexil-diff-load-', (dir) => [
    `data_dir: ${join(dir, 'data')}`,
    'storage:',
    '  type: git',
    '  git:',
    `    repository: ${g.url}`,
    `    cache_dir: ${join(dir, 'cache')}`,
    '    poll_interval: 1h',
    ...extra,
  ]);
  const { listening, logs } = await serveCli(t, ['serve', '--config', config]);
  return { url: String(listening.url), logs };
}

t.test('the answer with the impact preview is byte-identical to the one recorded before slicing', async (t) => {
  const { g, base, head } = await generatedRepo(t);
  const url = await serve(t, g);
  const res = await fetch(`${url}/api/v1/diff?base=main&head=feature&impact=10000`);
  t.equal(res.status, 200);
  const text = (await res.text()).replaceAll(base, '<base>').replaceAll(head, '<head>');
  t.equal(text, readFileSync(GOLDEN, 'utf8'));
});

t.test('diff.max_concurrent: one diff more than the limit is 503 with Retry-After, the next one after is served', async (t) => {
  const { g, base } = await generatedRepo(t);
  const url = await serve(t, g, ['diff: { max_concurrent: 1 }']);
  t.equal((await fetch(`${url}/api/v1/diff?base=main&head=feature`)).status, 200, 'served under the limit');

  // A commit the server has not fetched: its diff waits on the Git server, which holds every request.
  const later = await g.repo.commit('later', { 'default/extra.features.yml': 'version: "1.4"\nnamespace: default\nflags: [{key: extra, name: Extra}]\n' }, { parent: base });
  let release: () => void = () => {};
  const held = new Promise<undefined>((r) => (release = () => r(undefined)));
  const reached = new Promise<void>((r) => g.server.setHook(() => (r(), held)));
  const first = fetch(`${url}/api/v1/diff?base=main&head=${later}&impact=1000`);
  await reached; // the first diff is in flight, waiting on the held fetch

  const refused = await fetch(`${url}/api/v1/diff?base=main&head=feature`);
  t.equal(refused.status, 503);
  t.equal(refused.headers.get('retry-after'), '1');
  const body = (await refused.json()) as { code: number; message: string; details: unknown[] };
  t.equal(body.code, 14);
  t.match(body.message, /1 diff is already running/);
  t.same(body.details, []);
  t.equal((await fetch(`${url}/health`)).status, 200, 'other requests are served meanwhile');

  g.server.setHook(undefined);
  release();
  const answered = await first;
  t.equal(answered.status, 200, 'the held diff completes');
  const report = (await answered.json()) as { summary: { flagsAdded: number } };
  t.equal(report.summary.flagsAdded, 1);
  t.equal((await fetch(`${url}/api/v1/diff?base=main&head=feature`)).status, 200, 'served again once the first is done');
});

t.test('a diff whose client goes away is abandoned and frees its place', async (t) => {
  const { g, base } = await generatedRepo(t);
  const { url, logs } = await serveWithLogs(t, g, ['diff: { max_concurrent: 1 }']);
  const later = await g.repo.commit('later', { 'default/extra.features.yml': 'version: "1.4"\nnamespace: default\nflags: [{key: extra, name: Extra}]\n' }, { parent: base });
  let release: () => void = () => {};
  const held = new Promise<undefined>((r) => (release = () => r(undefined)));
  const reached = new Promise<void>((r) => g.server.setHook(() => (r(), held)));
  const client = new AbortController();
  const first = fetch(`${url}/api/v1/diff?base=main&head=${later}&impact=100000`, { signal: client.signal }).catch((e: unknown) => e);
  await reached; // in flight: its head is being fetched
  t.equal((await fetch(`${url}/api/v1/diff?base=main&head=feature`)).status, 503, 'the one place is taken');
  client.abort();
  t.match(await first, { name: 'AbortError' });
  g.server.setHook(undefined);
  release();
  // The abandoned diff frees its place: a diff is served again.
  let status = 503;
  for (let i = 0; i < 1000 && status === 503; i++) status = (await fetch(`${url}/api/v1/diff?base=main&head=feature`)).status;
  t.equal(status, 200, 'served once the abandoned diff let go');
  let line: Record<string, unknown> | undefined;
  for (let i = 0; i < 1000 && line === undefined; i++) {
    line = logs.find((l) => l.msg === 'request' && typeof l.url === 'string' && l.url.includes(later));
    if (line === undefined) await fetch(`${url}/health`);
  }
  t.equal(line?.status, 499, 'the abandoned diff is logged as 499, not answered 200');
});

t.test('the event loop answers /health while a diff with the impact over 100,000 entities is in flight', async (t) => {
  const { g } = await generatedRepo(t);
  const url = await serve(t, g);
  t.equal((await fetch(`${url}/api/v1/diff?base=main&head=feature`)).status, 200, 'both references built');

  let done = false;
  const diff = fetch(`${url}/api/v1/diff?base=main&head=feature&impact=100000`).then(async (res) => {
    const body = (await res.json()) as { impact: { flags: unknown[] } };
    done = true;
    return { status: res.status, flags: body.impact.flags.length };
  });
  // One /health after the other until the diff has answered: each answer needs the event loop.
  let answered = 0;
  while (!done) {
    const res = await fetch(`${url}/health`);
    if (res.status === 200 && !done) answered++;
  }
  const r = await diff;
  t.equal(r.status, 200);
  t.equal(r.flags, 20, '20 flags × 100,000 entities evaluated on both sides');
  t.ok(answered >= 10, `/health answered ${answered} times while the diff was in flight`);
});
