/**
 * One side of `vexil diff`: a state folder (read as `vexil serve` reads a local folder), or a
 * revision of a local Git repository (read through the git backend's path source, as the server
 * reads a repository: objects straight from the object database, no work tree). readState keeps
 * the contexts of the side's flag test files with its snapshot (store/test-contexts.ts), as it
 * does for the server's snapshots, so `vexil diff` and the API sample the same contexts.
 */
import git from 'isomorphic-git';
import { atomicFs } from '../../sources/git/atomic-fs.js';
import { defaultStateLimits, schemaDefault } from '../../config/defaults.js';
import { headOf, repositoryDirs } from '../../sources/git/repository-dirs.js';
import { createGitSource } from '../../sources/git/source.js';
import { normalizeDirectory } from '../../sources/git/objects.js';
import { readState } from '../../store/read-state.js';
import type { SourceFile } from '../../sources/types.js';
import type { Snapshot } from '../../model/snapshot.js';
import type { Problem } from '../../model/problem.js';
import { displayPath, loadLocalState } from '../local-state.js';

export interface LoadedSide {
  /** As the user named it (folder or revision). */
  readonly name: string;
  readonly snapshot?: Snapshot;
  readonly problems: readonly Problem[];
  readonly files: readonly SourceFile[];
  /** The state files the index selected, by path relative to the state root. */
  readonly stateFiles: readonly string[];
  /** A state-relative path as the user would name it: under the folder, or `REV:path` in the repository. */
  readonly display: (path: string) => string;
}

export async function loadFolder(dir: string, cwd: string): Promise<LoadedSide> {
  const state = await loadLocalState(dir, cwd);
  return {
    name: state.display,
    ...(state.snapshot ? { snapshot: state.snapshot } : {}),
    problems: state.problems,
    files: state.files,
    stateFiles: state.stateFiles,
    display: (path) => displayPath(state.display, path),
  };
}

/** A name that designates no commit of the repository (or a path that is no repository). */
export class UnknownRevisionError extends Error {}

/** A revision name (branch, tag, remote-tracking branch, HEAD, full or abbreviated commit id) → commit id. */
export async function resolveRevision(repoPath: string, name: string): Promise<string> {
  const fs = atomicFs as never;
  let gitdir = repoPath;
  let ref = name;
  try {
    const dirs = repositoryDirs(repoPath);
    gitdir = dirs.common;
    // A linked worktree's HEAD is its own, not the main working tree's.
    if (name === 'HEAD' && dirs.head !== dirs.common) ref = headOf(dirs);
    const oid = /^[0-9a-f]{40}$/.test(ref) ? ref : await git.resolveRef({ fs, gitdir, ref });
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
  const limits = defaultStateLimits();
  const source = createGitSource({
    repository: repoPath,
    ...(directory !== undefined ? { directory } : {}),
    maxFileSize: limits.maxFileSize,
    // A local repository path: nothing is fetched, so these two have no effect; the source takes them.
    ref: schemaDefault(['storage', 'git', 'ref']) as string,
    maxFetchSize: schemaDefault(['storage', 'git', 'max_fetch_size']) as number,
  });
  const rev = await source.lookup(commit);
  if (rev === undefined) throw new Error(`commit ${commit} is not in ${repoPath}`);
  const fileSet = await source.files({ ...rev, ref: name });
  const result = await readState(fileSet, { reference: name, revision: commit, ...limits });
  const problems = result.problems.map((p) => ({ ...p, file: `${name}:${p.file}` }));
  const under = normalizeDirectory(directory);
  return {
    name,
    ...(result.snapshot ? { snapshot: result.snapshot } : {}),
    problems,
    files: fileSet.files,
    stateFiles: result.files,
    display: (path) => `${name}:${under === '' ? path : `${under}/${path}`}`,
  };
}
