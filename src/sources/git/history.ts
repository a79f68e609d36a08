/**
 * A file's history in a Git object database, for "the last commit that touched this flag": the
 * first-parent chain of a commit, walked backwards for at most `limit` commits, keeping the commits
 * whose blob at the path differs from their first parent's. Only trees on the path are read (one
 * per folder level and commit) and blobs are compared by id, so a commit is never inflated beyond
 * its commit object and a few trees; a kept commit's file bytes and metadata are read only when asked.
 * Every object is size-checked before it is inflated (objects.ts).
 */
import git from 'isomorphic-git';
import type { FileChange, FileHistory } from '../types.js';
import type { ObjectDb } from './object-db.js';
import { checkObject, readBlob, revisionMeta } from './objects.js';

type Fs = Parameters<typeof git.readCommit>[0]['fs'];

/** Commit objects are a few KiB; the same hostile-input bound as objects.ts uses. */
const MAX_COMMIT_OBJECT_SIZE = 8 * 1024 * 1024;

interface CommitLink {
  readonly tree: string;
  readonly parent?: string;
}

async function readLink(db: ObjectDb, oid: string): Promise<CommitLink> {
  await checkObject(db, oid, 'commit', MAX_COMMIT_OBJECT_SIZE);
  const { commit } = await git.readCommit({ fs: db.fs as Fs, gitdir: db.gitdir, oid, cache: db.cache });
  return { tree: commit.tree, ...(commit.parent[0] !== undefined ? { parent: commit.parent[0] } : {}) };
}

/** The blob id at `parts` under `tree`, or undefined when there is none (or it is not a plain file). */
async function blobAt(db: ObjectDb, tree: string, parts: readonly string[], maxTreeSize: number): Promise<string | undefined> {
  let at = tree;
  for (let i = 0; i < parts.length; i++) {
    await checkObject(db, at, 'tree', maxTreeSize);
    const entry = (await git.readTree({ fs: db.fs as Fs, gitdir: db.gitdir, oid: at, cache: db.cache })).tree.find((e) => e.path === parts[i]);
    if (entry === undefined) return undefined;
    const last = i === parts.length - 1;
    if (last) return entry.type === 'blob' && entry.mode !== '120000' ? entry.oid : undefined;
    if (entry.type !== 'tree') return undefined;
    at = entry.oid;
  }
  return undefined;
}

/**
 * The history of `path` (under `directory`, the state root) from `commit` backwards. `maxFileSize`
 * bounds trees and blobs read, as for the state files.
 */
export async function fileHistory(db: ObjectDb, commit: string, directory: string, path: string, limit: number, maxFileSize: number): Promise<FileHistory> {
  const parts = [...(directory === '' ? [] : directory.split('/')), ...path.split('/')];
  const bytesOf = (oid: string | undefined) => (oid === undefined ? undefined : () => readBlob(db, oid, path, maxFileSize));
  const changes: FileChange[] = [];
  let at = commit;
  let link = await readLink(db, at);
  let blob = await blobAt(db, link.tree, parts, maxFileSize);
  for (let walked = 1; ; walked++) {
    let parentLink: CommitLink | undefined;
    let parentBlob: string | undefined;
    if (link.parent !== undefined) {
      try {
        parentLink = await readLink(db, link.parent);
      } catch (err) {
        if ((err as { code?: unknown }).code === 'NotFoundError') return { changes, walked, stopped: 'missing-parent' };
        throw err;
      }
      parentBlob = await blobAt(db, parentLink.tree, parts, maxFileSize);
    }
    if (blob !== parentBlob) {
      const after = bytesOf(blob);
      const before = bytesOf(parentBlob);
      const id = at;
      changes.push({
        commit: id,
        meta: () => revisionMeta(db, id),
        ...(link.parent !== undefined ? { parent: link.parent } : {}),
        ...(after !== undefined ? { after } : {}),
        ...(before !== undefined ? { before } : {}),
      });
    }
    if (link.parent === undefined || parentLink === undefined) return { changes, walked };
    if (walked >= limit) return { changes, walked, stopped: 'limit' };
    at = link.parent;
    link = parentLink;
    blob = parentBlob;
  }
}
