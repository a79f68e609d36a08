/** `storage.git.*`: schema defaults, env overrides, and the checks made before `vexil serve` starts. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig, loadConfigReport } from '../../src/config/load.js';
import { gitStorageFromConfig } from '../../src/sources/git/from-config.js';
import { gitConfigProblems } from '../../src/sources/git/options.js';

const gitEnv = (extra: Record<string, string> = {}) => ({ VEXIL_STORAGE_TYPE: 'git', ...extra });

t.test('defaults and environment overrides', async (t) => {
  const c = loadConfig({ env: gitEnv({ VEXIL_STORAGE_GIT_REPOSITORY: 'https://example.com/flags.git' }) });
  t.same(c.storage.git, {
    repository: 'https://example.com/flags.git',
    ref: 'main',
    directory: '',
    poll_interval: 30_000,
    insecure_skip_tls: false,
    authentication: {},
    idle_ttl: 600_000,
    max_staleness: 300_000,
    max_references: 64,
    max_pending_builds: 8,
    allow_commit_references: true,
    max_fetch_size: 1_073_741_824,
  });
  const o = loadConfig({
    env: gitEnv({
      VEXIL_STORAGE_GIT_REPOSITORY: 'https://example.com/flags.git',
      VEXIL_STORAGE_GIT_PREBUILD: 'main,preview/*',
      VEXIL_STORAGE_GIT_POLL_INTERVAL: '10s',
      VEXIL_STORAGE_GIT_AUTHENTICATION_TOKEN_ACCESS_TOKEN_PATH: '/run/secrets/git-token',
      VEXIL_STORAGE_GIT_IDLE_TTL: '1h',
    }),
  });
  t.same(o.storage.git.prebuild, ['main', 'preview/*']);
  t.equal(o.storage.git.poll_interval, 10_000);
  t.equal(o.storage.git.idle_ttl, 3_600_000);
  t.same(o.storage.git.authentication, { token: { access_token_path: '/run/secrets/git-token' } });
  t.throws(() => loadConfig({ env: gitEnv({ VEXIL_STORAGE_GIT_AUTHENTICATION_BASIC_USERNAME: 'u' }) }), {
    message: /storage\.git\.authentication\.basic\.password: required/,
  });
  // No such key (Flipt's is `ref` too): a variable naming no key is ignored, like any platform variable.
  t.same(loadConfigReport({ env: gitEnv({ VEXIL_STORAGE_GIT_BRANCH: 'x' }) }).ignoredVariables, [{ variable: 'VEXIL_STORAGE_GIT_BRANCH' }]);
});

t.test('checks made at start', async (t) => {
  const base = loadConfig({ env: gitEnv() }).storage.git;
  const paths = (g: typeof base) => gitConfigProblems(g).map((p) => p.path);
  t.same(paths(base), ['storage.git.repository']);
  t.match(gitConfigProblems({ ...base, repository: 'ssh://git@host/flags.git' }), [
    { path: 'storage.git.repository', message: /SSH repositories are not supported/ },
  ]);
  const ok = { ...base, repository: 'https://host/flags.git' };
  t.same(paths(ok), []);
  t.same(paths({ ...ok, authentication: { basic: { username: 'u', password: 'p' }, token: { access_token: 't' } } }), ['storage.git.authentication']);
  t.same(paths({ ...ok, authentication: { token: {} } }), ['storage.git.authentication.token']);
  t.same(paths({ ...ok, authentication: { token: { access_token: 'a', access_token_path: '/x' } } }), ['storage.git.authentication.token']);
  t.same(paths({ ...ok, prebuild: ['main', 'bad[glob'] }), ['storage.git.prebuild.1']);
  t.same(paths({ ...ok, directory: '../outside' }), ['storage.git.directory']);
  t.same(paths({ ...ok, ca_cert_path: '/no/such/ca.pem' }), ['storage.git.ca_cert_path']);
  t.same(paths({ ...ok, repository: '/no/such/repo' }), ['storage.git.repository']);
});

t.test('gitStorageFromConfig: relative paths resolve against the config folder; store options', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-gitcfg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'token'), 'tok\n');
  const config = loadConfig({
    env: gitEnv({
      VEXIL_STORAGE_GIT_REPOSITORY: 'https://u:secret@example.com/org/flags.git',
      VEXIL_STORAGE_GIT_REF: 'production',
      VEXIL_STORAGE_GIT_DIRECTORY: 'flags/',
      VEXIL_STORAGE_GIT_CACHE_DIR: 'cache',
    }),
  });
  const git = gitStorageFromConfig(config, dir);
  t.teardown(() => git.source.close?.());
  t.equal(git.source.repository, 'https://example.com/org/flags.git', 'no credentials shown');
  t.equal(git.description, 'https://example.com/org/flags.git@production/flags');
  t.same(git.store, {
    defaultReference: 'production',
    pollIntervalMs: 30_000,
    prebuild: ['production'],
    idleTtlMs: 600_000,
    maxStalenessMs: 300_000,
    maxReferences: 64,
    maxPendingBuilds: 8,
    allowUnlistedReferences: true,
  });
  const bad = loadConfig({ env: gitEnv({ VEXIL_STORAGE_GIT_REPOSITORY: 'git@github.com:org/flags.git' }) });
  t.throws(() => gitStorageFromConfig(bad, dir), ConfigError);
});
