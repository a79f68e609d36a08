/**
 * What a request naming a reference may cost, against a real `git http-backend` on loopback: names
 * not found are remembered until the next poll, commit ids are looked up without listing the
 * server again per request, references built on request and the builds waiting are capped (503
 * with Retry-After beyond), a poll never waits behind on-demand builds, commit ids can be refused,
 * and the metric series of a dropped reference go with it. The clock is injected; polls are
 * triggered with refresh(), so nothing here depends on timing.
 */
import { pino } from 'pino';
import tap from 'tap';
import { Code, VexilError } from '../../src/errors.js';
import { createServerMetrics, OTHER_REFERENCE } from '../../src/server/pipeline/metrics.js';
import { gitFixture, gitUnavailableReason, greeting, startGitFixture } from '../support/git-fixture.js';
import { mulberry32 } from '../support/prng.js';
import { testsNeeding } from '../support/requirements.js';

// Outside CI every test here skips with the reason when git is missing; under CI it fails.
const t = testsNeeding(tap, 'git', gitUnavailableReason());

const hello = () => ({ 'features.yml': gitFixture('hello.yml') });
const bonjour = { 'features.yml': gitFixture('bonjour.yml') };

const randomHex = (random: () => number) => Array.from({ length: 40 }, () => Math.floor(random() * 16).toString(16)).join('');

/** The error a promise rejects with. */
const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as VexilError);

t.test('a name not found is remembered until the next poll: no upstream request when asked again', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const store = g.store({ now: () => new Date(clock) });
  await store.start();
  clock += 5000; // the start listing is no longer fresh

  g.server.requests.length = 0;
  await t.rejects(store.resolve('nope'), { code: Code.NotFound, message: 'reference "nope" not found' });
  t.equal(g.server.requests.length, 1, 'one listing to look for it');
  clock += 5000;
  const again = [];
  for (let i = 0; i < 20; i++) again.push(await failure(store.resolve('nope')));
  t.ok(again.every((e) => e?.code === Code.NotFound));
  t.equal(g.server.requests.length, 1, 'asked again: answered from the negative cache');

  // Many different made-up names while the clock stands still: one listing serves them all.
  const names = Array.from({ length: 500 }, (_, i) => `made-up/${i}`);
  const answers = await Promise.all(names.map((n) => failure(store.resolve(n))));
  t.ok(answers.every((e) => e?.code === Code.NotFound));
  t.equal(g.server.requests.length, 2, 'a listing is made on requests\' behalf at most once per second');

  const huge = 'h'.repeat(1024 * 1024);
  t.equal((await failure(store.resolve(huge)))?.code, Code.NotFound, 'a 1 MiB name: 404');
  t.equal((await failure(store.resolve(huge)))?.code, Code.NotFound, 'again');
  t.equal(g.server.requests.length, 2, 'nothing more upstream');

  await g.repo.commit('nope', bonjour, { parent: c1 });
  await store.refresh();
  t.equal(greeting(await store.resolve('nope')), 'bonjour', 'the next poll forgets the names not found');
});

t.test('commit ids: looked up without listing the server per request; an unknown one is remembered', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  const c2 = await g.repo.commit('feature', bonjour, { parent: c1 });
  const source = g.source();
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const store = g.store({ source, now: () => new Date(clock) });
  await store.start();
  clock += 5000;

  const random = mulberry32(11);
  const ids = Array.from({ length: 300 }, () => randomHex(random));
  g.server.requests.length = 0;
  const listingsBefore = source.stats().listings;
  const first = await Promise.all(ids.map((id) => failure(store.resolve(id))));
  t.ok(first.every((e) => e?.code === Code.NotFound), 'every random commit id is 404');
  t.equal(source.stats().listings - listingsBefore, 1, 'one listing for all of them');
  t.equal(source.stats().fetches, 2, 'main at start, then one fetch of everything for this listing');
  const upstream = g.server.requests.length;
  t.ok(upstream <= 3, `300 unknown commit ids: ${upstream} requests to the git server (listing + one fetch)`);

  clock += 5000;
  const again = [];
  for (const id of ids.slice(0, 50)) again.push(await failure(store.resolve(id)));
  t.ok(again.every((e) => e?.code === Code.NotFound));
  t.equal(g.server.requests.length, upstream, 'the same ids again: nothing upstream');

  const byCommit = await store.resolve(c2);
  t.equal(byCommit.revision, c2, 'a real commit id is still served');
  t.equal(source.stats().listings - listingsBefore, 2, 'with at most one more listing (the last one was older than a second)');
});

t.test('max_references: one more reference built on request is a 503 with Retry-After; default and prebuilt ones do not count', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  for (const b of ['a', 'b', 'c', 'release-1']) await g.repo.commit(b, bonjour, { parent: c1 });
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const store = g.store({ now: () => new Date(clock), maxReferences: 2, prebuild: ['main', 'release-*'], idleTtlMs: 60_000, pollIntervalMs: 30_000 });
  await store.start();
  await store.settled();
  t.ok(store.get('release-1'), 'prebuilt');

  await store.resolve('a');
  clock += 10_000;
  await store.resolve('b');
  g.server.requests.length = 0;
  const refused = await failure(store.resolve('c'));
  t.equal(refused?.code, Code.Unavailable);
  t.match(refused?.message, /reference "c" cannot be built now: the server already keeps 2 references built on request; try again later/);
  t.equal(refused?.headers?.['Retry-After'], '50', 'until the least recently used one (a, used 10 s ago) has been idle for idle_ttl (60 s)');
  t.equal(g.server.requests.length, 0, 'nothing fetched for it');
  t.equal(store.get('c'), undefined, 'not built');
  t.ok(store.get('a') && store.get('b'), 'the kept ones keep serving');

  clock += 55_000; // a idle for 65 s, b for 55 s
  await store.refresh();
  t.equal(store.get('a'), undefined, 'a dropped as idle');
  t.equal(greeting(await store.resolve('c')), 'bonjour', 'its place is free for c');
});

t.test('max_pending_builds: one more distinct build while the queue is full is a 503; the same reference shares its build', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  for (const b of ['a', 'b', 'c']) await g.repo.commit(b, bonjour, { parent: c1 });
  const store = g.store({ maxPendingBuilds: 2 });
  await store.start();

  // Hold every request to the server: builds stay pending.
  let release: () => void = () => {};
  const held = new Promise<undefined>((r) => (release = () => r(undefined)));
  g.server.setHook(() => held);
  const a = store.resolve('a');
  const aAgain = store.resolve('a');
  const b = store.resolve('b');
  const refused = await failure(store.resolve('c'));
  t.equal(refused?.code, Code.Unavailable);
  t.match(refused?.message, /reference "c" cannot be built now: 2 builds are already waiting; try again later/);
  t.equal(refused?.headers?.['Retry-After'], '1');
  g.server.setHook(undefined);
  release();
  t.equal(await a, await aAgain, 'concurrent requests for one reference share its build');
  t.ok(await b);
  t.equal(greeting(await store.resolve('c')), 'bonjour', 'built once the queue has room');
});

t.test('a poll runs before every on-demand build waiting in the queue', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  for (const b of ['a', 'b', 'c', 'd']) await g.repo.commit(b, bonjour, { parent: c1 });
  const store = g.store();
  await store.start();
  const order: string[] = [];
  store.subscribe((e) => void (e.type === 'swap' && order.push(e.reference)));

  let release: () => void = () => {};
  const held = new Promise<undefined>((r) => (release = () => r(undefined)));
  const reached = new Promise<void>((r) => g.server.setHook(() => (r(), held)));
  const builds = ['a', 'b', 'c', 'd'].map((ref) => store.resolve(ref));
  await reached; // the build of a waits on the (held) server; b, c and d wait in the queue
  const c2 = await g.repo.commit('main', bonjour);
  const poll = store.refresh();
  g.server.setHook(undefined);
  release();
  await Promise.all([poll, ...builds]);
  t.equal(store.get()?.revision, c2);
  t.same(order, ['a', 'main', 'b', 'c', 'd'], 'the poll ran right after the build that was running, before the 3 waiting');
});

t.test('allowUnlistedReferences false: a commit id is 404 at no cost upstream; branches, tags and the default still work', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  await g.repo.commit('feature', bonjour, { parent: c1 });
  const store = g.store({ allowUnlistedReferences: false });
  await store.start();
  g.server.requests.length = 0;
  const err = await failure(store.resolve(c1));
  t.equal(err?.code, Code.NotFound);
  t.equal(err?.message, `reference "${c1}" not found: this server does not serve commit ids, only branches and tags`);
  t.equal(g.server.requests.length, 0, 'nothing asked upstream');
  t.equal(greeting(await store.resolve('feature')), 'bonjour');

  // The configured default reference may be a commit id all the same.
  const pinned = g.store({ allowUnlistedReferences: false, defaultReference: c1 });
  await pinned.start();
  t.equal(pinned.get()?.revision, c1);
});

t.test('metrics: a dropped reference\'s series move under one label; the series stay as many as the references kept', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  const branches = Array.from({ length: 6 }, (_, i) => `b${i}`);
  for (const b of branches) await g.repo.commit(b, bonjour, { parent: c1 });
  await g.repo.commit('bad', { 'features.yml': gitFixture('broken.yml') }, { parent: c1 });
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const store = g.store({ now: () => new Date(clock), idleTtlMs: 60_000, logger: pino({ level: 'silent' }) });
  const metrics = createServerMetrics(store, { defaultMetrics: false });
  t.teardown(() => metrics.dispose());
  await store.start();
  for (const b of branches) await store.resolve(b);
  await t.rejects(store.resolve('bad'), { code: Code.FailedPrecondition });
  const lines = async () => (await metrics.registry.metrics()).split('\n').filter((l) => l.includes('reference="'));
  const before = await lines();
  t.ok(before.includes('vexil_snapshot_reloads_total{reference="b3"} 1'));
  t.ok(before.includes('vexil_snapshot_reload_failures_total{reference="bad",kind="rejected"} 1'));

  clock += 61_000;
  await store.resolve('b0'); // used: kept
  await store.refresh();
  const after = await lines();
  const references = new Set(after.map((l) => /reference="([^"]*)"/.exec(l)?.[1]));
  t.same([...references].sort(), [OTHER_REFERENCE, 'b0', 'main'].sort(), 'only kept references, and one label for the rest');
  t.ok(after.includes(`vexil_snapshot_reloads_total{reference="${OTHER_REFERENCE}"} 5`), 'the five dropped branches\' reloads');
  t.ok(after.includes(`vexil_snapshot_reload_failures_total{reference="${OTHER_REFERENCE}",kind="rejected"} 1`));
  t.ok(after.includes('vexil_snapshot_reloads_total{reference="main"} 1'));
});
