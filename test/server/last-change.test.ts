/**
 * `GET /api/v1/namespaces/{ns}/flags/{key}/last-change` through a real `vexil serve` on a real Git
 * repository served over HTTP: the newest commit that changed the flag's definition (not merely its
 * file, not another file), the walk's bound (200 commits), a local folder's "no history" reason,
 * bad input and unknown flags as 4xx JSON, namespace-scoped tokens; and the git source's
 * `history` walk itself (first-parent, stops at its limit); shared and serialized walks.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tap from 'tap';
import { serveCli } from '../cli/run-cli.js';
import { createToken } from '../auth/support.js';
import { gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { git } from '../support/git-repo.js';
import { testsNeeding } from '../support/requirements.js';
import { writeServeConfig } from '../support/serve-config.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());
const BOOTSTRAP = 'last-change-test-bootstrap-token';

async function get(url: string, token: string | null = BOOTSTRAP): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(url, { headers: token !== null ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** A state file of namespace `default` with flags `alpha` (enabled `a`) and `beta` (enabled `b`). */
const flags = (a: boolean, b: boolean, comment = '') =>
  [
    'version: "1.4"',
    'namespace: default',
    comment,
    'flags:',
    '  - key: alpha',
    '    name: Alpha',
    '    type: BOOLEAN_FLAG_TYPE',
    `    enabled: ${a}`,
    '  - key: beta',
    '    name: Beta',
    '    type: BOOLEAN_FLAG_TYPE',
    `    enabled: ${b}`,
    '',
  ].join('\n');
const other = (n: number) => ['version: "1.4"', 'namespace: other', 'flags:', '  - key: gamma', `    name: Gamma ${n}`, '    type: BOOLEAN_FLAG_TYPE', '    enabled: true', ''].join('\n');

t.test('the last commit that changed a flag', async (t) => {
  const g = await startGitFixture(t);
  const author = { name: 'Grace Hopper', email: 'grace@example.com' };
  const first = await g.repo.commit('main', { 'default.features.yml': flags(true, false), 'other.features.yml': other(1) }, { message: 'add alpha and beta\n\nwith a body', author });
  const second = await g.repo.commit('main', { 'default.features.yml': flags(true, true, '# beta on') }, { message: 'turn beta on' });
  const third = await g.repo.commit('main', { 'other.features.yml': other(2) }, { message: 'rename gamma' });

  // A branch 200 commits past `first` changing only beta: alpha's change is out of reach.
  const stream: string[] = [];
  for (let i = 0; i < 200; i++) {
    const content = flags(true, i % 2 === 0, `# step ${i}`);
    const msg = `step ${i}`;
    stream.push('commit refs/heads/long', `committer Ada <ada@example.com> ${1_800_000_000 + i} +0000`, `data ${Buffer.byteLength(msg)}`, msg);
    if (i === 0) stream.push(`from ${first}`);
    stream.push('M 100644 inline default.features.yml', `data ${Buffer.byteLength(content)}`, content);
  }
  await git(['--git-dir', g.repo.gitdir, 'fast-import', '--quiet'], { input: `${stream.join('\n')}\n` });

  const { config } = writeServeConfig(t, 'vexil-last-change-', (dir) => [
    `data_dir: ${join(dir, 'data')}`,
    'authentication:',
    '  required: true',
    '  methods:',
    '    token:',
    '      enabled: true',
    `      bootstrap: { token: ${BOOTSTRAP} }`,
    'storage:',
    '  type: git',
    '  git:',
    `    repository: ${g.url}`,
    `    cache_dir: ${join(dir, 'cache')}`,
    '    poll_interval: 1h',
  ]);
  const { listening } = await serveCli(t, ['serve', '--config', config]);
  const url = String(listening.url);
  const lastChange = (ns: string, flag: string, query = '', token?: string | null) => get(`${url}/api/v1/namespaces/${ns}/flags/${flag}/last-change${query}`, token);

  let r = await lastChange('default', 'alpha');
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.same(r.body, {
    reference: 'main',
    revision: third,
    namespaceKey: 'default',
    flagKey: 'alpha',
    lastChange: { revision: first, author: 'Grace Hopper <grace@example.com>', message: 'add alpha and beta\n\nwith a body', committedAt: '2023-11-14T22:13:20.000Z' },
  }, 'alpha: the commit that added it (the second changed its file, not it; the third another file)');
  r = await lastChange('default', 'beta', '?reference=main');
  t.match(r.body.lastChange, { revision: second, parent: first, message: 'turn beta on' }, 'beta: the second commit');
  r = await lastChange('other', 'gamma');
  t.match(r.body.lastChange, { revision: third, parent: second, message: 'rename gamma' }, 'gamma: the third');
  r = await lastChange('default', 'alpha', `?reference=${second}`);
  t.match(r.body, { revision: second, lastChange: { revision: first } }, 'at a commit id');

  // The bound: alpha last changed 201 commits before the tip of `long`.
  t.equal((await get(`${url}/api/v1/namespaces/default/flags/alpha?reference=long`)).status, 200, 'long built before the walk is timed');
  const started = performance.now();
  r = await lastChange('default', 'alpha', '?reference=long');
  t.comment(`200 commits walked (first ask on long, an http mirror) in ${Math.round(performance.now() - started)} ms`);
  t.equal(r.status, 200);
  t.same(r.body.lastChange, { revision: null, reason: 'the flag did not change in the last 200 commits (at most 200 are walked)' });
  r = await lastChange('default', 'beta', '?reference=long');
  t.match(r.body.lastChange, { message: 'step 199' }, 'beta changed in the tip');

  // Bad input and unknown things: 4xx JSON.
  r = await lastChange('default', 'nope');
  t.equal(r.status, 404);
  t.match(r.body, { code: 5, message: 'flag "default/nope" not found' });
  r = await lastChange('nope', 'alpha');
  t.equal(r.status, 404);
  t.match(r.body, { code: 5 });
  r = await lastChange('default', 'x'.repeat(1025));
  t.equal(r.status, 400);
  t.match(r.body, { code: 3, message: 'a flag key must be at most 1024 characters' });
  r = await lastChange('default', 'alpha', '?reference=no-such-branch');
  t.equal(r.status, 404);
  t.match(r.body, { code: 5 });

  // Authentication and namespace scope, as for the outline.
  r = await lastChange('default', 'alpha', '', null);
  t.equal(r.status, 401);
  const scoped = (await createToken(url, BOOTSTRAP, { name: 'other only', namespaceKey: 'other' })).clientToken;
  r = await lastChange('other', 'gamma', '', scoped);
  t.equal(r.status, 200);
  r = await lastChange('default', 'alpha', '', scoped);
  t.equal(r.status, 403);

  // The source's walk itself: first-parent, the commits that changed the file, bounded.
  const source = g.source();
  await source.refs();
  await source.files({ id: third, ref: 'main' });
  const walk = await source.history(third, 'default.features.yml', 200);
  t.same(walk.changes.map((c) => c.commit), [second, first], 'the commits that changed the file, newest first');
  t.equal(walk.walked, 3);
  t.equal(walk.stopped, undefined, 'reached the root commit');
  t.equal(walk.changes[1]!.before, undefined, 'the root commit has no parent file');
  const bounded = await source.history(third, 'default.features.yml', 2);
  t.same(bounded.changes.map((c) => c.commit), [second], 'two commits walked: the third and the second');
  t.equal(bounded.stopped, 'limit');
});

t.test('a local folder keeps no history', async (t) => {
  const { config, dir } = writeServeConfig(t, 'vexil-last-change-local-', (dir) => ['storage:', '  type: local', '  local:', `    path: ${join(dir, 'state')}`]);
  mkdirSync(join(dir, 'state'));
  writeFileSync(join(dir, 'state', 'default.features.yml'), flags(true, false));
  const { listening } = await serveCli(t, ['serve', '--config', config]);
  const r = await get(`${String(listening.url)}/api/v1/namespaces/default/flags/alpha/last-change`, null);
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.same(r.body.lastChange, { revision: null, reason: 'the state is read from a local folder, which keeps no commit history' });
});

t.test('one walk per flag at a time; answers kept per revision', async (t) => {
  const g = await startGitFixture(t);
  const first = await g.repo.commit('main', { 'default.features.yml': flags(true, false) }, { message: 'add' });
  const second = await g.repo.commit('main', { 'default.features.yml': flags(false, true) }, { message: 'flip both' });
  const real = g.source();
  let calls = 0;
  let running = 0;
  let most = 0;
  // The real source, counting its history walks and how many run at once.
  const source = {
    ...real,
    async history(revisionId: string, path: string, limit: number) {
      calls++;
      most = Math.max(most, ++running);
      try {
        return await real.history(revisionId, path, limit);
      } finally {
        running--;
      }
    },
  };
  const store = g.store({ source });
  await store.start();
  const atTip = await store.resolve('main');
  const atFirst = await store.resolve(first);
  const answers = await Promise.all([
    store.lastChange(atTip, 'default', 'alpha'),
    store.lastChange(atTip, 'default', 'alpha'),
    store.lastChange(atFirst, 'default', 'alpha'),
    store.lastChange(atTip, 'default', 'alpha'),
  ]);
  t.same(answers.map((a) => a.revision), [second, second, first, second]);
  t.equal(calls, 2, 'one walk per (revision, flag): the asks at the tip shared one');
  t.equal(most, 1, 'the two walks of alpha did not run at once');
  t.equal((await store.lastChange(atTip, 'default', 'alpha')).revision, second);
  t.equal(calls, 2, 'a later ask is answered from what was kept');
  t.throws(() => store.lastChange(atTip, 'default', 'nope'), { message: 'flag "default/nope" not found' });

  // Walks of several flags: at most two at once in all.
  most = 0;
  await store.refresh();
  const gamma = await g.repo.commit('main', { 'more.features.yml': ['version: "1.4"', 'namespace: more', 'flags:', ...['c', 'd', 'e', 'f'].flatMap((k) => [`  - key: ${k}`, `    name: ${k}`, '    type: BOOLEAN_FLAG_TYPE', '    enabled: true'])].join('\n') }, { message: 'more flags' });
  await store.refresh();
  const atMore = await store.resolve('main');
  t.equal(atMore.revision, gamma);
  const more = await Promise.all(['c', 'd', 'e', 'f'].map((k) => store.lastChange(atMore, 'more', k)));
  t.same(more.map((a) => a.revision), [gamma, gamma, gamma, gamma]);
  t.equal(calls, 6, 'one walk for each of the four flags');
  t.ok(most <= 2, `at most two walks at once (${most})`);
});
