/**
 * The git source against a real `git http-backend` on loopback: listing refs in one round trip,
 * names of branches/tags/commits, files read from the mirror by blob id, the mirror reused across
 * restarts, authentication, and the local-path flavour.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tap from 'tap';
import { createGitSource, GitOptionsError } from '../../src/sources/git/source.js';
import { mirrorPath } from '../../src/sources/git/mirror.js';
import { parseRepository } from '../../src/sources/git/options.js';
import { readState } from '../../src/store/read-state.js';
import { gitFixture, gitUnavailableReason, greeting, startGitFixture } from '../support/git-fixture.js';
import { git } from '../support/git-repo.js';
import { makeTestCertificates } from '../support/git-tls.js';
import { testsNeeding } from '../support/requirements.js';
import { GIT_SOURCE_DEFAULTS, STATE_LIMITS } from '../support/config-defaults.js';

// Outside CI, every test here skips with the reason when git is missing; under CI it fails.
const t = testsNeeding(tap, 'git', gitUnavailableReason());

const text = async (f: { bytes(): Promise<Uint8Array> }) => Buffer.from(await f.bytes()).toString('utf8');

t.test('refs(): branches and tags in one request once the server is known to speak v2', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const c2 = await g.repo.commit('preview/pr-1', { 'features.yml': gitFixture('bonjour.yml') }, { parent: c1 });
  await g.repo.tag('v1.0.0', 'main', 'release 1.0.0'); // annotated: listed peeled to its commit
  await g.repo.tag('light', c2);
  await g.repo.tag('main', c2); // a tag named like a branch: the branch keeps the short name
  const source = g.source();

  const refs = await source.refs();
  t.same(
    Object.fromEntries([...refs].map(([k, v]) => [k, v.id])),
    { main: c1, 'preview/pr-1': c2, 'v1.0.0': c1, light: c2, 'refs/tags/main': c2 },
    'every branch and tag, tags peeled, a shadowed tag under its full name',
  );
  t.equal(refs.get('preview/pr-1')?.ref, 'preview/pr-1');
  t.equal(source.stats().protocolVersion, 2);
  t.equal(g.server.requests.length, 2, 'first listing: capability advertisement + ls-refs');

  g.server.requests.length = 0;
  for (let i = 0; i < 3; i++) await source.refs();
  t.equal(g.server.requests.length, 3, 'every later listing is ONE request');
  t.same(
    g.server.requests.map((r) => `${r.method} ${r.path} ${r.gitProtocol}`),
    Array(3).fill('POST /flags.git/git-upload-pack version=2'),
    'a bare v2 ls-refs POST',
  );
  t.equal(source.stats().fetches, 0, 'listing fetches no objects');
  t.notOk(existsSync(mirrorPath(g.cacheDir, g.url)), 'the mirror is made only when objects are needed');
});

t.test('files(): the tree of the commit, blob ids as content ids, commit meta on the revision', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit(
    'main',
    { 'features.yml': gitFixture('hello.yml'), 'segments.features.yml': gitFixture('segments.yml'), 'docs/README.md': '# docs\n' },
    { message: 'Add greeting\n\nLonger body.', author: { name: 'Grace Hopper', email: 'grace@example.com' }, time: 1_750_000_000 },
  );
  const c2 = await g.repo.commit('feature', { 'features.yml': gitFixture('bonjour.yml') }, { parent: c1 });
  const source = g.source();
  const refs = await source.refs();

  const main = await source.files(refs.get('main')!);
  t.same(main.revision, {
    id: c1,
    ref: 'main',
    meta: { author: 'Grace Hopper <grace@example.com>', message: 'Add greeting\n\nLonger body.', at: '2025-06-15T15:06:40.000Z' },
  });
  t.same(
    main.files.map((f) => f.path),
    ['docs/README.md', 'features.yml', 'segments.features.yml'],
  );
  const blob = await git(['--git-dir', g.repo.gitdir, 'rev-parse', `${c1}:features.yml`]);
  t.equal(main.files.find((f) => f.path === 'features.yml')?.contentId, blob, 'content id = blob id');
  t.equal(await text(main.files.find((f) => f.path === 'features.yml')!), gitFixture('hello.yml'));

  const feature = await source.files(refs.get('feature')!);
  t.equal(feature.revision.id, c2);
  const seg = (fs: typeof main) => fs.files.find((f) => f.path === 'segments.features.yml')?.contentId;
  t.equal(seg(feature), seg(main), 'an unchanged file has the same content id on both branches');
  t.not(feature.files.find((f) => f.path === 'features.yml')?.contentId, blob);
  t.equal(source.stats().fetches, 2, 'one fetch per branch');

  const again = await source.files(refs.get('main')!);
  t.equal(again.revision.id, c1);
  t.equal(source.stats().fetches, 2, 'a commit already in the mirror is not fetched again');

  const loaded = await readState(feature, { ...STATE_LIMITS, reference: 'feature' });
  t.equal(greeting(loaded.snapshot), 'bonjour', 'the loader reads the files');
});

t.test('a new branch forked from main fetches only its own objects', async (t) => {
  const g = await startGitFixture(t);
  const files: Record<string, string> = {};
  // Incompressible content, so the sizes compare objects and not compression.
  for (let i = 0; i < 50; i++) files[`flags/f${i}.yml`] = `# file ${i}\n${randomBytes(1500).toString('hex')}\n`;
  const base = await g.repo.commit('main', files);
  await g.repo.commit('small', { 'flags/f1.yml': 'changed\n' }, { parent: base });
  await g.repo.gc();
  const source = g.source();
  const refs = await source.refs();
  await source.files(refs.get('main')!);
  const afterMain = source.stats().bytesReceived;
  await source.files(refs.get('small')!);
  const branchBytes = source.stats().bytesReceived - afterMain;
  t.ok(branchBytes < afterMain / 4, `the branch fetch (${branchBytes} B) is far smaller than the first (${afterMain} B)`);
});

t.test('tags and full commit ids are readable; an unknown commit is not found', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const c2 = await g.repo.commit('main', { 'features.yml': gitFixture('bonjour.yml') });
  await g.repo.tag('v1', c1, 'first');
  const source = g.source();
  const refs = await source.refs();
  const tagged = await source.files(refs.get('v1')!);
  t.equal(tagged.revision.id, c1);
  t.equal(greeting((await readState(tagged, { ...STATE_LIMITS, reference: 'v1' })).snapshot), 'hello');

  t.same(await source.lookup(c1), { id: c1, ref: c1 }, 'an old commit of main');
  t.same(await source.lookup(c2), { id: c2, ref: c2 });
  t.equal(await source.lookup('main'), undefined, 'lookup is for commit ids only');
  const fetches = source.stats().fetches;
  t.equal(await source.lookup('0123456789012345678901234567890123456789'), undefined, 'unknown commit');
  t.equal(await source.lookup('0123456789012345678901234567890123456780'), undefined);
  t.ok(source.stats().fetches <= fetches + 1, 'unknown commits cause at most one fetch until the refs change');
});

t.test('force push: the rewritten branch is followed', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  await g.repo.commit('feature', { 'features.yml': gitFixture('bonjour.yml') }, { parent: c1 });
  const source = g.source();
  let refs = await source.refs();
  t.equal(greeting((await readState(await source.files(refs.get('feature')!), { ...STATE_LIMITS, reference: 'feature' })).snapshot), 'bonjour');

  const rewritten = await g.repo.commit('feature', { 'features.yml': gitFixture('hello.yml'), 'x.txt': 'x' }, { parent: c1, message: 'rewritten' });
  refs = await source.refs();
  t.equal(refs.get('feature')?.id, rewritten);
  const files = await source.files(refs.get('feature')!);
  t.equal(files.revision.id, rewritten);
  t.equal(files.revision.meta?.message, 'rewritten');
  t.equal(greeting((await readState(files, { ...STATE_LIMITS, reference: 'feature' })).snapshot), 'hello');
});

t.test('a deleted branch is no longer listed, and leaves the mirror', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  await g.repo.branch('gone', c1);
  await g.repo.commit('gone', { 'a.txt': 'a' });
  const source = g.source();
  let refs = await source.refs();
  await source.files(refs.get('gone')!);
  t.ok((await source.cachedRefs()).has('gone'));
  await g.repo.deleteBranch('gone');
  refs = await source.refs();
  t.same([...refs.keys()], ['main']);
  t.notOk((await source.cachedRefs()).has('gone'), 'pruned from the mirror');
});

t.test('directory: the state root is a sub-folder, its index applies', async (t) => {
  const g = await startGitFixture(t);
  await g.repo.commit('main', {
    'README.md': '# flags repo\n',
    'features.yml': gitFixture('broken.yml'), // outside the directory: never read
    'flags/.flipt.yml': gitFixture('index.flipt.yml'),
    'flags/team/greeting.features.yml': gitFixture('bonjour.yml'),
    'flags/notes.yml': 'not: state\n',
  });
  const source = g.source({ directory: '/flags/' });
  const refs = await source.refs();
  const files = await source.files(refs.get('main')!);
  t.same(
    files.files.map((f) => f.path),
    ['.flipt.yml', 'notes.yml', 'team/greeting.features.yml'],
  );
  const loaded = await readState(files, { ...STATE_LIMITS, reference: 'main' });
  t.same(loaded.files, ['team/greeting.features.yml'], 'the index of the sub-folder selects');
  t.equal(greeting(loaded.snapshot), 'bonjour');

  const missing = g.source({ directory: 'nope', cacheDir: join(g.cacheDir, 'other') });
  await t.rejects(missing.files((await missing.refs()).get('main')!), /storage\.git\.directory "nope" does not exist at commit/);
});

t.test('symbolic links in the repository are refused as located problems', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  // A symlink entry (mode 120000) pointing outside.
  const env = { GIT_INDEX_FILE: join(g.repo.root, 'idx') };
  const gd = ['--git-dir', g.repo.gitdir];
  await git([...gd, 'read-tree', c1], { env });
  const target = await git([...gd, 'hash-object', '-w', '--stdin'], { input: '/etc/passwd' });
  await git([...gd, 'update-index', '--add', '--cacheinfo', `120000,${target},link.features.yml`], { env });
  const tree = await git([...gd, 'write-tree'], { env });
  const c2 = await git([...gd, 'commit-tree', tree, '-p', c1], { input: 'link\n', env: { GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' } });
  await git([...gd, 'update-ref', 'refs/heads/main', c2]);
  const source = g.source();
  const files = await source.files((await source.refs()).get('main')!);
  const loaded = await readState(files, { ...STATE_LIMITS, reference: 'main' });
  t.equal(loaded.snapshot, undefined);
  t.match(loaded.problems, [{ severity: 'error', rule: 'file.symlink-outside-root', file: 'link.features.yml' }]);
});

t.test('the mirror is reused across restarts; a half-made one is replaced', async (t) => {
  const g = await startGitFixture(t);
  await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const first = g.source();
  await first.files((await first.refs()).get('main')!);
  await first.close?.();
  const gitdir = mirrorPath(g.cacheDir, g.url);
  const packs = readdirSync(join(gitdir, 'objects/pack')).sort();
  t.ok(packs.length > 0);
  // A crash mid-write leaves a temporary file behind: cleaned up on open.
  writeFileSync(join(gitdir, 'objects/pack/pack-x.idx.vexil-tmp-0000'), 'partial');

  const second = g.source();
  const rev = (await second.refs()).get('main')!;
  const files = await second.files(rev);
  t.equal(files.revision.id, rev.id);
  t.equal(second.stats().fetches, 0, 'served from the existing mirror: no fetch');
  t.same(readdirSync(join(gitdir, 'objects/pack')).sort(), packs, 'no new pack, temporary file removed');

  // A mirror folder left half-initialised (no HEAD/config): set aside and made again, no crash.
  rmSync(gitdir, { recursive: true, force: true });
  mkdirSync(join(gitdir, 'objects'), { recursive: true });
  const third = g.source();
  const again = await third.files((await third.refs()).get('main')!);
  t.equal(again.revision.id, rev.id);
  t.equal(third.stats().fetches, 1);
});

t.test('authentication: basic and bearer token accepted by a server enforcing them', async (t) => {
  const g = await startGitFixture(t, { user: 'alice:s3cret', token: 'tok-1' });
  await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });

  const basic = g.source({ auth: { basic: { username: 'alice', password: 's3cret' } } });
  t.ok((await basic.files((await basic.refs()).get('main')!)).files.length > 0, 'basic: listed and fetched');

  const token = g.source({ auth: { token: 'tok-1' }, cacheDir: join(g.cacheDir, 'token') });
  t.ok((await token.files((await token.refs()).get('main')!)).files.length > 0, 'token: listed and fetched');
  t.ok(
    g.server.requests.filter((r) => r.authorization === 'Bearer tok-1').length >= 3,
    'the token is sent as a bearer token on listing and fetch requests',
  );

  const inUrl = createGitSource({ ...GIT_SOURCE_DEFAULTS, repository: g.url.replace('http://', 'http://alice:s3cret@'), cacheDir: join(g.cacheDir, 'url') });
  t.teardown(() => inUrl.close?.());
  t.ok((await inUrl.refs()).has('main'), 'credentials in the URL are used as basic auth');
  t.notMatch(inUrl.repository, /s3cret/, 'and never shown');

  const none = g.source({ cacheDir: join(g.cacheDir, 'none') });
  await t.rejects(none.refs(), { message: /requires authentication \(HTTP 401.*set storage\.git\.authentication/ });
  const wrong = g.source({ auth: { basic: { username: 'alice', password: 'nope' } }, cacheDir: join(g.cacheDir, 'wrong') });
  const err = (await wrong.refs().catch((e: unknown) => e)) as Error;
  t.match(err.message, /refused the credentials \(HTTP 401/);
  t.notMatch(err.message, /nope/, 'no secret in the message');
});

t.test('access_token_path: the file is read again before every request (rotation)', async (t) => {
  const g = await startGitFixture(t, { token: 'tok-1' });
  const c1 = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const dir = mkdtempSync(join(tmpdir(), 'vexil-token-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const tokenPath = join(dir, 'token');
  writeFileSync(tokenPath, 'tok-1\n');
  const source = g.source({ auth: { tokenPath } });
  t.equal((await source.refs()).get('main')?.id, c1);

  // The sidecar rotates: the server accepts only the new token from now on.
  g.server.setAuth({ token: 'tok-2' });
  writeFileSync(tokenPath, 'tok-2\n');
  const c2 = await g.repo.commit('main', { 'features.yml': gitFixture('bonjour.yml') });
  const refs = await source.refs();
  t.equal(refs.get('main')?.id, c2, 'listed with the rotated token');
  t.equal((await source.files(refs.get('main')!)).revision.id, c2, 'fetched with the rotated token');

  rmSync(tokenPath);
  await t.rejects(source.refs(), /cannot read the git access token file .*token: ENOENT/);
});

t.test('a local repository path is read in place (bare or with a work tree)', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  await g.repo.tag('v1', c1);
  const bare = createGitSource({ ...GIT_SOURCE_DEFAULTS, repository: g.repo.gitdir });
  const refs = await bare.refs();
  t.same([...refs.keys()].sort(), ['main', 'v1']);
  const files = await bare.files(refs.get('main')!);
  t.equal(greeting((await readState(files, { ...STATE_LIMITS, reference: 'main' })).snapshot), 'hello');
  t.same(await bare.lookup(c1), { id: c1, ref: c1 });
  t.equal(g.server.requests.length, 0, 'no HTTP at all');

  const work = mkdtempSync(join(tmpdir(), 'vexil-work-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  await git(['clone', '-q', g.repo.gitdir, work]);
  const viaWorkTree = createGitSource({ ...GIT_SOURCE_DEFAULTS, repository: `file://${work}` });
  t.equal((await viaWorkTree.refs()).get('main')?.id, c1);
});

t.test('repository forms: SSH refused with a clear message, URLs and paths accepted', async (t) => {
  for (const ssh of ['ssh://git@github.com/org/flags.git', 'git@github.com:org/flags.git', 'git+ssh://host/x']) {
    t.throws(() => createGitSource({ ...GIT_SOURCE_DEFAULTS, repository: ssh }), GitOptionsError);
    t.throws(() => parseRepository(ssh), { message: /SSH repositories are not supported .*HTTP\(S\) only.*https:\/\// });
  }
  t.throws(() => parseRepository('git://host/x.git'), /git:\/\/ protocol is not supported/);
  t.throws(() => parseRepository('ftp://host/x.git'), /unsupported repository URL scheme/);
  t.same(parseRepository('https://host/org/flags.git/'), { kind: 'http', url: 'https://host/org/flags.git' });
  t.same(parseRepository('https://u:p%40ss@host/x.git'), { kind: 'http', url: 'https://host/x.git', basic: { username: 'u', password: 'p@ss' } });
  t.same(parseRepository('repos/flags', '/base'), { kind: 'path', path: '/base/repos/flags' });
  t.same(parseRepository('file:///srv/flags.git'), { kind: 'path', path: '/srv/flags.git' });
});

t.test('unreachable server: a clear transport error', async (t) => {
  const source = createGitSource({ ...GIT_SOURCE_DEFAULTS, repository: 'http://127.0.0.1:9/flags.git', cacheDir: mkdtempSync(join(tmpdir(), 'vexil-gc-')) });
  t.teardown(() => source.close?.());
  await t.rejects(source.refs(), /cannot connect to the git server at 127\.0\.0\.1:9: connection refused/);
});

t.test('a stalled server fails the request after the idle timeout', async (t) => {
  const g = await startGitFixture(t);
  await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  let release: () => void = () => {};
  g.server.setHook(() => new Promise<undefined>((r) => (release = () => r(undefined))));
  t.teardown(() => release());
  const source = g.source({ idleTimeoutMs: 200 });
  await t.rejects(source.refs(), /sent nothing for 0\.2s/);
});

t.test('HTTPS: the server certificate is verified; ca_cert_path adds a CA; insecure_skip_tls skips the check', async (t) => {
  const certs = await makeTestCertificates(t);
  const g = await startGitFixture(t, { tls: { key: certs.key, cert: certs.cert } });
  const c1 = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  t.match(g.url, /^https:\/\/127\.0\.0\.1:\d+\//);

  const untrusted = g.source({ cacheDir: join(g.cacheDir, 'a') });
  await t.rejects(untrusted.refs(), /TLS with the git server at 127\.0\.0\.1:\d+ failed \(\w+\): set storage\.git\.ca_cert_path/);

  const trusted = g.source({ caCertPath: certs.caPath, cacheDir: join(g.cacheDir, 'b') });
  const rev = (await trusted.refs()).get('main')!;
  t.equal(rev.id, c1);
  t.equal((await trusted.files(rev)).revision.id, c1, 'fetched over HTTPS');

  const skipping = g.source({ insecureSkipTls: true, cacheDir: join(g.cacheDir, 'c') });
  t.equal((await skipping.refs()).get('main')?.id, c1);
});

t.test('many fetches: the mirror is compacted into one pack and keeps serving every commit', async (t) => {
  const g = await startGitFixture(t);
  const commits = [await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') })];
  const source = g.source({ maxPacks: 3 });
  await source.files((await source.refs()).get('main')!);
  const gitdir = mirrorPath(g.cacheDir, g.url);
  const packs = () => readdirSync(join(gitdir, 'objects/pack')).filter((n) => n.endsWith('.idx')).length;
  const seen: number[] = [packs()];
  for (let i = 0; i < 4; i++) {
    commits.push(await g.repo.commit('main', { 'features.yml': gitFixture(i % 2 === 0 ? 'bonjour.yml' : 'hello.yml'), 'n.txt': `${i}` }));
    const rev = (await source.refs()).get('main')!;
    t.equal((await source.files(rev)).revision.id, commits[commits.length - 1]);
    seen.push(packs());
  }
  t.same(seen, [1, 2, 3, 1, 2], 'a fetch leaving more than maxPacks packs compacts the mirror into one');
  for (const c of commits) t.same(await source.lookup(c), { id: c, ref: c }, 'old commits are still there');
  const first = await source.files({ id: commits[0]!, ref: commits[0]! });
  t.equal(greeting((await readState(first, { ...STATE_LIMITS, reference: 'x' })).snapshot), 'hello');
  t.notOk(readdirSync(g.cacheDir).some((n) => /\.(old|compact)-/.test(n)), 'no leftover folders');
});
