/**
 * One store, many references: the snapshot store over the git source, against a real
 * `git http-backend` on loopback. Polls are triggered with refresh() (the timer-driven poll has
 * its own test), so nothing here depends on timing.
 */
import tap from 'tap';
import { VexilError } from '../../src/errors.js';
import type { Revision, Source } from '../../src/sources/types.js';
import type { StoreEvent } from '../../src/store/types.js';
import { gitFixture, gitUnavailableReason, greeting, startGitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';
import { nextEvent } from './temp-state.js';
import { STORE_DEFAULTS } from '../support/config-defaults.js';

// Outside CI, every test here skips with the reason when git is missing; under CI it fails.
const t = testsNeeding(tap, 'git', gitUnavailableReason());

const hello = () => ({ 'features.yml': gitFixture('hello.yml'), 'segments.features.yml': gitFixture('segments.yml') });
const bonjour = { 'features.yml': gitFixture('bonjour.yml') };
const broken = { 'features.yml': gitFixture('broken.yml') };

/** Fetch exchanges seen by the server (isomorphic-git's fetch advertises with protocol v1). */
const fetchesSeen = (g: Awaited<ReturnType<typeof startGitFixture>>) =>
  g.server.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/info/refs') && r.gitProtocol === undefined).length;

t.test('push to main is served after the next poll; unchanged polls build nothing', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  const store = g.store();
  await store.start();
  t.equal(greeting(store.get()), 'hello');
  t.equal(store.get()?.revision, c1);
  t.equal(store.get()?.reference, 'main');

  g.server.requests.length = 0;
  await store.refresh();
  t.equal(g.server.requests.length, 1, 'a poll with nothing new is one HTTP round trip');

  const c2 = await g.repo.commit('main', bonjour, { message: 'Say bonjour' });
  const swapped = nextEvent(store, 'swap');
  await store.refresh();
  t.equal((await swapped).snapshot.revision, c2);
  t.equal(greeting(store.get()), 'bonjour');
  const [status] = store.status();
  t.match(status, { reference: 'main', revision: { id: c2, ref: 'main', meta: { message: 'Say bonjour', author: /Ada Lovelace/ } } });
  t.match(status?.checkedAt, /^\d{4}-\d\d-\d\dT/);
});

t.test('branches, tags and commit ids are served by reference, built once on first request', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  const c2 = await g.repo.commit('feature/x', bonjour, { parent: c1 });
  await g.repo.tag('v1', c1, 'release v1');
  const store = g.store();
  await store.start();
  t.equal(store.get('feature/x'), undefined, 'not built before a request');

  const feature = await store.resolve('feature/x');
  t.equal(greeting(feature), 'bonjour');
  t.equal(feature.revision, c2);
  t.equal(feature.reference, 'feature/x');
  t.equal(store.get('feature/x'), feature, 'then served without I/O');
  t.equal(greeting(store.get('main')), 'hello', 'main unaffected');

  const tag = await store.resolve('v1');
  t.equal(tag.revision, c1);
  const commit = await store.resolve(c2);
  t.equal(commit.revision, c2);
  t.equal(commit.reference, c2);
  t.same(
    store.status().map((s) => s.reference),
    ['main', c2, 'feature/x', 'v1'],
    'every built reference is listed, the default first',
  );

  const err = (await store.resolve('nope').catch((e: unknown) => e)) as VexilError;
  t.ok(err instanceof VexilError);
  t.equal(err.code, 5);
  t.equal(err.message, 'reference "nope" not found');
  const unknownCommit = (await store.resolve('f'.repeat(40)).catch((e: unknown) => e)) as VexilError;
  t.equal(unknownCommit.message, `reference "${'f'.repeat(40)}" not found`);
});

t.test('a branch created after the last poll is servable; a deleted branch is dropped, the others stay', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const store = g.store({ now: () => new Date(clock) });
  await store.start();
  await t.rejects(store.resolve('late'), { code: 5 }, 'not pushed yet');
  await g.repo.commit('late', bonjour, { parent: c1 });
  clock += 1000; // a listing is trusted for 1 s for unknown names
  g.server.requests.length = 0;
  await t.rejects(store.resolve('late'), { code: 5 }, 'a name found missing stays 404 until the next poll');
  t.equal(g.server.requests.length, 0, 'answered from the negative cache');
  await store.refresh();
  t.equal(greeting(await store.resolve('late')), 'bonjour', 'the poll forgets the missing names');
  const other = await g.repo.commit('other', bonjour, { parent: c1 });
  clock += 1000;
  t.equal((await store.resolve('other')).revision, other);

  await g.repo.deleteBranch('late');
  await store.refresh();
  t.equal(store.get('late'), undefined);
  await t.rejects(store.resolve('late'), { code: 5, message: 'reference "late" not found' });
  t.equal(store.get('other')?.revision, other, 'other branches keep serving');
  t.equal(greeting(store.get()), 'hello');
  t.same(
    store.status().map((s) => s.reference),
    ['main', 'other'],
  );
});

t.test('a branch moved since the last listing is served at its newest commit on first request', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  await g.repo.commit('feature', bonjour, { parent: c1 });
  const store = g.store();
  await store.start(); // lists feature at its first commit
  const newest = await g.repo.commit('feature', { 'features.yml': gitFixture('hello.yml') }, { message: 'newer' });
  const snap = await store.resolve('feature');
  t.equal(snap.revision, newest, 'the fetch brought the newest tip, which is what is built');
  t.equal(greeting(snap), 'hello');
  await store.refresh();
  t.equal(store.get('feature'), snap, 'the next poll finds it current: no rebuild');
});

t.test('a force push is followed', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  await g.repo.commit('feature', bonjour, { parent: c1 });
  const store = g.store();
  await store.start();
  t.equal(greeting(await store.resolve('feature')), 'bonjour');
  const rewritten = await g.repo.commit('feature', { 'features.yml': gitFixture('hello.yml'), 'NOTE.md': 'rewritten\n' }, { parent: c1, message: 'rewrite' });
  await store.refresh();
  t.equal(store.get('feature')?.revision, rewritten);
  t.equal(greeting(store.get('feature')), 'hello');
});

t.test('a bad commit is quarantined on its branch: last good kept, error visible, main unaffected', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  const good = await g.repo.commit('feature', bonjour, { parent: c1 });
  const store = g.store();
  await store.start();
  await store.resolve('feature');
  const events: StoreEvent[] = [];
  store.subscribe((e) => events.push(e));

  const bad = await g.repo.commit('feature', broken, {
    message: 'Break the greeting',
    author: { name: 'Mallory', email: 'mallory@example.com' },
  });
  const c2 = await g.repo.commit('main', bonjour, { message: 'main moves too' });
  await store.refresh();

  t.equal(store.get('feature')?.revision, good, 'the branch keeps its last good snapshot');
  t.equal(greeting(store.get('feature')), 'bonjour');
  t.equal(store.get()?.revision, c2, 'main is unaffected and moves on');
  const status = store.status().find((s) => s.reference === 'feature')!;
  t.equal(status.revision?.id, good);
  t.match(status.lastRejected, {
    revision: { id: bad, ref: 'feature', meta: { author: 'Mallory <mallory@example.com>', message: 'Break the greeting' } },
    problems: [{ severity: 'error', file: 'features.yml', line: Number }],
  });
  t.ok(status.lastRejected!.problems[0]!.line > 0, 'located');
  t.same(
    events.map((e) => `${e.type}:${e.reference}`),
    ['swap:main', 'rejected:feature'],
  );
  t.notOk(store.status().find((s) => s.reference === 'main')?.lastRejected);

  // Rejected once: not read again on the next poll, cleared by a fix.
  events.length = 0;
  await store.refresh();
  t.same(events, [], 'the same bad commit is not rebuilt');
  const fixed = await g.repo.commit('feature', bonjour, { message: 'fix' });
  await store.refresh();
  t.equal(store.get('feature')?.revision, fixed);
  t.notOk(store.status().find((s) => s.reference === 'feature')?.lastRejected);
});

t.test('a reference whose first commit is bad answers FailedPrecondition without rebuilding', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  await g.repo.commit('bad', broken, { parent: c1 });
  const store = g.store();
  await store.start();
  let rejections = 0;
  store.subscribe((e) => void (e.type === 'rejected' && rejections++));
  for (let i = 0; i < 3; i++) {
    await t.rejects(store.resolve('bad'), { code: 9, message: /reference "bad" has no valid state: features\.yml:\d+:\d+: error/ });
  }
  t.equal(rejections, 1, 'built once, then answered from the report');
});

t.test('50 concurrent requests for a not-yet-built reference share one build and one fetch', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  await g.repo.commit('preview/pr-7', bonjour, { parent: c1 });
  const source = g.source();
  const store = g.store({ source });
  await store.start();
  const fetchesBefore = source.stats().fetches;
  const seenBefore = fetchesSeen(g);
  let builds = 0;
  store.subscribe((e) => void (e.type === 'swap' && e.reference === 'preview/pr-7' && builds++));

  const all = await Promise.all(Array.from({ length: 50 }, () => store.resolve('preview/pr-7')));
  t.ok(all.every((s) => s === all[0]), 'every request got the same snapshot');
  t.equal(greeting(all[0]), 'bonjour');
  t.equal(builds, 1, 'one build');
  t.equal(source.stats().fetches - fetchesBefore, 1, 'one fetch (source count)');
  t.equal(fetchesSeen(g) - seenBefore, 1, 'one fetch (server count)');
});

t.test('prebuild globs: matching references are built on every poll before anyone asks', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  await g.repo.commit('preview/a', bonjour, { parent: c1 });
  await g.repo.commit('release-1', bonjour, { parent: c1 });
  await g.repo.commit('other', bonjour, { parent: c1 });
  const source = g.source();
  const store = g.store({ source, prebuild: ['main', 'preview/*', 'release-*'] });
  await store.start();
  await store.settled();
  t.same(
    store.status().map((s) => s.reference),
    ['main', 'preview/a', 'release-1'],
    'built right after start',
  );
  t.equal(source.stats().listings, 1, 'the prebuild after start reuses the start listing');
  t.equal(source.stats().fetches, 2, 'main, then the two prebuilt branches in one fetch');

  await g.repo.commit('preview/b', bonjour, { parent: c1 });
  await store.refresh();
  t.ok(store.get('preview/b'), 'a new matching branch is built at the next poll');
  t.equal(store.get('other'), undefined, 'a non-matching one waits for a request');
});

t.test('references built on request are kept fresh while used and dropped when idle', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  await g.repo.commit('feature', bonjour, { parent: c1 });
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const store = g.store({ now: () => new Date(clock), idleTtlMs: 10 * 60_000 });
  await store.start();
  await store.resolve('feature');

  clock += 9 * 60_000;
  await store.resolve('feature'); // used: stays
  const c2 = await g.repo.commit('feature', { 'features.yml': gitFixture('hello.yml') });
  await store.refresh();
  t.equal(store.get('feature')?.revision, c2, 'kept fresh by the poll while used');

  clock += 11 * 60_000;
  await store.refresh();
  t.equal(store.get('feature'), undefined, 'idle for longer than idle_ttl: dropped');
  t.same(store.status().map((s) => s.reference), ['main'], 'the default reference is never dropped');
  t.equal((await store.resolve('feature')).revision, c2, 'rebuilt on the next request');
});

t.test('branches share parsed documents: a file equal on two branches is parsed once', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  for (let i = 0; i < 5; i++) await g.repo.commit(`b${i}`, bonjour, { parent: c1 });
  const store = g.store();
  await store.start();
  const afterMain = store.parseCacheStats();
  await store.resolve('b0');
  const afterFirst = store.parseCacheStats();
  t.equal(afterFirst.misses - afterMain.misses, 1, 'b0: only its changed file is parsed');
  for (let i = 1; i < 5; i++) await store.resolve(`b${i}`);
  const afterAll = store.parseCacheStats();
  t.equal(afterAll.misses, afterFirst.misses, 'b1..b4 hold the same blobs as b0: nothing parsed');
  const segs = (ref: string) => store.get(ref)?.namespaces.get('default')?.segments.get('everyone');
  t.ok(segs('b3'), 'the shared segment is served on every branch');

  // A commit touching one file re-parses one file.
  await g.repo.commit('main', { 'features.yml': gitFixture('bonjour.yml').replace('name: Beta', 'name: Beta two') });
  const beforePoll = store.parseCacheStats().misses;
  await store.refresh();
  t.equal(store.parseCacheStats().misses - beforePoll, 1);
});

t.test('wrong credentials: serving continues, the status shows the auth error; back to normal when fixed', async (t) => {
  const g = await startGitFixture(t, { token: 'good' });
  await g.repo.commit('main', hello());
  const store = g.store({ source: g.source({ auth: { token: 'good' } }) });
  await store.start();
  const served = store.get();

  g.server.setAuth({ token: 'rotated-away' });
  await store.refresh();
  t.equal(store.get(), served, 'still serving the last snapshot');
  t.equal(await store.resolve(), served);
  const [status] = store.status();
  t.match(status?.lastError, { at: String, message: /refused the credentials \(HTTP 401/ });
  t.equal(store.pollState().consecutiveFailures, 1);
  await store.refresh();
  t.equal(store.pollState().consecutiveFailures, 2, 'failures accumulate (the poll timer backs off)');

  g.server.setAuth({ token: 'good' });
  await store.refresh();
  t.equal(store.pollState().consecutiveFailures, 0);
  t.notOk(store.status()[0]?.lastError, 'cleared by a good poll');
});

t.test('server down or slow: serving never waits; stale after max_staleness, fresh again on recovery', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  await g.repo.commit('feature', bonjour, { parent: c1 });
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const store = g.store({ now: () => new Date(clock), maxStalenessMs: 5 * 60_000 });
  await store.start();
  await store.resolve('feature');

  // Slow: a poll hangs on the server; requests for built references answer meanwhile.
  let release: () => void = () => {};
  const held = new Promise<undefined>((r) => (release = () => r(undefined)));
  g.server.setHook(() => held);
  const poll = store.refresh();
  t.equal(greeting(await store.resolve('feature')), 'bonjour', 'a built reference answers while the poll waits on the server');
  t.equal(greeting(await store.resolve()), 'hello');
  g.server.setHook(() => 503);
  release();
  await poll;

  // Down for a while.
  clock += 4 * 60_000;
  await store.refresh();
  t.match(store.status()[0], { reference: 'main', lastError: { message: /answered HTTP 503/ } });
  t.notOk(store.status()[0]?.stale, 'younger than max_staleness: not stale');
  clock += 2 * 60_000;
  const [main] = store.status();
  t.match(main?.stale, /^reference "main" has not been confirmed by the source for 6m0s \(limit 5m0s\): the state backend could not be read \(lastError in \/meta\/snapshots\)$/);
  t.match(main?.lastError?.message, /the git server answered HTTP 503/, 'the detail is in lastError');
  t.equal(greeting(store.get()), 'hello', 'still serving');

  g.server.setHook(undefined);
  await store.refresh();
  t.notOk(store.status()[0]?.stale, 'fresh again after a good poll');
  t.notOk(store.status()[0]?.lastError);
});

t.test('a restart while the server is down serves the mirror and reports the outage', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  const first = g.store();
  await first.start();
  await first.close();

  g.server.setHook(() => 503);
  const second = g.store();
  await second.start();
  t.equal(second.get()?.revision, c1, 'served from the local mirror');
  t.match(second.status()[0]?.lastError, { message: /503/ });
  t.notOk(second.status()[0]?.checkedAt, 'never confirmed by the server');

  const fresh = g.store({ source: g.source({ cacheDir: `${g.cacheDir}/empty` }) });
  await t.rejects(fresh.start(), /503/, 'without a mirror there is nothing to serve: start fails');
});

t.test('timer-driven polls pick up a push on their own', async (t) => {
  const g = await startGitFixture(t);
  await g.repo.commit('main', hello());
  const store = g.store({ pollIntervalMs: 50 });
  await store.start();
  const c2 = await g.repo.commit('main', bonjour);
  const e = await nextEvent(store, 'swap', (x) => x.snapshot.revision === c2);
  t.equal(greeting(e.snapshot), 'bonjour');
  t.ok((store.pollState().nextDelayMs ?? 0) > 0);
});

t.test('timer-driven polls back off while the server fails, and serving continues', async (t) => {
  const g = await startGitFixture(t);
  await g.repo.commit('main', hello());
  const intervalMs = 40;
  const store = g.store({ pollIntervalMs: intervalMs, maxBackoffMs: 10_000, random: () => 0.5 });
  await store.start();
  const served = store.get();
  g.server.setHook(() => 503);
  let errors = 0;
  const fourth = new Promise<void>((resolve) => store.subscribe((e) => void (e.type === 'error' && ++errors === 4 && resolve())));
  await fourth;
  const { consecutiveFailures, nextDelayMs } = store.pollState();
  t.ok(consecutiveFailures >= 4);
  t.equal(nextDelayMs, 240, 'after 3 failures: 40 ms x 2^3 = 320 ms, equal jitter at 0.5 -> 240 ms');
  t.equal(store.get(), served, 'still serving');
  g.server.setHook(undefined);
});

t.test('the local backend is untouched by the multi-reference logic', async (t) => {
  // A source listing one reference and no lookup: unknown references are 404 without building.
  let files = 0;
  const rev: Revision = { id: 'r1', ref: 'local' };
  const source: Source = {
    kind: 'local',
    refs: async () => new Map([['local', rev]]),
    files: async (r) => {
      files++;
      return { revision: r, files: [{ path: 'features.yml', contentId: 'x', bytes: async () => Buffer.from(gitFixture('hello.yml')) }] };
    },
  };
  const { createSnapshotStore } = await import('../../src/store/snapshot-store.js');
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source });
  t.teardown(() => store.close());
  await store.start();
  await t.rejects(store.resolve('a'.repeat(40)), { code: 5 });
  t.equal(files, 1);
  t.notOk(store.status()[0]?.checkedAt, 'no checked-at time without polling');
});
