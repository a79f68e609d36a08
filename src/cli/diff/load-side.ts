/**
 * One side of `vexil diff`: a state folder (read as `vexil serve` reads a local folder), or a
 * revision of a local Git repository (read through the git backend's path source, as the server
 * reads a repository: objects straight from the object database, no work tree). Also gathers the
 * contexts of the side's flag test files (`*.test.yml`, the index's `tests:` section) for the
 * impact sample.
 */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import git from 'isomorphic-git';
import { atomicFs } from '../../sources/git/atomic-fs.js';
import { createGitSource } from '../../sources/git.js';
import { readState } from '../../sources/read-state.js';
import type { SourceFile } from '../../sources/types.js';
import type { Snapshot } from '../../state/model.js';
import type { Problem } from '../../state/problem.js';
import { readTestFile } from '../flag-tests/read-test-file.js';
import { loadLocalState } from '../local-state.js';

export interface LoadedSide {
  /** As the user named it (folder or revision). */
  readonly name: string;
  readonly snapshot?: Snapshot;
  readonly problems: readonly Problem[];
  readonly files: readonly SourceFile[];
}

export async function loadFolder(dir: string, cwd: string): Promise<LoadedSide> {
  const state = await loadLocalState(dir, cwd);
  return { name: state.display, ...(state.snapshot ? { snapshot: state.snapshot } : {}), problems: state.problems, files: state.files };
}

/** A name that designates no commit of the repository (or a path that is no repository). */
export class UnknownRevisionError extends Error {}

/** A revision name (branch, tag, remote-tracking branch, HEAD, full or abbreviated commit id) → commit id. */
export async function resolveRevision(repoPath: string, name: string): Promise<string> {
  const gitdir = existsSync(join(repoPath, '.git')) ? join(repoPath, '.git') : repoPath;
  const fs = atomicFs as never;
  try {
    const oid = await git.resolveRef({ fs, gitdir, ref: name });
    // An annotated tag names a tag object: the commit it points at.
    const { oid: commit } = await git.readCommit({ fs, gitdir, oid }).catch(async () => {
      const tag = await git.readTag({ fs, gitdir, oid });
      return { oid: tag.tag.object };
    });
    return commit;
  } catch {
    if (/^[0-9a-f]{4,40}$/.test(name)) {
      try {
        return await git.expandOid({ fs, gitdir, oid: name });
      } catch {
        /* fall through */
      }
    }
    throw new UnknownRevisionError(`unknown revision "${name}" in ${repoPath}`);
  }
}

export async function loadRevision(repoPath: string, name: string, directory?: string): Promise<LoadedSide> {
  const commit = await resolveRevision(repoPath, name);
  const source = createGitSource({ repository: repoPath, ...(directory !== undefined ? { directory } : {}) });
  const rev = await source.lookup(commit);
  if (rev === undefined) throw new Error(`commit ${commit} is not in ${repoPath}`);
  const fileSet = await source.files({ ...rev, ref: name });
  const result = await readState(fileSet, { reference: name, revision: commit });
  const problems = result.problems.map((p) => ({ ...p, file: `${name}:${p.file}` }));
  return { name, ...(result.snapshot ? { snapshot: result.snapshot } : {}), problems, files: fileSet.files };
}

const TEST_FILE = /(^|\/)[^/]*\.test\.ya?ml$/;
const INDEX_WITH_TESTS = '.vexil.yml';
/** Bounds what test files may add to the sample (a context per case at most). */
const MAX_TEST_CONTEXTS = 1000;

/** The distinct contexts of the side's flag test cases (files that do not read are skipped: `vexil test` reports them). */
export async function testContexts(files: readonly SourceFile[]): Promise<Record<string, string>[]> {
  const seen = new Map<string, Record<string, string>>();
  for (const f of files) {
    if (!TEST_FILE.test(f.path) && f.path !== INDEX_WITH_TESTS) continue;
    let text: string;
    try {
      text = new TextDecoder().decode(await f.bytes());
    } catch {
      continue;
    }
    for (const c of readTestFile(f.path, text, { section: f.path === INDEX_WITH_TESTS }).cases) {
      const key = JSON.stringify(Object.entries(c.context).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      if (!seen.has(key) && seen.size < MAX_TEST_CONTEXTS) seen.set(key, { ...c.context });
    }
  }
  return [...seen.values()];
}
