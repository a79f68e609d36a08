/**
 * A real Git server for the git backend tests: a bare repository written with the git CLI
 * (test/support/git-repo.ts), served by the real `git http-backend` on a loopback port
 * (test/support/git-http-server.ts), a temp cache folder for vexil's mirror, and the state files
 * of test/sources/fixtures/git/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { createGitSource, type GitSource, type GitSourceOptions } from '../../src/sources/git/source.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { createSnapshotStore, type ManagedSnapshotStore, type SnapshotStoreOptions } from '../../src/store/snapshot-store.js';
import { startGitHttpServer, type GitHttpServer, type GitHttpServerOptions } from './git-http-server.js';
import { createTestRepo, type Teardown, type TestRepo } from './git-repo.js';
import { GIT_SOURCE_DEFAULTS, STORE_DEFAULTS } from './config-defaults.js';

export const GIT_FIXTURES = fileURLToPath(new URL('../sources/fixtures/git/', import.meta.url));

/**
 * Why the git tests cannot run here (no `git` CLI, or no `git http-backend` beside it), or
 * undefined when they can. Synchronous: called at the top of a test file, before any server runs.
 */
export function gitUnavailableReason(): string | undefined {
  const how = 'Debian package `git`; scripts/test-setup.sh installs it when run as root';
  const execPath = spawnSync('git', ['--exec-path'], { encoding: 'utf8' });
  if (execPath.error !== undefined || execPath.status !== 0) return `git not found (${how})`;
  const backend = join(execPath.stdout.trim(), 'git-http-backend');
  if (!existsSync(backend)) return `git http-backend not found at ${backend} (${how})`;
  return undefined;
}

/** The text of test/sources/fixtures/git/<name>. */
export function gitFixture(name: string): string {
  return readFileSync(join(GIT_FIXTURES, name), 'utf8');
}

export interface GitFixture {
  readonly repo: TestRepo;
  readonly server: GitHttpServer;
  /** http://127.0.0.1:PORT/flags.git */
  readonly url: string;
  /** A fresh cache folder (removed at teardown). */
  readonly cacheDir: string;
  /** A git source on this server (closed at teardown). */
  source(opts?: Partial<GitSourceOptions>): GitSource;
  /** A store over a new source (closed at teardown); not started. */
  store(opts?: Partial<SnapshotStoreOptions> & { source?: GitSource }): ManagedSnapshotStore;
  /** Requests received so far whose path ends with `suffix` (`/git-upload-pack`, `/info/refs`). */
  count(suffix: string, method?: string): number;
}

export async function startGitFixture(t: Teardown, server: Omit<GitHttpServerOptions, 'root'> = {}): Promise<GitFixture> {
  const repo = await createTestRepo(t);
  const srv = await startGitHttpServer({ root: repo.root, ...server });
  t.teardown(() => srv.close());
  const cacheDir = mkdtempSync(join(tmpdir(), 'vexil-gitcache-'));
  t.teardown(() => rmSync(cacheDir, { recursive: true, force: true }));
  const url = `${srv.url}/${repo.name}`;
  const fixture: GitFixture = {
    repo,
    server: srv,
    url,
    cacheDir,
    source(opts = {}) {
      const s = createGitSource({ ...GIT_SOURCE_DEFAULTS, repository: url, cacheDir, ...opts });
      t.teardown(() => s.close?.());
      return s;
    },
    store(opts = {}) {
      const { source, ...rest } = opts;
      const store = createSnapshotStore({
        ...STORE_DEFAULTS,
        source: source ?? fixture.source(),
        defaultReference: 'main',
        logger: pino({ level: 'silent' }),
        // Polled semantics (checked-at times, staleness) without timer-driven polls: tests call refresh().
        pollIntervalMs: 3_600_000,
        ...rest,
      });
      t.teardown(() => store.close());
      return store;
    },
    count(suffix, method) {
      return srv.requests.filter((r) => r.path.endsWith(suffix) && (method === undefined || r.method === method)).length;
    },
  };
  return fixture;
}

/** The default variant of the `greeting` flag: which fixture a snapshot was built from. */
export function greeting(s: Snapshot | undefined): string | undefined {
  return s?.namespaces.get('default')?.flags.get('greeting')?.defaultVariant?.key;
}
