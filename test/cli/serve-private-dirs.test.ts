/**
 * The folders `vexil serve` makes by default in the shared temp folder (the data folder when there
 * is no home folder, the Git mirror cache): created private (0700); one that another user created
 * (owned by `nobody`), one open to others (0777) or a symbolic link is refused at start (exit 1,
 * the folder named), through the real CLI with TMPDIR pointing at a test folder.
 */
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import tap from 'tap';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';
import { REPO, serveCli, spawnCli } from './run-cli.js';

const NOBODY = 65534;
const user = userInfo().username;
const isRoot = process.getuid?.() === 0;

function tempRoot(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-private-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const mode = (path: string) => statSync(path).mode & 0o777;

/** `vexil serve` expected to refuse to start: its exit code and stderr (stopped with SIGTERM, code 0, if it starts after all). */
function refusedStart(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawnCli(args, { env });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout?.on('data', (d: Buffer) => {
    if (d.toString().includes('"msg":"listening"')) child.kill('SIGTERM');
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

tap.test('data folder without a home folder: <tmp>/vexil-<user> is made 0700; a planted or open one is refused', { skip: isRoot ? false : 'needs root to chown' }, async (t) => {
  const tmp = tempRoot(t);
  const config = join(tmp, 'vexil.yml');
  writeFileSync(
    config,
    [
      'server: { host: 127.0.0.1, http_port: 0 }',
      'log: { level: info, encoding: json }',
      `storage: { type: local, local: { path: ${join(REPO, 'examples')} } }`,
      'authentication: { required: true, methods: { token: { enabled: true } } }',
      '',
    ].join('\n'),
  );
  const env = { HOME: '/nonexistent', XDG_DATA_HOME: '', TMPDIR: tmp };
  const dataDir = join(tmp, `vexil-${user}`);

  const started = await serveCli(t, ['serve', '--config', config], { env });
  t.equal(mode(dataDir), 0o700, 'created private');
  t.ok(existsSync(join(dataDir, 'auth.db')), 'the token store is in it');
  started.child.kill('SIGTERM');
  t.equal(await new Promise((r) => started.child.on('close', r)), 0);

  chownSync(dataDir, NOBODY, NOBODY);
  const planted = await refusedStart(['serve', '--config', config], env);
  t.equal(planted.code, 1, 'owned by another user: refused');
  t.match(planted.stderr, `the default data folder (data_dir) ${dataDir} is owned by another user (uid ${NOBODY}`);

  chownSync(dataDir, 0, 0);
  chmodSync(dataDir, 0o777);
  const open = await refusedStart(['serve', '--config', config], env);
  t.equal(open.code, 1, 'open to others: refused');
  t.match(open.stderr, /is open to other users \(mode 0777, must be 0700\)/);

  rmSync(dataDir, { recursive: true, force: true });
  const elsewhere = join(tmp, 'elsewhere');
  mkdirSync(elsewhere, { mode: 0o700 });
  symlinkSync(elsewhere, dataDir);
  const linked = await refusedStart(['serve', '--config', config], env);
  t.equal(linked.code, 1, 'a symbolic link: refused');
  t.match(linked.stderr, /is a symbolic link/);

  const configured = await serveCli(t, ['serve', '--config', config], { env: { ...env, VEXIL_DATA_DIR: join(tmp, 'mine') } });
  t.ok(existsSync(join(tmp, 'mine', 'auth.db')), 'a configured data_dir is the operator’s choice: not checked');
  configured.child.kill('SIGTERM');
});

const git = testsNeeding(tap, 'git', gitUnavailableReason());

git.test('Git cache without storage.git.cache_dir: <tmp>/vexil-git-cache-<user> is made 0700; a planted one is refused', { skip: isRoot ? false : 'needs root to chown' }, async (t) => {
  const g = await startGitFixture(t);
  await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const tmp = tempRoot(t);
  const config = join(tmp, 'vexil.yml');
  writeFileSync(
    config,
    ['server: { host: 127.0.0.1, http_port: 0 }', 'log: { level: info, encoding: json }', `storage: { type: git, git: { repository: "${g.url}", poll_interval: 1h } }`, ''].join(
      '\n',
    ),
  );
  const env = { TMPDIR: tmp };
  const cache = join(tmp, `vexil-git-cache-${user}`);

  const started = await serveCli(t, ['serve', '--config', config], { env });
  t.equal(mode(cache), 0o700, 'created private');
  started.child.kill('SIGTERM');
  t.equal(await new Promise((r) => started.child.on('close', r)), 0);

  chownSync(cache, NOBODY, NOBODY);
  const planted = await refusedStart(['serve', '--config', config], env);
  t.equal(planted.code, 1, 'owned by another user: refused');
  t.match(planted.stderr, `the default Git cache folder (storage.git.cache_dir) ${cache} is owned by another user (uid ${NOBODY}`);

  chownSync(cache, 0, 0);
  chmodSync(cache, 0o755);
  const open = await refusedStart(['serve', '--config', config], env);
  t.equal(open.code, 1, 'readable by others: refused');
  t.match(open.stderr, /is open to other users \(mode 0755, must be 0700\)/);
});
