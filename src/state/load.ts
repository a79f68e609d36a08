/**
 * CONTRACT (to be implemented by the state-core work): the pure loader. Files in, a snapshot or
 * located problems out. No I/O. Same code for `vexil serve`, `vexil validate`, `vexil evaluate`.
 */
import type { Snapshot } from './model.js';
import type { Problem } from './problem.js';

export interface StateFile {
  /** Relative to the state root, `/`-separated. */
  readonly path: string;
  readonly bytes: Uint8Array;
  /** Equal ids mean equal bytes; used to reuse parsed documents across loads and references. */
  readonly contentId?: string;
}

export interface LoadOptions {
  readonly reference: string;
  readonly revision: string;
  /** Build time (createdAt/updatedAt); defaults to now. Injected for tests. */
  readonly now?: Date;
  /** Reuse parsed documents keyed by contentId (shared across references and reloads). */
  readonly parseCache?: ParseCache;
}

export interface ParseCache {
  get(contentId: string): unknown;
  set(contentId: string, parsed: unknown): void;
}

export interface LoadResult {
  /** Present iff there is no problem of severity `error`. */
  readonly snapshot?: Snapshot;
  /** Every problem found (errors and warnings), sorted by file, line, column. */
  readonly problems: readonly Problem[];
}

/**
 * `files` are the state files already selected by the index (see `selectStateFiles`).
 */
export function load(files: readonly StateFile[], opts: LoadOptions): LoadResult {
  void files;
  void opts;
  throw new Error('load: not implemented yet');
}

/** The index-file names, in order of preference, read only at the state root. */
export const INDEX_FILE_NAMES = ['.vexil.yml', '.flipt.yml'] as const;

/**
 * Which of `paths` are state files: applies the index file (`include`/`exclude`, gobwas-glob
 * semantics where `*` crosses `/`) or the default discovery when there is none. Problems in the
 * index file are reported located.
 */
export function selectStateFiles(
  paths: readonly string[],
  indexFile?: StateFile,
): { paths: string[]; problems: Problem[] } {
  void paths;
  void indexFile;
  throw new Error('selectStateFiles: not implemented yet');
}
