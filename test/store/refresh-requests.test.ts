/**
 * Refreshes asked for by requests (store.requestRefresh, src/store/refresh-gate.ts) on a real git
 * http-backend: a refresh of one reference lists the server and rebuilds that reference alone
 * (another branch that moved too waits for the poll); a refresh of everything rebuilds every
 * tracked reference; `tracks` says which names a refresh would look at.
 */
import tap from 'tap';
import { gitFixture, gitUnavailableReason, greeting, startGitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());

t.test('a refresh of one reference rebuilds it alone; of everything, every tracked one', async (t) => {
  const g = await startGitFixture(t);
  const m1 = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const p1 = await g.repo.commit('preview/a', { 'features.yml': gitFixture('hello.yml') });
  await g.repo.commit('wip', { 'features.yml': gitFixture('hello.yml') });
  const store = g.store({ prebuild: ['main', 'preview/*'] });
  await store.start();
  await store.settled();
  t.equal(store.get('preview/a')?.revision, p1);
  t.ok(store.tracks('main') && store.tracks('preview/a'), 'built references are tracked');
  t.ok(store.tracks('preview/b'), 'a name matching a prebuild glob is tracked before it exists (a new branch is built at its first push)');
  t.notOk(store.tracks('wip'), 'a branch nobody asked for is not');

  const m2 = await g.repo.commit('main', { 'features.yml': gitFixture('bonjour.yml') });
  const p2 = await g.repo.commit('preview/a', { 'features.yml': gitFixture('bonjour.yml') });
  const listingsBefore = g.count('/git-upload-pack', 'POST');
  await store.requestRefresh(['preview/a']);
  t.equal(store.get('preview/a')?.revision, p2, 'the named reference moved');
  t.equal(greeting(store.get('preview/a')), 'bonjour');
  t.equal(store.get('main')?.revision, m1, 'main moved upstream too, but was not named: it waits for its poll');
  t.ok(g.count('/git-upload-pack', 'POST') - listingsBefore <= 2, 'one listing and one fetch');

  await store.requestRefresh();
  t.equal(store.get('main')?.revision, m2, 'a refresh of everything rebuilds main');

  const p3 = await g.repo.commit('preview/b', { 'features.yml': gitFixture('hello.yml') });
  await store.requestRefresh(['preview/b']);
  t.equal(store.get('preview/b')?.revision, p3, 'a new branch matching a prebuild glob is built by the refresh that names it');
});
