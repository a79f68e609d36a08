/**
 * FileSet → LoadResult, shared by every source and by `vexil validate`: find the index file at
 * the root, let the loader select the state files, read their bytes (within the size limit) and
 * load them. A file that cannot be read becomes a located problem, never an exception.
 */
import { INDEX_FILE_NAMES, UNREAD, load, loadIfCached, parseCacheKey, selectStateFiles, type BuildCache, type LoadOptions, type LoadResult, type ParseCache, type StateFile } from '../state/load.js';
import type { Problem } from '../state/problem.js';
import { DEFAULT_MAX_FILE_SIZE, FileRefusedError, tooLarge } from './file-refused.js';
import type { FileSet, SourceFile } from './types.js';

export interface ReadStateOptions {
  readonly reference: string;
  /** Defaults to the FileSet's revision id. */
  readonly revision?: string;
  readonly now?: Date;
  readonly parseCache?: ParseCache;
  /** Reuse of built flags, segments and namespaces across loads (see LoadOptions.buildCache). */
  readonly buildCache?: BuildCache;
  /** Files over this many bytes are refused with a `file.too-large` problem (default 8 MiB). */
  readonly maxFileSize?: number;
}

export interface ReadStateResult extends LoadResult {
  /** The state files the index selected (read or refused), in selection order. */
  readonly files: readonly string[];
}

export async function readState(fileSet: FileSet, opts: ReadStateOptions): Promise<ReadStateResult> {
  const maxFileSize = opts.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;
  const problems: Problem[] = [];

  let indexFile: StateFile | undefined;
  for (const name of INDEX_FILE_NAMES) {
    const f = fileSet.files.find((x) => x.path === name);
    if (f === undefined) continue;
    const read = await readFile(f, maxFileSize);
    if ('problem' in read) return { problems: [read.problem], files: [] }; // no index = a different selection: do not guess
    indexFile = read.file;
    break;
  }

  const selection = selectStateFiles(
    fileSet.files.map((f) => f.path),
    indexFile,
  );
  problems.push(...selection.problems);

  // Files whose content the parse cache already holds are not read (a branch shares most of its
  // files with others): the load then runs from the cache, and reads them only if it needs them.
  const byPath = new Map(fileSet.files.map((f) => [f.path, f]));
  const stateFiles: StateFile[] = [];
  const unread = new Map<number, SourceFile>();
  for (const path of selection.paths) {
    const f = byPath.get(path);
    if (f === undefined) continue;
    if (cached(f, opts.parseCache, maxFileSize)) {
      unread.set(stateFiles.length, f);
      stateFiles.push({ path: f.path, bytes: UNREAD, contentId: contentIdOf(f) });
      continue;
    }
    const read = await readFile(f, maxFileSize);
    if ('problem' in read) problems.push(read.problem);
    else stateFiles.push(read.file);
  }

  const loadOptions: LoadOptions = {
    reference: opts.reference,
    revision: opts.revision ?? fileSet.revision.id,
    ...(opts.now !== undefined ? { now: opts.now } : {}),
    ...(opts.parseCache !== undefined ? { parseCache: opts.parseCache } : {}),
    ...(opts.buildCache !== undefined ? { buildCache: opts.buildCache } : {}),
  };
  let result = unread.size > 0 ? loadIfCached(stateFiles, loadOptions) : undefined;
  if (result === undefined) {
    for (const [index, f] of unread) {
      const read = await readFile(f, maxFileSize);
      if ('problem' in read) problems.push(read.problem);
      stateFiles[index] = 'problem' in read ? DROPPED : read.file;
    }
    result = load(
      stateFiles.filter((f) => f !== DROPPED),
      loadOptions,
    );
  }
  const files = selection.paths;
  if (problems.length === 0) return { ...result, files };

  const all = sortProblems([...problems, ...result.problems]);
  return all.some((p) => p.severity === 'error') ? { problems: all, files } : { ...result, problems: all, files };
}

const DROPPED: StateFile = { path: '', bytes: UNREAD };

// Keyed by path too: parsed documents may carry their file name (problem locations), so two
// files with equal bytes must not share a cache entry. Same path + same bytes still shares
// across reloads and across references.
function contentIdOf(f: SourceFile): string {
  return `${f.path}\0${f.contentId}`;
}

/**
 * Whether the parse cache holds this file's content. Equal content ids mean equal bytes, and an
 * entry exists only for bytes that were read within the size limit, so the size needs no check.
 */
function cached(f: SourceFile, cache: ParseCache | undefined, maxFileSize: number): boolean {
  if (cache?.has === undefined || (f.size !== undefined && f.size > maxFileSize)) return false;
  const key = parseCacheKey(f.path, contentIdOf(f));
  return key !== undefined && cache.has(key);
}

async function readFile(f: SourceFile, maxFileSize: number): Promise<{ file: StateFile } | { problem: Problem }> {
  try {
    if (f.size !== undefined && f.size > maxFileSize) throw tooLarge(f.path, f.size, maxFileSize);
    const bytes = await f.bytes();
    if (bytes.byteLength > maxFileSize) throw tooLarge(f.path, bytes.byteLength, maxFileSize);
    return { file: { path: f.path, bytes, contentId: contentIdOf(f) } };
  } catch (err) {
    const refused =
      err instanceof FileRefusedError
        ? err
        : new FileRefusedError('file.unreadable', `${f.path} could not be read: ${(err as Error).message}`);
    return {
      problem: {
        severity: 'error',
        rule: refused.rule,
        file: f.path,
        line: 0,
        column: 0,
        message: refused.message,
        ...(refused.hint !== undefined ? { hint: refused.hint } : {}),
      },
    };
  }
}

/** By file, line, column (stable for equal locations). */
export function sortProblems(problems: readonly Problem[]): Problem[] {
  return [...problems].sort((a, b) =>
    a.file !== b.file ? (a.file < b.file ? -1 : 1) : a.line !== b.line ? a.line - b.line : a.column - b.column,
  );
}
