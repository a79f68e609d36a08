/**
 * Replicas coordinated through a real engine (PostgreSQL, then Redis: one body run per engine).
 * Each replica is a real snapshot store over its own Git source on one real repository, its
 * listings counted; the coordinators talk only through the engine. Proves: one leader; a revision
 * the leader found reaches the follower by notification and the follower serves exactly it
 * without listing the source; a refresh asked on the follower reaches the leader; the leader's
 * session killed → the other leads and the first rejoins as follower; engine stopped → every
 * replica standalone, unhealthy, polling on its own; engine back → rejoined without restart.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import tap from 'tap';
import { loadConfig } from '../../../src/config/load.js';
import { startHttpServer } from '../../../src/server/listen.js';
import { createGitSource } from '../../../src/sources/git/source.js';
import { GIT_SOURCE_DEFAULTS, STORE_DEFAULTS } from '../../support/config-defaults.js';
import type { Source } from '../../../src/sources/types.js';
import { createCoordinator, type Coordinator } from '../../../src/store/coordination/coordinator.js';
import { coordinatedStore } from '../../../src/store/coordination/coordinated-store.js';
import type { CoordinationEngine } from '../../../src/store/coordination/engine.js';
import { createSnapshotStore, type ManagedSnapshotStore } from '../../../src/store/snapshot-store.js';
import type { SnapshotStore } from '../../../src/store/types.js';
import { gitFixture, gitUnavailableReason, greeting } from '../../support/git-fixture.js';
import { createTestRepo, type TestRepo } from '../../support/git-repo.js';
import { isCI, reportMissing } from '../../support/requirements.js';
import { ENGINES } from './engines.js';

const hello = { 'features.yml': gitFixture('hello.yml') };
const bonjour = { 'features.yml': gitFixture('bonjour.yml') };
const broken = { 'features.yml': gitFixture('broken.yml') };

const TICK_MS = 100;
/** Long enough that a loaded machine's late tick does not lose the lease; a killed leader's is waited out. */
const LEASE_MS = 2000;

interface Replica {
  readonly name: string;
  readonly store: ManagedSnapshotStore;
  readonly served: SnapshotStore;
  readonly coordinator: Coordinator;
  /** Listings of the source this replica made. */
  listings(): number;
}

async function waitFor(what: string, cond: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function startReplica(
  t: { teardown(fn: () => unknown): void },
  name: string,
  repo: TestRepo,
  engine: CoordinationEngine,
  opts: { repository?: string; maxLagMs?: number; backstopMs?: number } = {},
): Promise<Replica> {
  const git = createGitSource({ ...GIT_SOURCE_DEFAULTS, repository: opts.repository ?? repo.gitdir });
  let listings = 0;
  const source: Source = {
    ...git,
    refs: () => {
      listings++;
      return git.refs();
    },
  };
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source, defaultReference: 'main', pollIntervalMs: 200 });
  await store.start();
  const coordinator = createCoordinator({ store, engine, logger: { debug() {}, info() {}, warn() {}, error() {} }, tickMs: TICK_MS, backstopMs: opts.backstopMs ?? 3_600_000, ...(opts.maxLagMs !== undefined ? { maxLagMs: opts.maxLagMs } : {}) });
  const served = coordinatedStore(store, coordinator);
  await coordinator.start();
  t.teardown(() => served.close());
  return { name, store, served, coordinator, listings: () => listings };
}

/** An engine a test can make unreachable for one replica only (as if its process were gone). */
function killable(engine: CoordinationEngine): CoordinationEngine & { dead: boolean } {
  const k = {
    type: engine.type,
    dead: false,
    open: (handlers: Parameters<CoordinationEngine['open']>[0]) =>
      k.dead ? Promise.reject(new Error('this replica is down')) : engine.open(handlers),
  };
  return k;
}

const role = (r: Replica) => r.coordinator.status().role;
const revisionOf = (r: Replica) => r.store.get('main')?.revision;

if (gitUnavailableReason() !== undefined) reportMissing(tap, 'git', gitUnavailableReason() as string);

for (const kind of ENGINES) {
  const reason = kind.unavailableReason() ?? gitUnavailableReason();
  tap.test(`coordination through ${kind.name}`, { skip: reason !== undefined && !isCI() ? reason : false }, async (t) => {
    if (reason !== undefined) reportMissing(t, kind.name, reason);
    const kit = await kind.start({ leaseMs: LEASE_MS });
    t.teardown(() => kit.close());
    const repo = await createTestRepo(t);
    const c1 = await repo.commit('main', hello);

    const aEngine = killable(kit.engine());
    const a = await startReplica(t, 'a', repo, aEngine);
    await waitFor('a leads', () => role(a) === 'leader');
    const bEngine = killable(kit.engine());
    const b = await startReplica(t, 'b', repo, bEngine);
    /** Who leads now (the lease may move under load; the tests do not assume it stays with a). */
    const pair = () =>
      role(a) === 'leader' ? { leader: a, follower: b, leaderEngine: aEngine } : { leader: b, follower: a, leaderEngine: bEngine };
    await waitFor('b follows', () => role(b) === 'follower');
    t.same(a.coordinator.status(), { type: kind.name, role: 'leader', healthy: true });
    t.same(b.coordinator.status(), { type: kind.name, role: 'follower', healthy: true });
    await waitFor('b knows the cluster revision', () => b.coordinator.clusterRevisions().get('main')?.revision === c1);
    const mainRow = b.served.status().find((s) => s.reference === 'main');
    t.equal(mainRow?.clusterRevision, c1, 'the status shows the cluster revision beside the local one');
    t.equal(mainRow?.revision?.id, c1);

    await t.test('a revision the leader finds reaches the follower, which serves exactly it without listing', async (t) => {
      const before = b.listings();
      const c2 = await repo.commit('main', bonjour);
      await waitFor('a serves c2', () => revisionOf(a) === c2);
      await waitFor('b serves c2', () => revisionOf(b) === c2);
      t.equal(greeting(b.store.get('main')), greeting(a.store.get('main')));
      t.equal(b.coordinator.clusterRevisions().get('main')?.revision, c2);
      t.equal(b.listings(), before, 'the follower did not list the source');
    });

    await t.test('an invalid revision is rejected by the leader and never published; every replica keeps the last good', async (t) => {
      const good = revisionOf(b);
      const bad = await repo.commit('main', broken);
      await waitFor('a rejected it', () => a.store.status().find((s) => s.reference === 'main')?.lastRejected?.revision.id === bad);
      t.equal(revisionOf(a), good, 'a still serves the last good revision');
      t.equal(b.coordinator.clusterRevisions().get('main')?.revision, good, 'the cluster revision is still the good one');
      t.equal(revisionOf(b), good, 'b still serves the last good revision');
    });

    await t.test('garbage on the channel is ignored; a well-formed notification of a revision that cannot be read never replaces the good snapshot', async (t) => {
      const good = revisionOf(b);
      const known = b.coordinator.clusterRevisions().get('main');
      for (const payload of ['not json', '[]', '{"reference":"main","revision":"","sequence":99999}', '{"reference":"main","revision":"x\\u0000y","sequence":99999}', '{"reference":"main","revision":"abc","sequence":-1}']) {
        await kit.notifyRaw(payload);
      }
      const missing = 'f'.repeat(40);
      await kit.notifyRaw(JSON.stringify({ reference: 'main', revision: missing, sequence: (known?.sequence ?? 0) + 1 }));
      await waitFor('b tried the well-formed one', () => b.store.status().find((s) => s.reference === 'main')?.lastError !== undefined);
      t.equal(revisionOf(b), good, 'b still serves the last good revision');
      t.equal(b.coordinator.clusterRevisions().get('main')?.revision, missing, 'only the well-formed notification was taken');
      t.not(known, undefined);
    });

    await t.test('a refresh asked on the follower is made by the leader and reaches every replica', async (t) => {
      // The leader polls every 200 ms anyway; the request proves the channel, so a stopped poll timer makes it the only path.
      const { leader, follower } = pair();
      leader.store.setPolling(false);
      const c3 = await repo.commit('main', hello);
      await follower.served.refresh?.();
      await waitFor('the leader serves c3', () => revisionOf(leader) === c3);
      await waitFor('the follower serves c3', () => revisionOf(follower) === c3);
      leader.store.setPolling(true);
      t.pass('served on both');
    });

    await t.test('a lost notification: the backstop reads the table and the follower serves the revision', async (t) => {
      const d = await startReplica(t, 'd', repo, kit.engine(), { backstopMs: 300 });
      await waitFor('d follows', () => role(d) === 'follower');
      const { leader, follower } = pair();
      leader.store.setPolling(false); // the leader does not publish it itself
      const next = await repo.commit('main', greeting(d.store.get('main')) === 'hello' ? bonjour : hello);
      const before = d.listings();
      await kit.writeRowSilently('main', next);
      await waitFor('d serves it', () => revisionOf(d) === next);
      t.equal(d.listings(), before, 'read from the table, not from a listing');
      await d.coordinator.close();
      // The other follower missed it too (the table already had it when the leader published): the next change brings both in step.
      leader.store.setPolling(true);
      const after = await repo.commit('main', greeting(d.store.get('main')) === 'hello' ? bonjour : hello);
      await waitFor('the leader serves the next change', () => revisionOf(leader) === after);
      await waitFor('the follower serves the next change', () => revisionOf(follower) === after);
    });

    await t.test("the leader's session killed: the follower leads, the old leader rejoins as follower", async (t) => {
      // The leader's process "dies": its session is ended by the server and it cannot reach the engine again until revived.
      const { leader, follower, leaderEngine } = pair();
      leaderEngine.dead = true;
      await kit.killLeader();
      await waitFor('the follower leads', () => role(follower) === 'leader');
      t.same(leader.coordinator.status(), { type: kind.name, role: 'standalone', healthy: false }, 'the old leader is on its own meanwhile');
      leaderEngine.dead = false;
      await waitFor('the old leader follows', () => role(leader) === 'follower' && leader.coordinator.status().healthy);
      const c4 = await repo.commit('main', bonjour);
      const before = leader.listings();
      await waitFor('the new leader serves c4', () => revisionOf(follower) === c4);
      await waitFor('the new follower serves c4', () => revisionOf(leader) === c4);
      t.equal(leader.listings(), before, 'the new follower did not list the source');
    });

    await t.test('engine stopped: every replica polls on its own and says so; engine back: rejoined', async (t) => {
      await kit.stop();
      await waitFor('both standalone', () => role(a) === 'standalone' && role(b) === 'standalone');
      t.same(a.served.coordination?.(), { type: kind.name, role: 'standalone', healthy: false });
      t.same(b.served.coordination?.(), { type: kind.name, role: 'standalone', healthy: false });
      const c5 = await repo.commit('main', hello);
      await waitFor('a serves c5 by its own poll', () => revisionOf(a) === c5);
      await waitFor('b serves c5 by its own poll', () => revisionOf(b) === c5);

      await kit.start();
      await waitFor('one leader and one follower again', () => {
        const roles = [role(a), role(b)].sort();
        return roles[0] === 'follower' && roles[1] === 'leader';
      });
      t.ok(a.coordinator.status().healthy && b.coordinator.status().healthy, 'both healthy');
      const [leader, follower] = role(a) === 'leader' ? [a, b] : [b, a];
      const c6 = await repo.commit('main', bonjour);
      await waitFor('the leader serves c6', () => revisionOf(leader) === c6);
      const before = follower.listings();
      await waitFor('the follower serves c6', () => revisionOf(follower) === c6);
      t.equal(follower.listings(), before, 'the follower follows again instead of listing');
      t.equal(follower.served.status().find((s) => s.reference === 'main')?.clusterRevision, c6);
    });

    await t.test('a follower that cannot build the cluster revision lags, and says so past max_lag', async (t) => {
      // c reads a copy of the repository made now: commits made after it are not there.
      const copy = mkdtempSync(join(tmpdir(), 'vexil-lagging-'));
      t.teardown(() => rmSync(copy, { recursive: true, force: true }));
      cpSync(repo.gitdir, copy, { recursive: true });
      const c = await startReplica(t, 'c', repo, kit.engine(), { repository: copy, maxLagMs: 1 });
      await waitFor('c follows', () => role(c) === 'follower');
      const before = c.served.status().find((s) => s.reference === 'main');
      t.equal(before?.lagging, undefined, 'in step: not lagging');
      const served = revisionOf(c);
      const next = await repo.commit('main', served === undefined || greeting(c.store.get('main')) === 'hello' ? bonjour : hello);
      await waitFor('c knows the cluster revision', () => c.coordinator.clusterRevisions().get('main')?.revision === next);
      await waitFor('c reports lagging', () => c.served.status().find((s) => s.reference === 'main')?.lagging !== undefined);
      await waitFor('c failed to read it', () => c.served.status().find((s) => s.reference === 'main')?.lastError !== undefined);
      const row = c.served.status().find((s) => s.reference === 'main');
      t.equal(row?.revision?.id, served, 'c still serves its last good revision');
      t.equal(row?.clusterRevision, next);
      t.match(row?.lagging, /has served another revision than the cluster's/);
      t.ok(row?.lastError, 'the failed read is in lastError');

      // What the server makes of it: /ready 503 with the reason, /meta/snapshots and the metrics.
      const server = await startHttpServer({
        store: c.served,
        config: loadConfig({ env: {} }),
        logger: pino({ level: 'silent' }),
        storageType: 'git',
        version: { version: '1.2.3' },
        host: '127.0.0.1',
        port: 0,
      });
      t.teardown(() => server.close());
      const ready = await fetch(`${server.url}/ready`);
      t.equal(ready.status, 503, '/ready: not ready while lagging past max_lag');
      t.match(((await ready.json()) as { message: string }).message, /has served another revision than the cluster's/);
      const snapshots = (await (await fetch(`${server.url}/meta/snapshots`)).json()) as {
        coordination: unknown;
        references: Array<{ reference: string; clusterRevision?: string; lagging?: string }>;
      };
      t.same(snapshots.coordination, { type: kind.name, role: 'follower', healthy: true });
      const main = snapshots.references.find((r) => r.reference === 'main');
      t.equal(main?.clusterRevision, next);
      t.type(main?.lagging, 'string');
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      t.match(metrics, /vexil_coordination_healthy 1/);
      t.match(metrics, /vexil_coordination_role\{role="follower"\} 1/);
      t.match(metrics, /vexil_coordination_role\{role="leader"\} 0/);
    });

    await t.test('a reference the leader builds is published; once deleted upstream it is withdrawn from the table', async (t) => {
      const leader = role(a) === 'leader' ? a : b;
      const feature = await repo.commit('feature', bonjour);
      await leader.store.refresh(); // a fresh listing that has the new branch
      await leader.served.resolve('feature');
      const tableRows = async () => {
        const s = await kit.engine().open({ onRevision() {}, onRefreshRequest() {}, onLost() {} });
        try {
          return await s.revisions();
        } finally {
          await s.close();
        }
      };
      await waitFor('published', () => leader.coordinator.clusterRevisions().get('feature')?.revision === feature);
      t.ok((await tableRows()).some((r) => r.reference === 'feature' && r.revision === feature), 'in the table');
      await repo.deleteBranch('feature');
      await waitFor('dropped by the leader', () => leader.store.get('feature') === undefined);
      let rows = await tableRows();
      for (let i = 0; i < 100 && rows.some((r) => r.reference === 'feature'); i++) {
        await new Promise((r) => setTimeout(r, 20));
        rows = await tableRows();
      }
      t.notOk(rows.some((r) => r.reference === 'feature'), 'withdrawn from the table');
      t.ok(rows.some((r) => r.reference === 'main'), 'the others stay');
    });

    await t.test('closing the leader hands leadership over at once', async (t) => {
      const [leader, follower] = role(a) === 'leader' ? [a, b] : [b, a];
      await leader.coordinator.close();
      await waitFor('the follower leads', () => role(follower) === 'leader');
      t.pass(`${follower.name} leads`);
    });
  });
}
