/**
 * FileSet → LoadResult, shared by every source and by `vexil validate`: find the index file at
 * the root, let the loader select the state files, read their bytes (within the size limit) and
 * load them. A file that cannot be read becomes a located problem, never an exception.
 */
import { INDEX_FILE_NAMES, load, selectStateFiles, type LoadResult, type ParseCache, type StateFile } from '../state/load.js';
import type { Problem } from '../state/problem.js';
import { DEFAULT_MAX_FILE_SIZE, FileRefusedError, tooLarge } from './file-refused.js';
import type { FileSet, SourceFile } from './types.js';

export interface ReadStateOptions {
  readonly reference: string;
  /** Defaults to the FileSet's revision id. */
  readonly revision?: string;
  readonly now?: Date;
  readonly parseCache?: ParseCache;
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

  const byPath = new Map(fileSet.files.map((f) => [f.path, f]));
  const stateFiles: StateFile[] = [];
  for (const path of selection.paths) {
    const f = byPath.get(path);
    if (f === undefined) continue;
    const read = await readFile(f, maxFileSize);
    if ('problem' in read) problems.push(read.problem);
    else stateFiles.push(read.file);
  }

  const result = load(stateFiles, {
    reference: opts.reference,
    revision: opts.revision ?? fileSet.revision.id,
    ...(opts.now !== undefined ? { now: opts.now } : {}),
    ...(opts.parseCache !== undefined ? { parseCache: opts.parseCache } : {}),
  });
  const files = selection.paths;
  if (problems.length === 0) return { ...result, files };

  const all = sortProblems([...problems, ...result.problems]);
  return all.some((p) => p.severity === 'error') ? { problems: all, files } : { ...result, problems: all, files };
}

async function readFile(f: SourceFile, maxFileSize: number): Promise<{ file: StateFile } | { problem: Problem }> {
  try {
    if (f.size !== undefined && f.size > maxFileSize) throw tooLarge(f.path, f.size, maxFileSize);
    const bytes = await f.bytes();
    if (bytes.byteLength > maxFileSize) throw tooLarge(f.path, bytes.byteLength, maxFileSize);
    // Keyed by path too: parsed documents may carry their file name (problem locations), so two
    // files with equal bytes must not share a cache entry. Same path + same bytes still shares
    // across reloads and across references.
    return { file: { path: f.path, bytes, contentId: `${f.path}\0${f.contentId}` } };
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
