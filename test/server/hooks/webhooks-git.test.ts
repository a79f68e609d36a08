/**
 * Push webhooks end to end: the real `vexil serve` (authentication required, poll interval one
 * hour) on a real `git http-backend` that counts the requests it receives.
 *
 * - A push plus a signed GitHub delivery: the new commit is served (X-Vexil-Revision) without
 *   waiting for the poll; the same through GitLab's token (set by VEXIL_WEBHOOKS_GITLAB_TOKEN)
 *   and the generic HMAC (secret read from a file).
 * - Forged, missing or replayed deliveries, oversized and malformed bodies: 4xx, and not one
 *   request reaches the Git server. A push to a branch vexil does not serve: acknowledged, ignored.
 * - A flood of signed deliveries and of `POST /meta/refresh` calls: the Git server is looked at
 *   at most once a second (the count is bounded by the flood's length in seconds: a rate,
 *   counted, not timed).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tap from 'tap';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../../support/git-fixture.js';
import { testsNeeding } from '../../support/requirements.js';
import { writeServeConfig } from '../../support/serve-config.js';
import { serveCli } from '../../cli/run-cli.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());

const BOOTSTRAP = 'bootstrap-token-for-webhook-tests';
const GITHUB_SECRET = 'gh webhook secret';
const GITLAB_TOKEN = 'gl-webhook-token';
const GENERIC_SECRET = 'generic webhook secret';

const hmac = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

t.test('push webhooks on vexil serve over a real git server', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const served = writeServeConfig(t, 'vexil-hooks-', (dir) => {
    writeFileSync(join(dir, 'generic.secret'), `${GENERIC_SECRET}\n`);
    return [
      'storage:',
      '  type: git',
      '  git:',
      `    repository: ${g.url}`,
      '    cache_dir: cache',
      '    poll_interval: 1h',
      'data_dir: data',
      'authentication:',
      '  required: true',
      `  methods: { token: { enabled: true, bootstrap: { token: ${BOOTSTRAP} } } }`,
      'webhooks:',
      `  github: { secret: "${GITHUB_SECRET}" }`,
      '  generic: { secret_file: generic.secret }',
    ];
  });
  const { listening } = await serveCli(t, ['serve', '--config', served.config], { env: { VEXIL_WEBHOOKS_GITLAB_TOKEN: GITLAB_TOKEN } });
  const url = String(listening.url);

  const revision = async () => {
    const res = await fetch(`${url}/evaluate/v1/variant`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${BOOTSTRAP}` },
      body: JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: 'e1' }),
    });
    const body = (await res.json()) as { variantKey?: string };
    return { revision: res.headers.get('x-vexil-revision'), variant: body.variantKey };
  };
  /** Waits (no deadline of its own: the test's timeout is the bound) until main serves `commit`. */
  const servedCommit = async (commit: string) => {
    for (;;) {
      const r = await revision();
      if (r.revision === commit) return r;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const hook = (path: string, body: string, headers: Record<string, string>) =>
    fetch(`${url}/hooks/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }).then(async (res) => ({
      status: res.status,
      body: (await res.json()) as Record<string, unknown>,
    }));
  const github = (body: string, event = 'push', extra: Record<string, string> = {}) =>
    hook('github', body, { 'x-github-event': event, 'x-github-delivery': randomUUID(), 'x-hub-signature-256': `sha256=${hmac(GITHUB_SECRET, body)}`, ...extra });
  const pushBody = (ref: string, after: string) => JSON.stringify({ ref, before: c1, after, repository: { full_name: 'acme/flags' }, commits: [] });
  const upstream = () => g.server.requests.length;

  t.equal((await revision()).revision, c1, 'serves the first commit');

  await t.test('hooks are public: no bearer token, the signature is the credential', async (t) => {
    const ping = await github(JSON.stringify({ zen: 'Design for failure.', hook_id: 1 }), 'ping');
    t.same(ping, { status: 200, body: { status: 'pong', references: [], all: false, reason: '' } });
    const unconfigured = await hook('gitea', '{}', {});
    t.equal(unconfigured.status, 404, 'a hook without a secret is 404 (not 401: it is not there)');
  });

  await t.test('forged, missing, replayed, oversized and malformed deliveries: 4xx and nothing fetched', async (t) => {
    const before = upstream();
    const body = pushBody('refs/heads/main', 'f'.repeat(40));
    const forged = await hook('github', body, { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${hmac('guessed secret', body)}` });
    t.equal(forged.status, 401);
    t.equal(forged.body.message, 'missing or invalid X-Hub-Signature-256');
    t.equal((await hook('github', body, { 'x-github-event': 'push' })).status, 401, 'no signature');
    t.equal((await hook('gitlab', body, { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': 'gl-webhook-tokeN' })).status, 401, 'a wrong GitLab token');
    t.equal((await hook('generic', '{}', { 'x-vexil-signature': `sha256=${hmac(GITHUB_SECRET, '{}')}` })).status, 401, 'signed with another secret');
    const tokenInstead = await hook('github', body, { 'x-github-event': 'push', authorization: `Bearer ${BOOTSTRAP}` });
    t.equal(tokenInstead.status, 401, 'a valid client token does not stand in for the signature');

    const replayHeaders = { 'x-github-event': 'push', 'x-github-delivery': 'delivery-1', 'x-hub-signature-256': `sha256=${hmac(GITHUB_SECRET, pushBody('refs/heads/nope', c1))}` };
    t.equal((await hook('github', pushBody('refs/heads/nope', c1), replayHeaders)).status, 202, 'first delivery');
    const replay = await hook('github', pushBody('refs/heads/nope', c1), replayHeaders);
    t.equal(replay.status, 409, 'the same delivery again');
    t.equal(replay.body.message, 'delivery delivery-1 was already received');

    const big = 'x'.repeat(4 * 1024 * 1024 + 1);
    const oversized = await hook('github', big, { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${hmac(GITHUB_SECRET, big)}` });
    t.equal(oversized.status, 413, 'over 4 MiB');
    const malformed = '{"ref": ';
    t.equal((await github(malformed)).status, 400, 'signed but not JSON');
    t.equal((await github('{"ref": 42}')).status, 400, 'signed, JSON, no ref');
    t.equal((await hook('generic', '{"reference": []}', { 'x-vexil-signature': `sha256=${hmac(GENERIC_SECRET, '{"reference": []}')}` })).status, 400);

    const untracked = await github(pushBody('refs/heads/somebody-elses-branch', 'e'.repeat(40)));
    t.same(untracked, { status: 202, body: { status: 'ignored', references: [], all: false, reason: 'reference "refs/heads/somebody-elses-branch" is not served' } });
    const issue = await github('{"action":"opened"}', 'issues');
    t.equal(issue.body.status, 'ignored', 'other events are acknowledged and ignored');
    const pullHead = await github(pushBody('refs/pull/1/head', 'e'.repeat(40)));
    t.equal(pullHead.body.status, 'ignored', 'refs other than branches and tags are never served');

    t.equal(upstream(), before, 'no request reached the Git server for any refused or ignored delivery');
  });

  await t.test('a push and a signed GitHub delivery: served at once, not at the next poll', async (t) => {
    const c2 = await g.repo.commit('main', { 'features.yml': gitFixture('bonjour.yml') });
    const sent = performance.now();
    const res = await github(pushBody('refs/heads/main', c2));
    t.same(res, { status: 202, body: { status: 'accepted', references: ['main'], all: false, reason: '' } });
    const now = await servedCommit(c2);
    t.comment(`delivery sent → new commit served: ${(performance.now() - sent).toFixed(0)} ms (a figure, not a bound)`);
    t.equal(now.variant, 'bonjour');
    const again = await github(pushBody('refs/heads/main', c2));
    t.same(again.body, { status: 'ignored', references: [], all: false, reason: `reference "refs/heads/main" already serves ${c2}` }, 'a late delivery for a commit served: nothing to look at');
  });

  await t.test('GitLab (token from VEXIL_WEBHOOKS_GITLAB_TOKEN) and the generic hook (secret from a file)', async (t) => {
    const c3 = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
    const body = JSON.stringify({ object_kind: 'push', ref: 'refs/heads/main', after: c3 });
    const gl = await hook('gitlab', body, { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': GITLAB_TOKEN, 'x-gitlab-event-uuid': randomUUID() });
    t.equal(gl.status, 202);
    t.same(gl.body.references, ['main']);
    await servedCommit(c3);

    const c4 = await g.repo.commit('main', { 'features.yml': gitFixture('bonjour.yml') });
    const all = '{}';
    const generic = await hook('generic', all, { 'x-vexil-signature': `sha256=${hmac(GENERIC_SECRET, all)}` });
    t.same(generic.body, { status: 'accepted', references: [], all: true, reason: '' }, 'no reference: every tracked one');
    await servedCommit(c4);
  });

  await t.test('a flood of deliveries and of /meta/refresh: at most one look at the Git server a second', async (t) => {
    const N = 300;
    const before = g.count('/git-upload-pack', 'POST');
    const started = performance.now();
    let accepted = 0;
    const one = '{"reference":"main"}';
    const sig = `sha256=${hmac(GENERIC_SECRET, one)}`;
    await Promise.all(
      Array.from({ length: N }, async () => {
        const res = await hook('generic', one, { 'x-vexil-signature': sig });
        if (res.status === 202) accepted++;
      }),
    );
    const refreshes = await Promise.all(
      Array.from({ length: 30 }, () => fetch(`${url}/meta/refresh`, { method: 'POST', headers: { authorization: `Bearer ${BOOTSTRAP}` } }).then((r) => r.status)),
    );
    const seconds = (performance.now() - started) / 1000;
    const looks = g.count('/git-upload-pack', 'POST') - before;
    t.equal(accepted, N, 'every delivery acknowledged');
    t.same([...new Set(refreshes)], [200], 'every /meta/refresh answered once a look after it ran');
    // One listing per look (nothing moved: no fetch); a look a second, plus the one after the last second began.
    const bound = Math.ceil(seconds) + 2;
    t.ok(looks <= bound, `${N} deliveries and 30 refreshes in ${seconds.toFixed(2)} s: ${looks} listings on the Git server (bound ${bound})`);
    t.ok(looks >= 1, 'and the Git server was looked at');
  });
});
