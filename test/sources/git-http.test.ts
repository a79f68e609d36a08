/**
 * The git backend through vexil's HTTP API (in process) and through `vexil serve` (a child
 * process), against a real `git http-backend` on loopback.
 */
import { pino } from 'pino';
import tap from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { startHttpServer } from '../../src/server/listen.js';
import { runCli, serveCli } from '../cli/run-cli.js';
import { gitFixture, gitUnavailableReason, startGitFixture, type GitFixture } from '../support/git-fixture.js';
import type { Teardown } from '../support/git-repo.js';
import { testsNeeding } from '../support/requirements.js';
import { writeServeConfig } from '../support/serve-config.js';

// Outside CI, every test here skips with the reason when git is missing; under CI it fails.
const t = testsNeeding(tap, 'git', gitUnavailableReason());

const hello = () => ({ 'features.yml': gitFixture('hello.yml') });
const bonjour = { 'features.yml': gitFixture('bonjour.yml') };

async function json(res: Response) {
  return { status: res.status, revision: res.headers.get('x-vexil-revision'), body: (await res.json()) as any };
}

interface ServeOptions {
  maxStalenessMs?: number;
  now?: () => Date;
  /** Runs before the store starts (references created later are seen after a poll, or 1 s later). */
  before?: (g: GitFixture, c1: string) => Promise<void>;
}

async function serveGit(t: Teardown, opts: ServeOptions = {}) {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  const { before, ...storeOpts } = opts;
  await before?.(g, c1);
  const store = g.store(storeOpts);
  await store.start();
  const config = loadConfig({ env: { VEXIL_STORAGE_TYPE: 'git', VEXIL_STORAGE_GIT_REPOSITORY: g.url } });
  const server = await startHttpServer({
    store,
    config,
    logger: pino({ level: 'silent' }),
    storageType: 'git',
    version: 'test',
    host: '127.0.0.1',
    port: 0,
  });
  t.teardown(() => server.close());
  return { g, c1, store, url: server.url };
}

const variant = (url: string, reference?: string) =>
  fetch(`${url}/evaluate/v1/variant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: 'e1', context: {}, ...(reference ? { reference } : {}) }),
  }).then(json);

t.test('every response for a git reference carries its commit id; unknown references are 404', async (t) => {
  let c2 = '';
  const { c1, url } = await serveGit(t, {
    before: async (g, c1) => {
      c2 = await g.repo.commit('feature', bonjour, { parent: c1 });
      await g.repo.tag('v1', c1);
    },
  });

  const main = await variant(url);
  t.equal(main.status, 200);
  t.equal(main.body.variantKey, 'hello');
  t.equal(main.revision, c1);

  const feature = await variant(url, 'feature');
  t.equal(feature.body.variantKey, 'bonjour');
  t.equal(feature.revision, c2, 'X-Vexil-Revision is the commit served for that reference');

  const flag = await fetch(`${url}/api/v1/namespaces/default/flags/greeting?reference=feature`).then(json);
  t.equal(flag.status, 200);
  t.equal(flag.revision, c2);
  const byTag = await fetch(`${url}/api/v1/namespaces/default/flags/greeting?reference=v1`).then(json);
  t.equal(byTag.revision, c1);
  const byCommit = await variant(url, c2);
  t.equal(byCommit.revision, c2);
  t.equal(byCommit.body.variantKey, 'bonjour');

  const unknown = await fetch(`${url}/api/v1/namespaces/default/flags?reference=nope`).then(json);
  t.equal(unknown.status, 404);
  t.same(unknown.body, { code: 5, message: 'reference "nope" not found', details: [] });

  const snaps = await fetch(`${url}/meta/snapshots`).then(json);
  t.same(
    snaps.body.references.map((r: { reference: string; revision: { id: string } }) => [r.reference, r.revision.id]),
    [['main', c1], [c2, c2], ['feature', c2], ['v1', c1]],
    '/meta/snapshots lists every built reference',
  );
  t.equal(snaps.body.defaultReference, 'main');
});

t.test('a bad commit: /meta/snapshots shows commit, author, message and located errors; the metric counts it', async (t) => {
  const { g, store, url } = await serveGit(t, { before: (g, c1) => g.repo.commit('feature', bonjour, { parent: c1 }).then(() => {}) });
  await variant(url, 'feature');
  const bad = await g.repo.commit('feature', { 'features.yml': gitFixture('broken.yml') }, { message: 'oops', author: { name: 'Bob', email: 'bob@example.com' } });
  await store.refresh();

  const snaps = await fetch(`${url}/meta/snapshots`).then(json);
  const feature = snaps.body.references.find((r: { reference: string }) => r.reference === 'feature');
  t.match(feature.lastRejected, {
    revision: { id: bad, meta: { author: 'Bob <bob@example.com>', message: 'oops' } },
    problems: [{ severity: 'error', file: 'features.yml', line: Number, column: Number, rule: String }],
  });
  t.equal((await variant(url, 'feature')).body.variantKey, 'bonjour', 'last good still served');
  const metrics = await (await fetch(`${url}/metrics`)).text();
  t.match(metrics, /vexil_snapshot_reload_failures_total\{reference="feature",kind="rejected"\} 1/);
});

t.test('POST /meta/refresh polls now and answers with the new revisions', async (t) => {
  const { g, c1, url } = await serveGit(t);
  const c2 = await g.repo.commit('main', bonjour);
  const before = await variant(url);
  t.equal(before.revision, c1, 'not polled yet');
  const res = await fetch(`${url}/meta/refresh`, { method: 'POST' }).then(json);
  t.equal(res.status, 200);
  t.equal(res.body.references[0].reference, 'main');
  t.equal(res.body.references[0].revision.id, c2, 'the answer carries the new revision');
  t.equal((await variant(url)).revision, c2);
});

t.test('/ready stays ready while the default reference is fresh, then 503 with the reason', async (t) => {
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const { g, url, store } = await serveGit(t, { maxStalenessMs: 5 * 60_000, now: () => new Date(clock) });
  t.equal((await fetch(`${url}/ready`).then(json)).status, 200);
  g.server.setAuth({ token: 'now-required' });
  clock += 3 * 60_000;
  await store.refresh();
  const ready = await fetch(`${url}/ready`).then(json);
  t.equal(ready.status, 200, 'the server is refusing us, but the snapshot is younger than max_staleness');
  clock += 3 * 60_000;
  const stale = await fetch(`${url}/ready`).then(json);
  t.equal(stale.status, 503);
  t.match(stale.body.message, /reference "main" has not been confirmed by the source for 6m0s \(limit 5m0s\): the state backend could not be read \(lastError in \/meta\/snapshots\)$/);
  const detail = await fetch(`${url}/meta/snapshots`).then(json);
  t.match(detail.body.references[0].lastError.message, /the git server requires authentication \(HTTP 401/, 'the detail is in /meta/snapshots');
  t.equal((await variant(url)).status, 200, 'serving continues');
  t.equal((await fetch(`${url}/health`)).status, 200, 'liveness is not affected');
  g.server.setAuth({});
  await fetch(`${url}/meta/refresh`, { method: 'POST' });
  t.equal((await fetch(`${url}/ready`)).status, 200, 'ready again after a good poll');
});

t.test('vexil serve with storage.type git: serves references; SSH and missing repository refused at start', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  const c2 = await g.repo.commit('feature', bonjour, { parent: c1 });
  const { config } = writeServeConfig(t, 'vexil-serve-git-', () => [
    'storage:',
    '  type: git',
    '  git:',
    `    repository: ${g.url}`,
    '    cache_dir: cache',
    '    poll_interval: 1h',
  ]);
  const { child, listening } = await serveCli(t, ['serve', '--config', config]);
  t.equal(listening.storage, 'git');
  const url = String(listening.url);
  t.equal((await variant(url)).revision, c1);
  const feature = await variant(url, 'feature');
  t.equal(feature.revision, c2);
  t.equal(feature.body.variantKey, 'bonjour');
  const info = await fetch(`${url}/meta/info`).then(json);
  t.equal(info.body.storage.type, 'git');
  child.kill('SIGTERM');
  const code = await new Promise((r) => child.on('close', r));
  t.equal(code, 0);

  const ssh = await runCli(['serve', '--config', config], { env: { VEXIL_STORAGE_GIT_REPOSITORY: 'git@github.com:org/flags.git' } });
  t.equal(ssh.code, 1);
  t.match(ssh.stderr, /storage\.git\.repository: SSH repositories are not supported .*HTTP\(S\) only/);
  const none = await runCli(['serve'], { env: { VEXIL_STORAGE_TYPE: 'git' } });
  t.equal(none.code, 1);
  t.match(none.stderr, /storage\.git\.repository: required when storage\.type is git/);
});
