/**
 * Test repositories made with the real `git` CLI, written straight into a bare repository on disk
 * with plumbing commands (no work tree, no push through the HTTP bridge): commit files on any
 * branch, branch, tag, delete, force-move. Always async (never execFileSync: a test may be serving
 * this repository from its own event loop through test/support/git-http-server.ts).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** git with no user or system config, a fixed identity and dates that tests can set. */
const GIT_ENV: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  LANG: 'C',
};

export interface RunOptions {
  readonly cwd?: string;
  readonly input?: string | Uint8Array;
  readonly env?: NodeJS.ProcessEnv;
}

/** Runs git; resolves with trimmed stdout, rejects with stderr on a non-zero exit. */
export function git(args: readonly string[], opts: RunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: opts.cwd, env: { ...GIT_ENV, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8').trim());
      else reject(new Error(`git ${args.join(' ')} exited ${code}: ${Buffer.concat(err).toString('utf8')}`));
    });
    child.stdin.on('error', () => {}); // git may exit before reading stdin
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

export interface CommitOptions {
  readonly message?: string;
  readonly author?: { readonly name: string; readonly email: string };
  /** Unix seconds of the author and committer dates (default: a fixed counter, so ids are stable). */
  readonly time?: number;
  /** Parent commit instead of the branch tip (to rewrite history: a force push). */
  readonly parent?: string | null;
}

export interface TestRepo {
  /** The folder holding the bare repository (serve it with startGitHttpServer({ root })). */
  readonly root: string;
  /** Name of the repository under root (`flags.git`). */
  readonly name: string;
  /** The bare repository. */
  readonly gitdir: string;
  /**
   * Commits on `branch` the given changes (`null` deletes a file) on top of its tip (or of
   * `parent`), creating the branch if needed; returns the commit id.
   */
  commit(branch: string, files: Readonly<Record<string, string | null>>, opts?: CommitOptions): Promise<string>;
  /** Points `refs/heads/<name>` at `target` (a commit id or another branch). */
  branch(name: string, target: string): Promise<void>;
  deleteBranch(name: string): Promise<void>;
  /** A lightweight tag, or an annotated one when `message` is given. */
  tag(name: string, target: string, message?: string): Promise<void>;
  /** The commit a branch or tag points at. */
  rev(ref: string): Promise<string>;
  /** `git gc` (one pack, as a real server would have). */
  gc(): Promise<void>;
}

const AUTHOR = { name: 'Ada Lovelace', email: 'ada@example.com' };

export async function createTestRepo(t: Teardown, name = 'flags.git'): Promise<TestRepo> {
  const root = mkdtempSync(join(tmpdir(), 'vexil-gitrepo-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const gitdir = join(root, name);
  await git(['init', '-q', '--bare', '--initial-branch=main', gitdir]);
  let clock = 1_700_000_000;
  const indexFile = join(root, 'index.tmp');
  const inRepo = (args: string[], opts: RunOptions = {}) => git(['--git-dir', gitdir, ...args], opts);
  const tip = (branch: string) => inRepo(['rev-parse', '--verify', '-q', `refs/heads/${branch}^{commit}`]).catch(() => undefined);

  return {
    root,
    name,
    gitdir,
    async commit(branch, files, opts = {}) {
      const parent = opts.parent === undefined ? await tip(branch) : (opts.parent ?? undefined);
      const env = { GIT_INDEX_FILE: indexFile };
      rmSync(indexFile, { force: true });
      if (parent !== undefined) await inRepo(['read-tree', parent], { env });
      for (const [path, text] of Object.entries(files)) {
        if (text === null) {
          await inRepo(['update-index', '--force-remove', path], { env });
          continue;
        }
        const oid = await inRepo(['hash-object', '-w', '--stdin'], { input: text });
        await inRepo(['update-index', '--add', '--cacheinfo', `100644,${oid},${path}`], { env });
      }
      const tree = await inRepo(['write-tree'], { env });
      const author = opts.author ?? AUTHOR;
      const time = opts.time ?? clock++;
      const dateEnv = {
        GIT_AUTHOR_NAME: author.name,
        GIT_AUTHOR_EMAIL: author.email,
        GIT_COMMITTER_NAME: author.name,
        GIT_COMMITTER_EMAIL: author.email,
        GIT_AUTHOR_DATE: `${time} +0000`,
        GIT_COMMITTER_DATE: `${time} +0000`,
      };
      const message = opts.message ?? `update ${Object.keys(files).join(', ')}`;
      const args = ['commit-tree', tree, ...(parent !== undefined ? ['-p', parent] : [])];
      const commit = await inRepo(args, { input: `${message}\n`, env: dateEnv });
      await inRepo(['update-ref', `refs/heads/${branch}`, commit]);
      return commit;
    },
    async branch(name, target) {
      const oid = await inRepo(['rev-parse', '--verify', `${target}^{commit}`]);
      await inRepo(['update-ref', `refs/heads/${name}`, oid]);
    },
    async deleteBranch(name) {
      await inRepo(['update-ref', '-d', `refs/heads/${name}`]);
    },
    async tag(name, target, message) {
      const env = { GIT_COMMITTER_NAME: AUTHOR.name, GIT_COMMITTER_EMAIL: AUTHOR.email, GIT_COMMITTER_DATE: `${clock++} +0000` };
      if (message === undefined) await inRepo(['tag', name, target], { env });
      else await inRepo(['tag', '-a', '-m', message, name, target], { env });
    },
    rev: (ref) => inRepo(['rev-parse', '--verify', `${ref}^{commit}`]),
    async gc() {
      await inRepo(['gc', '-q', '--prune=now']);
    },
  };
}
