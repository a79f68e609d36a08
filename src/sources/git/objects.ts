/**
 * Reading a commit's state files straight from a Git object database (the bare mirror, or a local
 * repository): no work tree, no checkout. A file's content id is its blob id, so every branch
 * holding the same bytes at the same path shares one parsed document in the store's parse cache.
 */
import git from 'isomorphic-git';
import { FileRefusedError } from '../file-refused.js';
import type { Revision, SourceFile } from '../types.js';

export interface ObjectDb {
  /** isomorphic-git FsClient. */
  readonly fs: unknown;
  readonly gitdir: string;
  /** isomorphic-git's cache object (parsed pack indexes), shared by every read of this database; read at each call (it may be replaced). */
  readonly cache: object;
}

/** Directory names never descended into (as for the local backend). */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

type Fs = Parameters<typeof git.readCommit>[0]['fs'];

const fsOf = (db: ObjectDb) => db.fs as Fs;

export async function hasCommit(db: ObjectDb, oid: string): Promise<boolean> {
  try {
    await git.readCommit({ fs: fsOf(db), gitdir: db.gitdir, oid, cache: db.cache });
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'NotFoundError') return false;
    throw err;
  }
}

/** True when the object exists, whatever its type. */
export async function hasObject(db: ObjectDb, oid: string): Promise<boolean> {
  try {
    await git.readObject({ fs: fsOf(db), gitdir: db.gitdir, oid, format: 'deflated', cache: db.cache });
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'NotFoundError') return false;
    throw err;
  }
}

/** Follows annotated tags to the object they name. */
export async function peel(db: ObjectDb, oid: string): Promise<string> {
  let at = oid;
  for (let i = 0; i < 10; i++) {
    const o = await git.readObject({ fs: fsOf(db), gitdir: db.gitdir, oid: at, cache: db.cache });
    if (o.type !== 'tag') return at;
    at = (o.object as { object: string }).object;
  }
  return at;
}

/** `Name <email>`, the message without its trailing newline, and the commit time (RFC 3339). */
export async function revisionMeta(db: ObjectDb, oid: string): Promise<NonNullable<Revision['meta']>> {
  const { commit } = await git.readCommit({ fs: fsOf(db), gitdir: db.gitdir, oid, cache: db.cache });
  return {
    author: `${commit.author.name} <${commit.author.email}>`,
    message: commit.message.replace(/\n+$/, ''),
    at: new Date(commit.committer.timestamp * 1000).toISOString(),
  };
}

export class DirectoryMissingError extends Error {
  constructor(directory: string, commit: string) {
    super(`storage.git.directory "${directory}" does not exist at commit ${commit}`);
    this.name = 'DirectoryMissingError';
  }
}

/** "", "flags", "a/b": no leading/trailing slash, no "." or ".." parts. */
export function normalizeDirectory(directory: string | undefined): string {
  const parts = (directory ?? '').split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new Error(`storage.git.directory must stay inside the repository (got "${directory}")`);
  return parts.join('/');
}

/**
 * Every file under `directory` at `commit`, paths relative to it, in byte order. Symlinks are
 * listed but refused (their target is outside our reach); submodules are skipped.
 */
export async function listFiles(db: ObjectDb, commit: string, directory: string): Promise<SourceFile[]> {
  const fs = fsOf(db);
  const { gitdir, cache } = db;
  let root: string;
  if (directory === '') {
    root = (await git.readCommit({ fs, gitdir, oid: commit, cache })).commit.tree;
  } else {
    try {
      root = (await git.readTree({ fs, gitdir, oid: commit, filepath: directory, cache })).oid;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'NotFoundError' || code === 'ObjectTypeError') throw new DirectoryMissingError(directory, commit);
      throw err;
    }
  }
  const out: SourceFile[] = [];
  const visit = async (treeOid: string, prefix: string): Promise<void> => {
    const { tree } = await git.readTree({ fs, gitdir, oid: treeOid, cache });
    for (const e of tree) {
      const path = prefix === '' ? e.path : `${prefix}/${e.path}`;
      if (e.type === 'tree') {
        if (!SKIPPED_DIRS.has(e.path)) await visit(e.oid, path);
      } else if (e.type === 'blob') {
        if (e.mode === '120000') {
          const refused = new FileRefusedError(
            'file.symlink-outside-root',
            `${path} is a symbolic link; links are not followed in a git repository`,
            'commit the file itself instead of a link to it',
          );
          out.push({ path, contentId: `refused:${refused.rule}`, bytes: () => Promise.reject(refused) });
        } else {
          const oid = e.oid;
          out.push({ path, contentId: oid, bytes: () => readBlob(db, oid) });
        }
      }
      // type 'commit': a submodule, whose content is not in this repository
    }
  };
  await visit(root, '');
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return out;
}

export async function readBlob(db: ObjectDb, oid: string): Promise<Uint8Array> {
  const { blob } = await git.readBlob({ fs: fsOf(db), gitdir: db.gitdir, oid, cache: db.cache });
  return blob;
}
