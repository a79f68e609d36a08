/**
 * The benchmark runs vexil as compiled JavaScript, never through tsx: tsx's loader makes the
 * evaluator about 2x slower, which would measure the loader, not vexil. It compiles its own copy
 * (src/, bench/, the state generator) with tsc into a fresh temporary directory shaped like the
 * package root, so the repository's dist/ (which tests and the CLI may be using right now) is never
 * touched, and a half-written dist/ can never be what is measured.
 *
 *   <tmp>/src/...js  <tmp>/bench/...js  <tmp>/test/support/generate-state.js
 *   <tmp>/package.json, schemas/, examples/, node_modules/  -> symlinks into the repository
 *     (src/ finds schemas and package.json relative to its own files)
 *
 * VEXIL_BENCH_BUILD=<dir> reuses an existing build (skips tsc; for iterating on the bench itself).
 *
 * `buildRevisionForBench(rev)` does the same for another commit of this repository (`--against
 * REV`): its tree is exported with `git archive` into a temporary folder (no worktree, no checkout
 * of the repository itself) and compiled from there, with this repository's node_modules, so a
 * benchmark can measure the two builds side by side in one run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../', import.meta.url));

export interface BenchBuild {
  /** Package-shaped root: compiled workers are at `<root>/bench/workers/*.js`. */
  readonly root: string;
  /** Milliseconds tsc took (0 when reused). */
  readonly buildMs: number;
  dispose(): void;
}

const REQUIRED = ['src/state/load.js', 'src/evaluation/index.js', 'src/cli/main.js', 'bench/workers/eval-worker.js'];

export function buildForBench(log: (line: string) => void): BenchBuild {
  const reuse = process.env.VEXIL_BENCH_BUILD;
  if (reuse) {
    for (const f of REQUIRED) if (!existsSync(join(reuse, f))) throw new Error(`VEXIL_BENCH_BUILD=${reuse} lacks ${f}`);
    log(`using the existing build in ${reuse}`);
    return { root: reuse, buildMs: 0, dispose() {} };
  }
  return compile(REPO, log);
}

/** A build of commit `rev` of this repository (see the header). */
export function buildRevisionForBench(rev: string, log: (line: string) => void): BenchBuild {
  const commit = spawnSync('git', ['-C', REPO, 'rev-parse', '--verify', `${rev}^{commit}`], { encoding: 'utf8' });
  if (commit.status !== 0) throw new Error(`--against ${rev}: not a commit of this repository (${commit.stderr.trim()})`);
  const id = commit.stdout.trim();
  const tree = mkdtempSync(join(tmpdir(), 'vexil-bench-tree-'));
  try {
    const archive = spawnSync('/bin/sh', ['-c', 'git -C "$0" archive "$1" | tar -x -C "$2"', REPO, id, tree], { encoding: 'utf8' });
    if (archive.status !== 0) throw new Error(`git archive ${id}: ${archive.stderr.trim()}`);
    symlinkSync(join(REPO, 'node_modules'), join(tree, 'node_modules'));
    log(`--against ${rev}: commit ${id.slice(0, 12)} exported to ${tree}`);
    const build = compile(tree, log);
    return { ...build, dispose: () => (build.dispose(), rmSync(tree, { recursive: true, force: true })) };
  } catch (err) {
    rmSync(tree, { recursive: true, force: true });
    throw err;
  }
}

/** Compiles the source tree at `src` (this repository, or an exported commit) into a fresh package-shaped root. */
function compile(src: string, log: (line: string) => void): BenchBuild {
  const root = mkdtempSync(join(tmpdir(), 'vexil-bench-'));
  const dispose = () => rmSync(root, { recursive: true, force: true });
  try {
    for (const name of ['package.json', 'schemas', 'examples', 'node_modules']) symlinkSync(join(src, name), join(root, name));
    log(`compiling src/ and bench/ of ${src} with tsc into ${root} ...`);
    const t0 = performance.now();
    const tsc = spawnSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(src, 'bench/tsconfig.json'), '--outDir', root], {
      cwd: src,
      encoding: 'utf8',
    });
    const buildMs = performance.now() - t0;
    // tsc still emits when a file being edited elsewhere has a type error; what matters is that
    // the files the benchmark runs were written. Show the errors so a stale result is explainable.
    if (tsc.status !== 0) {
      const lines = `${tsc.stdout}${tsc.stderr}`.trim().split('\n');
      log(`tsc reported ${lines.length} line(s) of errors (emitted anyway); first: ${lines.slice(0, 3).join(' | ')}`);
    }
    for (const f of REQUIRED) if (!existsSync(join(root, f))) throw new Error(`build incomplete: ${f} was not emitted`);
    return { root, buildMs, dispose };
  } catch (err) {
    dispose();
    throw err;
  }
}
