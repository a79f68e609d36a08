/**
 * The handle every reader of a Git object database takes (the bare mirror, or a local repository):
 * the file system, the git folder and isomorphic-git's cache. A type only, in a file of its own so
 * that the readers (objects.ts, object-header.ts) share it without importing one another both ways.
 */
export interface ObjectDb {
  /** isomorphic-git FsClient. */
  readonly fs: unknown;
  readonly gitdir: string;
  /** isomorphic-git's cache object (parsed pack indexes), shared by every read of this database; read at each call (it may be replaced). */
  readonly cache: object;
}
