/**
 * Three real `vexil serve` replicas coordinated through one real engine (PostgreSQL, then Redis:
 * one body per engine) following a real `git http-backend`: one leads and two follow; a push plus
 * `POST /meta/refresh` on a follower reaches every replica (`X-Vexil-Revision`) and each replica's
 * SSE clients, told only once that replica serves it; the leader
 * SIGKILLed → another leads; the engine stopped → every replica standalone, unhealthy, still
 * ready and serving (not one evaluation fails from the engine's stop to the rejoin), and following
 * the push by polling on its own; the engine back → rejoined without a restart. And the workers of one replica (`server.workers: 2`) are two participants: one
 * leads, the other follows.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import tap from 'tap';
import { startServe, type ServeProcess } from '../auth/process.js';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { isCI, reportMissing } from '../support/requirements.js';
import { StreamClient } from '../support/stream-client.js';
import { writeServeConfig } from '../support/serve-config.js';
import { ENGINES } from '../store/coordination/engines.js';
import { roles, servedRevision, snapshots, waitFor } from './replicas.js';

const hello = { 'features.yml': gitFixture('hello.yml') };
const bonjour = { 'features.yml': gitFixture('bonjour.yml') };

const gitReason = gitUnavailableReason();
for (const kind of ENGINES) {
  const reason = kind.unavailableReason() ?? gitReason;
  tap.test(`three vexil serve replicas coordinated through ${kind.name}`, { skip: reason !== undefined && !isCI() ? reason : false }, async (t) => {
    if (reason !== undefined) reportMissing(t, kind.name, reason);
    const kit = await kind.start({ leaseMs: 1000 });
    t.teardown(() => kit.close());
    const git = await startGitFixture(t);
    const c1 = await git.repo.commit('main', hello);

    const replicas: ServeProcess[] = [];
    for (const name of ['a', 'b', 'c']) {
      const { dir, config } = writeServeConfig(t, `vexil-replica-${name}-`, () => [
        `storage: { type: git, git: { repository: ${JSON.stringify(git.url)}, poll_interval: 2s, cache_dir: cache } }`,
        `cluster: { coordination: { type: ${kind.name}, ${kind.name}: { url: ${JSON.stringify(kit.url)} } } }`,
      ]);
      replicas.push(await startServe(t, config, dir));
    }
    await waitFor('one leader, two followers', async () => (await roles(replicas)).sort().join() === 'follower,follower,leader');
    for (const r of replicas) {
      const s = await snapshots(r);
      t.equal(s?.coordination?.healthy, true, 'healthy');
      t.equal(s?.references[0]?.clusterRevision, c1, 'the cluster revision is shown beside the local one');
      t.equal(await servedRevision(r), c1);
    }

    // One SSE client per replica: each is told of the push by its own replica, once that replica serves it.
    const streams: StreamClient[] = [];
    t.teardown(() => streams.forEach((s) => s.close()));
    for (const r of replicas) streams.push(await StreamClient.open('sse', `${r.url}/evaluate/v1/namespaces/default/stream`));
    await Promise.all(streams.map((s) => s.until(() => s.events.length === 1, 'the first state')));
    const servedWhenTold: Array<Promise<string | null>> = streams.map((s, i) =>
      s.until(() => s.events.length === 2, 'the push').then(() => servedRevision(replicas[i]!)),
    );

    const c2 = await git.repo.commit('main', bonjour);
    const rs = await roles(replicas);
    const follower = replicas[rs.indexOf('follower')]!;
    const refreshed = await fetch(`${follower.url}/meta/refresh`, { method: 'POST' });
    t.equal(refreshed.status, 200, 'a refresh on a follower is accepted');
    await refreshed.arrayBuffer();
    await waitFor('every replica serves the push', async () => {
      for (const r of replicas) if ((await servedRevision(r)) !== c2) return false;
      return true;
    });
    t.pass('every replica answers X-Vexil-Revision of the push');
    t.same(await Promise.all(servedWhenTold), [c2, c2, c2], "each replica's stream client was told once that replica served the push");

    const leaderIndex = (await roles(replicas)).indexOf('leader');
    const leader = replicas[leaderIndex]!;
    await leader.stop('SIGKILL');
    const rest = replicas.filter((r) => r !== leader);
    await waitFor('another replica leads', async () => (await roles(rest)).sort().join() === 'follower,leader');
    t.pass('another replica leads after the leader was SIGKILLed');

    // Evaluations on the remaining replicas, back to back, from before the engine stops until it is
    // back and rejoined: not one may fail.
    const evaluations = { sent: 0, failed: [] as string[] };
    let evaluating = true;
    const evaluate = async (r: ServeProcess) => {
      while (evaluating) {
        evaluations.sent++;
        try {
          const res = await fetch(`${r.url}/evaluate/v1/variant`, { method: 'POST', body: JSON.stringify({ flagKey: 'greeting', entityId: `e${evaluations.sent}` }) });
          const body = await res.text();
          if (res.status !== 200) evaluations.failed.push(`${res.status} ${body}`);
        } catch (err) {
          evaluations.failed.push(String(err));
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    const evaluators = rest.map(evaluate);

    await kit.stop();
    await waitFor('every replica polls on its own', async () => {
      for (const r of rest) {
        const s = await snapshots(r);
        if (s?.coordination?.role !== 'standalone' || s.coordination.healthy) return false;
      }
      return true;
    });
    const c3 = await git.repo.commit('main', hello);
    await waitFor('every replica follows the push on its own', async () => {
      for (const r of rest) if ((await servedRevision(r)) !== c3) return false;
      return true;
    });
    t.pass('ready and serving the push while the engine is down');

    await kit.start();
    await waitFor('rejoined: one leader, one follower, healthy', async () => {
      const states = await Promise.all(rest.map(snapshots));
      return (
        states.every((s) => s?.coordination?.healthy === true) &&
        states.map((s) => s?.coordination?.role).sort().join() === 'follower,leader'
      );
    });
    evaluating = false;
    await Promise.all(evaluators);
    t.ok(evaluations.sent > 20, `${evaluations.sent} evaluations while the engine was down and coming back`);
    t.same(evaluations.failed, [], 'not one of them failed');
    const c4 = await git.repo.commit('main', bonjour);
    await waitFor('every replica serves the next push', async () => {
      for (const r of rest) if ((await servedRevision(r)) !== c4) return false;
      return true;
    });
    t.pass('rejoined without a restart');
  });
}

for (const kind of ENGINES) {
  const reason = kind.unavailableReason() ?? gitReason;
  tap.test(`the workers of one replica coordinate through ${kind.name}: one leads, the other follows`, { skip: reason !== undefined && !isCI() ? reason : false }, async (t) => {
    if (reason !== undefined) reportMissing(t, kind.name, reason);
    const kit = await kind.start({ leaseMs: 1000 });
    t.teardown(() => kit.close());
    const git = await startGitFixture(t);
    await git.repo.commit('main', hello);
    const { dir, config } = writeServeConfig(t, 'vexil-workers-', () => [
      `storage: { type: git, git: { repository: ${JSON.stringify(git.url)}, poll_interval: 2s, cache_dir: cache } }`,
      `cluster: { coordination: { type: ${kind.name}, ${kind.name}: { url: ${JSON.stringify(kit.url)} } } }`,
    ]);
    writeFileSync(config, readFileSync(config, 'utf8').replace('http_port: 0 }', 'http_port: 0, workers: 2 }'));
    const replica = await startServe(t, config, dir);
    await replica.waitForLog((e) => String(e.msg).startsWith('following the cluster'));
    const leading = replica.entries().filter((e) => String(e.msg).startsWith('leading the cluster'));
    t.equal(leading.length, 1, 'one worker leads');
    const c2 = await git.repo.commit('main', bonjour);
    // Connections go to either worker: every answer is the push once both serve it.
    await waitFor('both workers serve the push', async () => {
      for (let i = 0; i < 10; i++) if ((await servedRevision(replica)) !== c2) return false;
      return true;
    });
    t.pass('both workers serve the push');
  });
}
