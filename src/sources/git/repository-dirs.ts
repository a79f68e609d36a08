/**
 * Where a repository on disk keeps its objects and refs, from the path a person gives: a working
 * tree (its `.git` folder), a bare repository (the path itself), or a linked worktree made by
 * `git worktree add`, whose `.git` is a file (`gitdir: <main>/.git/worktrees/<name>`) naming a
 * folder that holds only that worktree's `HEAD` and points at the shared objects and refs through
 * its `commondir` file. Objects, branches and tags are read from the shared folder; `HEAD` from
 * the worktree's own.
 *
 * Only the first line of each pointer file is read, and only a bounded prefix of it: these are
 * small files git writes, and a damaged one is refused rather than followed at length.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

export interface RepositoryDirs {
  /** The folder with `objects/` and `refs/` (what isomorphic-git calls the gitdir). */
  readonly common: string;
  /** The folder with this working tree's `HEAD` (the same as `common` except in a linked worktree). */
  readonly head: string;
}

const MAX_POINTER = 4096;

function firstLine(file: string): string {
  const size = statSync(file).size;
  if (size > MAX_POINTER) throw new Error(`${file} is not a git pointer file (${size} bytes)`);
  return readFileSync(file, 'utf8').split('\n', 1)[0]!.trim();
}

export function repositoryDirs(path: string): RepositoryDirs {
  const dotGit = join(path, '.git');
  if (!existsSync(dotGit)) return { common: path, head: path };
  if (statSync(dotGit).isDirectory()) return { common: dotGit, head: dotGit };
  const pointer = firstLine(dotGit);
  if (!pointer.startsWith('gitdir:')) throw new Error(`${dotGit} names no git directory`);
  const named = pointer.slice('gitdir:'.length).trim();
  const head = isAbsolute(named) ? named : resolve(path, named);
  const commondirFile = join(head, 'commondir');
  if (!existsSync(commondirFile)) return { common: head, head };
  const common = firstLine(commondirFile);
  return { common: isAbsolute(common) ? common : resolve(head, common), head };
}

/** What `HEAD` of the working tree at `dirs` points at: a ref name (`refs/heads/x`) or a commit id. */
export function headOf(dirs: RepositoryDirs): string {
  const line = firstLine(join(dirs.head, 'HEAD'));
  return line.startsWith('ref:') ? line.slice('ref:'.length).trim() : line;
}
