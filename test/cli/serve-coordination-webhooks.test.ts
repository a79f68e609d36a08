/**
 * A push webhook received by any replica reaches every replica (issue 20): three real `vexil serve`
 * replicas coordinated through one real engine (PostgreSQL, then Redis), following a real
 * `git http-backend` that counts the requests it receives, with a poll interval of an hour so only
 * the webhook can bring the push. A signed GitHub delivery to a follower: the follower asks the
 * leader through the engine, the leader looks at the Git server, publishes the revision, and all
 * three replicas answer with the pushed commit in X-Vexil-Revision. A forged or unsigned delivery:
 * 401 on any replica, and not one request reaches the Git server.
 */
import { createHmac, randomUUID } from 'node:crypto';
import tap from 'tap';
import { startServe, type ServeProcess } from '../auth/process.js';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { isCI, reportMissing } from '../support/requirements.js';
import { writeServeConfig } from '../support/serve-config.js';
import { ENGINES } from '../store/coordination/engines.js';
import { roles, servedRevision, waitFor } from './replicas.js';

const SECRET = 'replicated webhook secret';
const hello = { 'features.yml': gitFixture('hello.yml') };
const bonjour = { 'features.yml': gitFixture('bonjour.yml') };

function delivery(url: string, body: string, signature: string | undefined) {
  return fetch(`${url}/hooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
      ...(signature !== undefined ? { 'x-hub-signature-256': signature } : {}),
    },
    body,
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
}

const gitReason = gitUnavailableReason();
for (const kind of ENGINES) {
  const reason = kind.unavailableReason() ?? gitReason;
  tap.test(`a webhook to one of three replicas coordinated through ${kind.name} reaches all`, { skip: reason !== undefined && !isCI() ? reason : false }, async (t) => {
    if (reason !== undefined) reportMissing(t, kind.name, reason);
    const kit = await kind.start({ leaseMs: 1000 });
    t.teardown(() => kit.close());
    const git = await startGitFixture(t);
    const c1 = await git.repo.commit('main', hello);

    const replicas: ServeProcess[] = [];
    for (const name of ['a', 'b', 'c']) {
      const { dir, config } = writeServeConfig(t, `vexil-hook-replica-${name}-`, () => [
        `storage: { type: git, git: { repository: ${JSON.stringify(git.url)}, poll_interval: 1h, cache_dir: cache } }`,
        `cluster: { coordination: { type: ${kind.name}, ${kind.name}: { url: ${JSON.stringify(kit.url)} } } }`,
        `webhooks: { github: { secret: ${JSON.stringify(SECRET)} } }`,
      ]);
      replicas.push(await startServe(t, config, dir));
    }
    await waitFor('one leader, two followers', async () => (await roles(replicas)).sort().join() === 'follower,follower,leader');
    for (const r of replicas) t.equal(await servedRevision(r), c1, 'every replica serves the first commit');

    const c2 = await git.repo.commit('main', bonjour);
    const body = JSON.stringify({ ref: 'refs/heads/main', before: c1, after: c2, repository: { full_name: 'acme/flags' }, commits: [] });
    const current = await roles(replicas);
    const follower = replicas[current.indexOf('follower')]!;

    const looksBefore = git.count('/info/refs');
    const forged = await delivery(follower.url, body, `sha256=${createHmac('sha256', 'not the secret').update(body).digest('hex')}`);
    t.equal(forged.status, 401, 'a forged signature is refused');
    const unsigned = await delivery(replicas[current.indexOf('leader')]!.url, body, undefined);
    t.equal(unsigned.status, 401, 'a delivery without a signature is refused, on the leader too');
    // Longer than the refresh gate's one-second bound: a look the refusals had caused would be counted by now.
    await new Promise((r) => setTimeout(r, 1500));
    t.equal(git.count('/info/refs'), looksBefore, 'refused deliveries reach no Git server');
    for (const r of replicas) t.equal(await servedRevision(r), c1, 'and change nothing served');

    const signed = await delivery(follower.url, body, `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`);
    t.equal(signed.status, 202, `a signed delivery to a follower is accepted: ${JSON.stringify(signed.body)}`);
    await waitFor('every replica serves the push', async () => {
      for (const r of replicas) if ((await servedRevision(r)) !== c2) return false;
      return true;
    });
    t.pass('all three replicas answer X-Vexil-Revision of the pushed commit, with an hour left before any poll');
    // The leader's one look, then one fetch of the published commit by each follower (a fetch opens
    // with the same ref advertisement): never a poll per replica on top.
    const looks = git.count('/info/refs') - looksBefore;
    t.ok(looks <= replicas.length, `the Git server saw ${looks} ref advertisement(s) for three replicas`);
  });
}
