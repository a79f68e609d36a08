/**
 * A Source knows one backend and nothing else: which references exist, which revision each
 * points at, and the bytes of the files at a revision. It never parses YAML.
 */
import type { Problem } from '../model/problem.js';

export interface Revision {
  /** Commit id, manifest digest, or a content hash of the file set (local). */
  readonly id: string;
  readonly ref: string;
  readonly meta?: { readonly author?: string; readonly message?: string; readonly at?: string };
}

export interface SourceFile {
  /** Relative to the state root, `/`-separated, no leading `./`. */
  readonly path: string;
  /** Blob id / ETag / digest / `mtimeMs-size`: equal ids mean equal bytes. */
  readonly contentId: string;
  /** Size in bytes when known before reading (used to refuse files over `storage.max_file_size`). */
  readonly size?: number;
  bytes(): Promise<Uint8Array>;
}

export interface FileSet {
  readonly revision: Revision;
  readonly files: readonly SourceFile[];
  /**
   * What the backend refused in the revision itself, before any file (e.g. a bundle whose
   * manifest declares a config blob over the limit): the revision is rejected with these
   * problems, like an invalid one, and no file is read.
   */
  readonly problems?: readonly Problem[];
}

/** The subset of a pino logger a source reports to (a repaired cache, say). */
export interface SourceLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** One commit of a file's history (Source.history): the file's bytes there and at its first parent. */
export interface FileChange {
  /** The commit id. */
  readonly commit: string;
  /** Its author, message and commit time (read when asked: a walk keeps many commits and needs one). */
  meta(): Promise<NonNullable<Revision['meta']>>;
  /** Its first parent; undefined for a root commit. */
  readonly parent?: string;
  /** The file's bytes at the commit; undefined when the commit does not hold the file. */
  readonly after?: () => Promise<Uint8Array>;
  /** The file's bytes at the parent; undefined when the parent does not hold it (or there is none). */
  readonly before?: () => Promise<Uint8Array>;
}

export interface FileHistory {
  /** The commits, newest first, whose file differs from their first parent's (by content id). */
  readonly changes: readonly FileChange[];
  /** Commits walked. */
  readonly walked: number;
  /** Why the walk stopped before a root commit: the bound was reached, or a parent is not held locally. */
  readonly stopped?: 'limit' | 'missing-parent';
}

export interface Source {
  readonly kind: 'local' | 'git' | 'oci' | 'object';
  /** What exists now and where it points. Cheap. */
  refs(): Promise<Map<string, Revision>>;
  /** Every file under the state root at that revision (the loader picks the state files). */
  files(rev: Revision): Promise<FileSet>;
  /** Local only; others are polled. Returns an unsubscribe function. */
  watch?(onChange: () => void): () => Promise<void>;
  /**
   * A name `refs()` does not list but the backend can still serve, e.g. a full Git commit id.
   * Such a revision is immutable: the store never refreshes it. Undefined when unknown.
   */
  lookup?(name: string): Promise<Revision | undefined>;
  /** Called before several revisions are built in a row: fetch what they need in as few round trips as possible. */
  prefetch?(revs: readonly Revision[]): Promise<void>;
  /**
   * Backends with a commit history (Git): the first-parent history of `revisionId`, at most
   * `limit` commits, keeping the commits that changed the file at `path` (relative to the state
   * root). Others have no history and leave it out.
   */
  history?(revisionId: string, path: string, limit: number): Promise<FileHistory>;
  /** The refs as the backend's local copy last saw them: lets a restart serve while the backend is unreachable. */
  cachedRefs?(): Promise<Map<string, Revision>>;
  close?(): Promise<void>;
}
