/**
 * Reading a commit's state files straight from a Git object database (the bare mirror, or a local
 * repository): no work tree, no checkout. A file's content id is its blob id, so every branch
 * holding the same bytes at the same path shares one parsed document in the store's parse cache.
 */
import git from 'isomorphic-git';
import { FileRefusedError, tooLarge } from '../file-refused.js';
import type { Revision, SourceFile } from '../types.js';
import type { ObjectDb } from './object-db.js';
import { readObjectHeader, type StoredObject } from './object-header.js';
import type { ObjectType } from './pack-format.js';

/** Directory names never descended into (as for the local backend). */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

type Fs = Parameters<typeof git.readCommit>[0]['fs'];

const fsOf = (db: ObjectDb) => db.fs as Fs;

/** An object too large to inflate (isomorphic-git holds an object whole while reading it). */
export class ObjectTooLargeError extends Error {
  constructor(oid: string, stored: StoredObject, limit: number) {
    const what =
      stored.footprint > stored.size
        ? `is stored as a delta of an object of ${stored.footprint} bytes`
        : `is ${stored.size} bytes`;
    super(`${stored.type} ${oid} ${what}, over the limit of ${limit} bytes`);
    this.name = 'ObjectTooLargeError';
  }
}

/**
 * The header of `oid`, checked before anything inflates it: it exists (else an error with code
 * NotFoundError, as isomorphic-git's), has the expected type, and fits in `limit` bytes.
 */
export async function checkObject(db: ObjectDb, oid: string, type: ObjectType | undefined, limit: number): Promise<StoredObject> {
  const stored = await readObjectHeader(db, oid);
  if (stored === undefined) throw Object.assign(new Error(`object ${oid} is not in the repository`), { code: 'NotFoundError' });
  if (type !== undefined && stored.type !== type) {
    throw Object.assign(new Error(`object ${oid} is a ${stored.type}, not a ${type}`), { code: 'ObjectTypeError' });
  }
  if (stored.footprint > limit) throw new ObjectTooLargeError(oid, stored, limit);
  return stored;
}

/** True when `oid` is a commit in the database (read from its header: nothing is inflated). */
export async function hasCommit(db: ObjectDb, oid: string): Promise<boolean> {
  const stored = await readObjectHeader(db, oid);
  if (stored === undefined) return false;
  if (stored.type !== 'commit') throw Object.assign(new Error(`object ${oid} is a ${stored.type}, not a commit`), { code: 'ObjectTypeError' });
  return true;
}

/**
 * The largest tag or commit object read to peel a reference or describe a revision. A bound on
 * hostile input, not a user setting (`storage.max_file_size` bounds the state files): real commit
 * and tag objects are a few KiB.
 */
const MAX_COMMIT_OBJECT_SIZE = 8 * 1024 * 1024;

/** Follows annotated tags to the object they name (only tags are read). */
export async function peel(db: ObjectDb, oid: string): Promise<string> {
  let at = oid;
  for (let i = 0; i < 10; i++) {
    const stored = await checkObject(db, at, undefined, Number.POSITIVE_INFINITY);
    if (stored.type !== 'tag') return at;
    await checkObject(db, at, 'tag', MAX_COMMIT_OBJECT_SIZE);
    at = (await git.readTag({ fs: fsOf(db), gitdir: db.gitdir, oid: at, cache: db.cache })).tag.object;
  }
  return at;
}

/** `Name <email>`, the message without its trailing newline, and the commit time (RFC 3339). */
export async function revisionMeta(db: ObjectDb, oid: string): Promise<NonNullable<Revision['meta']>> {
  await checkObject(db, oid, 'commit', MAX_COMMIT_OBJECT_SIZE);
  const { commit } = await git.readCommit({ fs: fsOf(db), gitdir: db.gitdir, oid, cache: db.cache });
  return {
    author: `${commit.author.name} <${commit.author.email}>`,
    message: withoutTrailingNewlines(commit.message),
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
 * Every file under `directory` at `commit`, paths relative to it, in byte order, each with its
 * size (from its object header). Symlinks are listed but refused (their target is outside our
 * reach); submodules are skipped. No object over `maxFileSize` is inflated: a larger blob is
 * refused when read (a located problem), a larger commit or tree fails the listing.
 */
export async function listFiles(db: ObjectDb, commit: string, directory: string, maxFileSize: number): Promise<SourceFile[]> {
  const fs = fsOf(db);
  const { gitdir } = db;
  const readTree = async (oid: string) => {
    await checkObject(db, oid, 'tree', maxFileSize);
    return (await git.readTree({ fs, gitdir, oid, cache: db.cache })).tree;
  };
  await checkObject(db, commit, 'commit', maxFileSize);
  let root = (await git.readCommit({ fs, gitdir, oid: commit, cache: db.cache })).commit.tree;
  for (const part of directory === '' ? [] : directory.split('/')) {
    const entry = (await readTree(root)).find((e) => e.path === part);
    if (entry?.type !== 'tree') throw new DirectoryMissingError(directory, commit);
    root = entry.oid;
  }
  const out: SourceFile[] = [];
  const visit = async (treeOid: string, prefix: string): Promise<void> => {
    for (const e of await readTree(treeOid)) {
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
          const stored = await readObjectHeader(db, oid);
          out.push({
            path,
            contentId: oid,
            ...(stored !== undefined ? { size: stored.size } : {}),
            bytes: () => readBlob(db, oid, path, maxFileSize),
          });
        }
      }
      // type 'commit': a submodule, whose content is not in this repository
    }
  };
  await visit(root, '');
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return out;
}

/** A file's bytes, refused (file.too-large) when it, or an object git stored it as a delta of, is over `maxFileSize`. */
export async function readBlob(db: ObjectDb, oid: string, path: string, maxFileSize: number): Promise<Uint8Array> {
  try {
    await checkObject(db, oid, 'blob', maxFileSize);
  } catch (err) {
    if (!(err instanceof ObjectTooLargeError)) throw err;
    const stored = (await readObjectHeader(db, oid))!;
    if (stored.size > maxFileSize) throw tooLarge(path, stored.size, maxFileSize);
    throw new FileRefusedError(
      'file.too-large',
      `${path} is stored as a delta of an object of ${stored.footprint} bytes, over the limit of ${maxFileSize} bytes`,
      'git stores this file as a change to a larger object: raise storage.max_file_size',
    );
  }
  const { blob } = await git.readBlob({ fs: fsOf(db), gitdir: db.gitdir, oid, cache: db.cache });
  return blob;
}

/** `text` without the newlines at its end, in one backward scan (`/\n+$/` backtracks quadratically on a long run of them). */
function withoutTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 10) end--;
  return end === text.length ? text : text.slice(0, end);
}
