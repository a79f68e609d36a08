/**
 * A listing that suddenly lacks references is a backend fault until proven otherwise: with the
 * default `storage.reference_removal` (3 polls over 1 minute), a real `git http-backend` that
 * answers an empty advertisement for one poll drops no branch, and a branch whose tip was
 * rejected keeps serving its last good snapshot and its rejection when the listing comes back.
 * A branch really deleted is dropped once both the poll count and the period are reached. The
 * clock is injected and polls are made with refresh(): nothing here depends on timing.
 */
import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import tap from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { createGitSource } from '../../src/sources/git/source.js';
import type { StoreEvent } from '../../src/store/types.js';
import { gitFixture, gitUnavailableReason, greeting, startGitFixture } from '../support/git-fixture.js';
import { createTestRepo, git } from '../support/git-repo.js';
import { testsNeeding } from '../support/requirements.js';
import { GIT_SOURCE_DEFAULTS } from '../support/config-defaults.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());

const hello = () => ({ 'features.yml': gitFixture('hello.yml') });
const bonjour = { 'features.yml': gitFixture('bonjour.yml') };
const broken = { 'features.yml': gitFixture('broken.yml') };

const BRANCHES = ['a', 'b', 'c', 'd', 'feature'];

function capturingLogger() {
  const lines: Array<{ level: number; msg: string; [k: string]: unknown }> = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as (typeof lines)[number]) });
  return { logger, lines };
}

t.test('the configured default: 3 polls over 1 minute', async (t) => {
  const config = loadConfig({ env: {} });
  t.same(config.storage.reference_removal, { listings: 3, grace: 60_000 });
  const overridden = loadConfig({ env: { VEXIL_STORAGE_REFERENCE_REMOVAL_LISTINGS: '5', VEXIL_STORAGE_REFERENCE_REMOVAL_GRACE: '10m' } });
  t.same(overridden.storage.reference_removal, { listings: 5, grace: 600_000 });
});

t.test('an empty advertisement for one poll drops nothing; a rejected tip stays rejected with the last good snapshot served', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  for (const b of BRANCHES) await g.repo.commit(b, bonjour, { parent: c1 });
  const good = await g.repo.rev('feature');
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const { logger, lines } = capturingLogger();
  // The configured default (checked above), as `vexil serve` passes it.
  const store = g.store({ now: () => new Date(clock), prebuild: ['*'], logger, referenceRemoval: { listings: 3, graceMs: 60_000 } });
  const events: StoreEvent[] = [];
  store.subscribe((e) => events.push(e));
  await store.start();
  await store.settled();
  for (const b of BRANCHES) t.equal(greeting(store.get(b)), 'bonjour', `${b} built`);

  const bad = await g.repo.commit('feature', broken, { message: 'break it' });
  clock += 30_000;
  await store.refresh();
  const before = store.status().find((s) => s.reference === 'feature');
  t.equal(before?.revision?.id, good, 'feature serves its last good commit');
  t.equal(before?.lastRejected?.revision.id, bad, 'and reports the rejected tip');

  // The blip: the server answers an empty advertisement (a real, empty repository) for one poll.
  const away = `${g.repo.gitdir}.away`;
  renameSync(g.repo.gitdir, away);
  await git(['init', '-q', '--bare', '--initial-branch=main', g.repo.gitdir]);
  events.length = 0;
  clock += 30_000;
  await store.refresh();
  t.same(
    events.filter((e) => e.type === 'dropped'),
    [],
    'no reference dropped by a listing that lost them all at once',
  );
  const warnings = lines.filter((l) => l.level === 40 && /many references vanished/.test(l.msg));
  t.equal(warnings.length, 1, 'one warning says many references vanished at once');
  t.equal(warnings[0]?.vanished, 6);
  for (const b of BRANCHES) t.equal(greeting(store.get(b)), 'bonjour', `${b} still served during the blip`);

  // The server is back, feature still at the rejected tip.
  rmSync(g.repo.gitdir, { recursive: true, force: true });
  renameSync(away, g.repo.gitdir);
  events.length = 0;
  clock += 30_000;
  await store.refresh();
  t.same(
    events.filter((e) => e.reference === 'feature'),
    [],
    'feature is not rebuilt at the tip it already rejected',
  );
  const after = store.status().find((s) => s.reference === 'feature');
  t.equal(after?.revision?.id, good, 'feature still serves its last good commit');
  t.equal(after?.lastRejected?.revision.id, bad, 'and still reports the rejected tip');
  t.equal(greeting(store.get('feature')), 'bonjour');
  t.same(
    store.status().map((s) => s.reference),
    ['main', ...BRANCHES],
    'every reference kept',
  );
  t.ok(
    lines.some((l) => l.reference === 'feature' && /listed again/.test(l.msg)),
    'the return is logged',
  );
});

t.test('a deleted branch is dropped once absent from 3 polls spanning 1 minute, not before', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  for (const b of BRANCHES) await g.repo.commit(b, bonjour, { parent: c1 });
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const { logger, lines } = capturingLogger();
  const store = g.store({ now: () => new Date(clock), prebuild: ['*'], logger, referenceRemoval: { listings: 3, graceMs: 60_000 } });
  const dropped: string[] = [];
  store.subscribe((e) => {
    if (e.type === 'dropped') dropped.push(e.reference);
  });
  await store.start();
  await store.settled();
  await store.refresh();

  await g.repo.deleteBranch('a');
  // Three polls a second apart: enough polls, not enough time.
  for (let i = 0; i < 3; i++) {
    clock += 1000;
    await store.refresh();
  }
  t.same(dropped, [], 'three quick polls: kept (the period is not over)');
  t.equal(greeting(store.get('a')), 'bonjour', 'still served meanwhile');
  t.notOk(
    lines.some((l) => /many references vanished/.test(l.msg)),
    'one branch deleted out of six is not reported as a backend fault',
  );
  // A minute later, one more poll: dropped.
  clock += 60_000;
  await store.refresh();
  t.same(dropped, ['a'], 'absent from 4 polls over 63 s: dropped');
  t.equal(store.get('a'), undefined);
  await t.rejects(store.resolve('a'), { code: 5, message: 'reference "a" not found' });

  // The other way round: a minute passes within two polls, the third drops it.
  await g.repo.deleteBranch('b');
  clock += 30_000;
  await store.refresh();
  clock += 60_000;
  await store.refresh();
  t.same(dropped, ['a'], 'two polls over 60 s: kept (too few polls)');
  clock += 1000;
  await store.refresh();
  t.same(dropped, ['a', 'b'], 'the third poll without it drops it');
  t.same(
    store.status().map((s) => s.reference),
    ['main', 'c', 'd', 'feature'],
  );
});

t.test('a local repository path that disappears fails the listing instead of listing no branches', async (t) => {
  const repo = await createTestRepo(t);
  await repo.commit('main', hello());
  await repo.commit('feature', bonjour);
  const source = createGitSource({ ...GIT_SOURCE_DEFAULTS, repository: repo.gitdir });
  t.same([...(await source.refs()).keys()].sort(), ['feature', 'main']);
  const parked = mkdtempSync(join(tmpdir(), 'vexil-parked-'));
  t.teardown(() => rmSync(parked, { recursive: true, force: true }));
  renameSync(repo.gitdir, join(parked, 'flags.git'));
  await t.rejects(source.refs(), /is not a Git repository/, 'an unreadable repository is an outage');
  renameSync(join(parked, 'flags.git'), repo.gitdir);
  t.same([...(await source.refs()).keys()].sort(), ['feature', 'main'], 'and lists again once back');
});
