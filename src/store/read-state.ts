/**
 * FileSet → LoadResult: the one reader of a revision's files, for every backend alike. The store's
 * builds (build-revision.ts) and the CLI (`vexil validate`, `evaluate`, `test`, `bundle build`,
 * `diff`) use it: find the index file at the root, let the loader select the state files, read
 * their bytes (within the size limits) and load them. A file that cannot be read becomes a located
 * problem, never an exception; a backend that fails while reading (SourceReadError) fails the
 * whole read.
 *
 * Here rather than in sources/: a Source hands out bytes and revisions and never parses YAML;
 * turning its files into a load result is the store's side of that seam. The refusals a backend
 * may throw for one file (sources/file-refused.ts) stay with the backends that throw them.
 *
 * Two size limits, both checked from the sizes the backend knows before reading (git object
 * headers, file stats, listings, descriptors) and again on the bytes actually read: each file
 * (`maxFileSize`), and all state files of the revision together (`maxStateSize`, the index file
 * included). A revision over the second is refused before any more is read, the problem located
 * on the file that crossed the limit.
 */
import { INDEX_FILE_NAMES, UNREAD, load, loadIfCached, parseCacheKey, selectStateFiles, type BuildCache, type LoadOptions, type LoadResult, type ParseCache, type StateFile } from '../state/load.js';
import type { Problem } from '../model/problem.js';
import { FileRefusedError, stateTooLarge, tooLarge } from '../sources/file-refused.js';
import { SourceReadError } from '../sources/source-read-error.js';
import { keepStatePolicy, readStatePolicy } from './state-policy.js';
import { keepTestContexts, readTestContexts } from './test-contexts.js';
import type { FileSet, SourceFile } from '../sources/types.js';

export interface ReadStateOptions {
  readonly reference: string;
  /** Defaults to the FileSet's revision id. */
  readonly revision?: string;
  readonly now?: Date;
  readonly parseCache?: ParseCache;
  /** Reuse of built flags, segments and namespaces across loads (see LoadOptions.buildCache). */
  readonly buildCache?: BuildCache;
  /** `storage.max_file_size`: files over this many bytes are refused with a `file.too-large` problem. */
  readonly maxFileSize: number;
  /** `storage.max_state_size`: all state files together over this many bytes are a `state.too-large` problem. */
  readonly maxStateSize: number;
  /**
   * Whether an accepted snapshot keeps the contexts of the revision's flag test files, for the
   * diff's impact preview (test-contexts.ts; default true). Commands that never diff skip reading them.
   */
  readonly testContexts?: boolean;
  /**
   * Whether an accepted snapshot keeps the revision's policy file (`.vexil/policy.yml`, parsed) for
   * the guards on a change (state-policy.ts; default true).
   */
  readonly policy?: boolean;
  /** Semantic checks to run on a state that builds (LoadOptions.checks). */
  readonly checks?: LoadOptions['checks'];
}

export interface ReadStateResult extends LoadResult {
  /** The state files the index selected (read or refused), in selection order. */
  readonly files: readonly string[];
  /**
   * Only when the state is rejected (no snapshot): the text of a file that was read (the index
   * file included), by path, to quote the offending lines of its problems (state/excerpt.ts).
   * Absent on success, so nothing keeps the bytes of an accepted revision.
   */
  readonly sourceText?: (file: string) => string | undefined;
}

/** Lenient: a file with invalid UTF-8 is quoted with U+FFFD where its bad bytes are. */
const quoting = new TextDecoder('utf-8');

export async function readState(fileSet: FileSet, opts: ReadStateOptions): Promise<ReadStateResult> {
  const { maxFileSize } = opts;
  const budget = new StateBudget(opts.maxStateSize);
  const problems: Problem[] = [];
  let indexFile: StateFile | undefined;
  const stateFiles: StateFile[] = [];
  /** `result` with the texts of the files read, when it is a rejection. */
  const withTexts = (result: ReadStateResult): ReadStateResult => {
    if (result.snapshot !== undefined) return result;
    const read = [...(indexFile !== undefined ? [indexFile] : []), ...stateFiles];
    const sourceText = (file: string) => {
      const f = read.find((x) => x.path === file && x.bytes !== UNREAD);
      return f === undefined ? undefined : quoting.decode(f.bytes);
    };
    return { ...result, sourceText };
  };
  if (fileSet.problems?.some((p) => p.severity === 'error') === true) return { problems: sortProblems(fileSet.problems), files: [] };

  for (const name of INDEX_FILE_NAMES) {
    const f = fileSet.files.find((x) => x.path === name);
    if (f === undefined) continue;
    const read = await readFile(f, maxFileSize);
    if ('problem' in read) return { problems: [read.problem], files: [] }; // no index = a different selection: do not guess
    const over = budget.add(f.path, read.file.bytes.byteLength);
    if (over !== undefined) return { problems: [problemOf(f, over)], files: [] };
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
  const selected = selection.paths.flatMap((path) => byPath.get(path) ?? []);
  const refused = (problem: Problem): ReadStateResult => withTexts({ problems: sortProblems([...problems, problem]), files: selection.paths });

  // Sizes known before reading: a revision whose state is over the limit is refused unread.
  for (const f of selected) {
    if (f.size === undefined || f.size > maxFileSize) continue; // the latter is refused on its own
    const over = budget.add(f.path, f.size);
    if (over !== undefined) return refused(problemOf(f, over));
  }
  /** Reads `f`, counting the bytes its known size did not announce. */
  const readCounted = async (f: SourceFile) => {
    const read = await readFile(f, maxFileSize);
    if ('problem' in read) return read;
    const unannounced = read.file.bytes.byteLength - (f.size ?? 0);
    const over = unannounced > 0 ? budget.add(f.path, unannounced) : undefined;
    return over !== undefined ? { problem: problemOf(f, over), over: true } : read;
  };

  const unread = new Map<number, SourceFile>();
  for (const f of selected) {
    if (cached(f, opts.parseCache, maxFileSize)) {
      unread.set(stateFiles.length, f);
      stateFiles.push({ path: f.path, bytes: UNREAD, contentId: contentIdOf(f) });
      continue;
    }
    const read = await readCounted(f);
    if ('over' in read) return refused(read.problem);
    if ('problem' in read) problems.push(read.problem);
    else stateFiles.push(read.file);
  }

  const loadOptions: LoadOptions = {
    reference: opts.reference,
    revision: opts.revision ?? fileSet.revision.id,
    ...(opts.now !== undefined ? { now: opts.now } : {}),
    ...(opts.parseCache !== undefined ? { parseCache: opts.parseCache } : {}),
    ...(opts.buildCache !== undefined ? { buildCache: opts.buildCache } : {}),
    ...(opts.checks !== undefined ? { checks: opts.checks } : {}),
  };
  let result = unread.size > 0 ? loadIfCached(stateFiles, loadOptions) : undefined;
  if (result === undefined) {
    for (const [index, f] of unread) {
      const read = await readCounted(f);
      if ('over' in read) return refused(read.problem);
      if ('problem' in read) problems.push(read.problem);
      stateFiles[index] = 'problem' in read ? DROPPED : read.file;
    }
    result = load(
      stateFiles.filter((f) => f !== DROPPED),
      loadOptions,
    );
  }
  // Bounded (test-contexts.ts); a test file never decides whether the state is accepted.
  if (result.snapshot !== undefined && opts.testContexts !== false) keepTestContexts(result.snapshot, await readTestContexts(fileSet.files));
  // Bounded (state-policy.ts); the policy never decides whether the state is accepted.
  if (result.snapshot !== undefined && opts.policy !== false) keepStatePolicy(result.snapshot, await readStatePolicy(fileSet.files));
  const files = selection.paths;
  if (problems.length === 0) return withTexts({ ...result, files });

  const all = sortProblems([...problems, ...result.problems]);
  return withTexts(all.some((p) => p.severity === 'error') ? { problems: all, files } : { ...result, problems: all, files });
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
    if (err instanceof SourceReadError) throw err; // the backend failed, not this file
    const refused =
      err instanceof FileRefusedError
        ? err
        : new FileRefusedError('file.unreadable', `${f.path} could not be read: ${(err as Error).message}`);
    return { problem: problemOf(f, refused) };
  }
}

function problemOf(f: SourceFile, refused: FileRefusedError): Problem {
  return {
    severity: 'error',
    rule: refused.rule,
    file: f.path,
    line: 0,
    column: 0,
    message: refused.message,
    ...(refused.hint !== undefined ? { hint: refused.hint } : {}),
  };
}

/** Bytes of the revision's state files counted so far, against `storage.max_state_size`. */
class StateBudget {
  private total = 0;
  constructor(private readonly max: number) {}

  /** Counts `size` more bytes of `path`: the refusal when they bring the total over the limit. */
  add(path: string, size: number): FileRefusedError | undefined {
    this.total += size;
    return this.total > this.max ? stateTooLarge(path, size, this.total, this.max) : undefined;
  }
}

/** By file, line, column (stable for equal locations). */
export function sortProblems(problems: readonly Problem[]): Problem[] {
  return [...problems].sort((a, b) =>
    a.file !== b.file ? (a.file < b.file ? -1 : 1) : a.line !== b.line ? a.line - b.line : a.column - b.column,
  );
}
