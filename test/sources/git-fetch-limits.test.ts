/**
 * Size caps of the git backend against a real `git http-backend`: a fetch answer over
 * `storage.git.max_fetch_size` fails the build with a message naming the key (never buffered past
 * it); a ref listing over the client's cap fails the same way; a small file that git stored as a
 * delta of a larger object is refused (located) rather than inflating the larger one.
 */
import { randomBytes } from 'node:crypto';
import tap from 'tap';
import { createGitHttpClient } from '../../src/sources/git/http-client.js';
import { gitFixture, gitUnavailableReason, greeting, startGitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());

t.test('a fetch answer over storage.git.max_fetch_size fails the build, naming the key', async (t) => {
  const g = await startGitFixture(t);
  await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml'), 'noise.bin': randomBytes(64 * 1024).toString('base64') });
  const store = g.store({ source: g.source({ maxFetchSize: 16 * 1024 }) });
  await t.rejects(store.start(), /sent a response of more than 16384 bytes.*storage\.git\.max_fetch_size is 16384 bytes/);

  const roomy = g.store({ source: g.source({ maxFetchSize: 1024 * 1024 }) });
  await roomy.start();
  t.equal(greeting(roomy.get()), 'hello', 'the same repository within the cap');
});

t.test('a ref listing over the client cap fails the request instead of buffering it', async (t) => {
  const g = await startGitFixture(t);
  const c = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  for (let i = 0; i < 20; i++) await g.repo.branch(`feature/branch-${i}`, c);
  const http = createGitHttpClient({ maxResponseBytes: 512 });
  t.teardown(() => http.close());
  await t.rejects(
    http.request({ url: `${g.url}/info/refs?service=git-upload-pack`, method: 'GET', headers: {} }),
    { code: 'ERESPONSETOOLARGE', message: /sent a response of more than 512 bytes/ },
  );
  const roomy = await http.request({ url: `${g.url}/info/refs?service=git-upload-pack`, method: 'GET', headers: {}, maxResponseBytes: 64 * 1024 });
  t.equal(roomy.statusCode, 200, 'a request may raise its own cap');
});

t.test('a file stored as a delta of an object over max_file_size is refused, located, without reading the base', async (t) => {
  const g = await startGitFixture(t);
  const hello = gitFixture('hello.yml');
  // A large version first, then a smaller one (at least 1/32 of it): git deltifies the smaller
  // against the larger (pack-objects tries larger objects as bases first).
  const padding = Array.from({ length: 400 }, (_, i) => `# padding line ${i} ${'-'.repeat(40)}`);
  const big = await g.repo.commit('main', { 'features.yml': `${hello}\n${padding.join('\n')}\n` });
  await g.repo.commit('main', { 'features.yml': `${hello}\n${padding.slice(0, 40).join('\n')}\n` });
  await g.repo.gc();
  const store = g.store({ source: g.source({ maxFileSize: 4096 }), maxFileSize: 4096 });
  await store.start().then(
    () => t.fail('the 2 KB file is stored as a delta of a 24 KB blob: refused'),
    (err: { problems?: unknown }) =>
      t.match(err.problems, [{ rule: 'file.too-large', file: 'features.yml', message: /is stored as a delta of an object of \d{5} bytes, over the limit of 4096 bytes/ }]),
  );
  t.ok(big, 'the large version is in the history');
});
