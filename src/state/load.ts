/**
 * The pure loader. Files in, a snapshot or located problems out. No I/O. Same code for
 * `vexil serve`, `vexil validate`, `vexil evaluate`.
 *
 * Stages: parse each file fast (parse.ts; reused through `parseCache` by content id), validate
 * each document against the schema (schema.ts), check all documents together (semantic.ts),
 * build the frozen snapshot (build.ts). Problems are found as path-addressed findings and get
 * their line/column only at the end, and only for the files that have some (locate.ts).
 */
import { aliasExpansionFinding, MAX_ALIAS_EXPANSION, measureAliasExpansion } from './alias-expansion.js';
import type { LoadedDocument } from './document.js';
import type { Finding, FindingsByFile } from './finding.js';
import { compareProblems, compareWalkOrder } from './order.js';
import { buildSnapshot } from './build.js';
import type { BuildCache } from './build.js';
import { jsonSyntaxProblem, locateFindings, yamlSyntaxProblems } from './locate.js';
import type { Snapshot } from '../model/snapshot.js';
import { internFile } from './intern.js';
import type { ContentTable } from './intern.js';
import { YAML_SCHEMA, decodeUtf8, fileKindOf, parseText } from './parse.js';
import { YamlPositions } from './yaml-positions.js';
import type { FileKind } from './parse.js';
import type { Problem } from '../model/problem.js';
import { schemaFindings } from './schema.js';
import { selectFiles } from './select.js';
import { checkDocuments } from './semantic.js';
import { placeFindings, type PlacedFinding } from './checks/place-findings.js';
import { runChecks, type CheckOptions } from './checks/run-checks.js';
import { subjectOf, type LocatedCheck } from './checks/check-report.js';
import type { RuleId } from './rules.js';

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
  /**
   * Reuse built segments and flags whose parsed documents (shared through `parseCache`) and
   * inputs are the same objects; with a content table, also share parsed flags and segments of
   * equal content and whole namespaces (see intern.ts). Goes with the parse cache it was used with.
   */
  readonly buildCache?: BuildCache;
  /**
   * Run the semantic checks (checks/run-checks.ts) on a state that builds, and report them with
   * the other problems (not in the snapshot's warnings). `vexil validate` asks for them; serving
   * does not pay for them.
   */
  readonly checks?: CheckOptions;
}

export type { BuildCache };
export type { CheckOptions, LocatedCheck };
export type { ContentTable } from './intern.js';

export interface ParseCache {
  get(contentId: string): unknown;
  set(contentId: string, parsed: unknown): void;
  /** Whether an entry is held for this key (see parseCacheKey), without counting a hit or miss. */
  has?(contentId: string): boolean;
}

export interface LoadResult {
  /** Present iff there is no problem of severity `error`. */
  readonly snapshot?: Snapshot;
  /** Every problem found (errors and warnings), sorted by file, line, column. */
  readonly problems: readonly Problem[];
  /**
   * With `checks` and a snapshot: the checks' reports among `problems`, each with what it
   * concerns (namespace, flag or segment), sorted like `problems`.
   */
  readonly checks?: readonly LocatedCheck[];
}

/**
 * What the parse cache holds for one content id and decoder: the documents and the findings that
 * depend on that content alone (syntax problems, schema findings), without the file path.
 * Entries are shared and never mutated.
 */
interface ParsedEntry {
  readonly tag: typeof ENTRY_TAG;
  readonly docs: readonly unknown[];
  readonly schema: readonly Finding[];
  /** Located syntax/encoding problems (file left empty); when present there are no documents. */
  readonly syntax?: readonly Omit<Problem, 'file'>[];
  /** Values YAML aliases add to the documents beyond those written out (alias-expansion.ts). */
  readonly aliasAdded: number;
}
const ENTRY_TAG = 'vexil.parsed.v1';

/**
 * The bytes of a state file that was not read because the parse cache holds its content (see
 * `loadIfCached`). Compared by identity.
 */
export const UNREAD: Uint8Array = new Uint8Array(0);

/** The parse-cache key of a file's content (what `ParseCache.has` is asked about); undefined for a refused extension. */
export function parseCacheKey(path: string, contentId: string): string | undefined {
  const kind = fileKindOf(path);
  return typeof kind === 'string' ? `${kind}:${contentId}` : undefined;
}

class UnreadFileNeeded extends Error {}

/**
 * `load` for files of which some are `UNREAD` (their parsed documents are expected in the parse
 * cache, so a reference whose files are mostly shared with others is built without reading them).
 * Undefined when an unread file is needed after all (its entry left the cache, or a problem must
 * be located in its text): read those files and call `load`, which gives the same result.
 */
export function loadIfCached(files: readonly StateFile[], opts: LoadOptions): LoadResult | undefined {
  let result: LoadResult;
  try {
    result = loadUnsafe(files, opts);
  } catch {
    // UnreadFileNeeded, or a bug that `load` will report once every file is read.
    return undefined;
  }
  for (const p of result.problems) {
    for (const f of files) if (f.bytes === UNREAD && f.path === p.file) return undefined;
  }
  return result;
}

/**
 * `files` are the state files already selected by the index (see `selectStateFiles`).
 */
export function load(files: readonly StateFile[], opts: LoadOptions): LoadResult {
  try {
    return loadUnsafe(files, opts);
  } catch (err) {
    // A bug, not a state problem: still reported as a problem so callers never see a throw.
    const message = err instanceof Error ? err.message : String(err);
    return {
      problems: [{ severity: 'error', rule: 'internal.error' satisfies RuleId, file: '', line: 0, column: 0, message: `internal error while loading: ${message}`, hint: 'please report this with the state files that trigger it' }],
    };
  }
}

function loadUnsafe(files: readonly StateFile[], opts: LoadOptions): LoadResult {
  const problems: Problem[] = [];
  const findings: FindingsByFile = new Map();
  const docs: LoadedDocument[] = [];
  const parsedByFile = new Map<string, { file: StateFile; kind: FileKind; docs: readonly unknown[] }>();
  let complete = true;
  // What aliases may still add, shared by all files: a budget per file alone would let many small
  // files each add nearly all of it.
  let aliasBudget = MAX_ALIAS_EXPANSION;
  const buildCache = opts.buildCache;
  // With the checks, problems are expected in most files: their YAML is parsed once with
  // positions (yaml-positions.ts) instead of a fast parse now and a positions pass to locate.
  const positions = opts.checks !== undefined ? new Map<string, YamlPositions>() : undefined;

  const ordered = [...files].sort((a, b) => compareWalkOrder(a.path, b.path));
  for (const file of ordered) {
    const kind = fileKindOf(file.path);
    if (typeof kind !== 'string') {
      complete = false;
      problems.push({
        severity: 'error',
        rule: 'file.extension' satisfies RuleId,
        file: file.path,
        line: 1,
        column: 1,
        message: `unexpected extension: ${JSON.stringify(kind.unsupported)}`,
        hint: 'state files end in .yml, .yaml or .json (or have no extension, read as JSON); change the index globs to leave this file out',
      });
      continue;
    }
    const entry = parseFile(file, kind, opts.parseCache, buildCache?.contents, positions);
    if (entry.syntax) {
      complete = false;
      for (const p of entry.syntax) problems.push({ ...p, file: file.path });
      continue;
    }
    parsedByFile.set(file.path, { file, kind, docs: entry.docs });
    if (entry.aliasAdded > aliasBudget) {
      // Its documents are neither checked nor built: that would expand them.
      complete = false;
      const expansion = measureAliasExpansion(entry.docs, aliasBudget);
      if ('over' in expansion) findings.set(file.path, [aliasExpansionFinding(expansion.over, 'state')]);
      continue;
    }
    aliasBudget -= entry.aliasAdded;
    if (entry.schema.length > 0) findings.set(file.path, [...entry.schema]);
    entry.docs.forEach((data, index) => {
      if (data !== null && data !== undefined) docs.push({ file: file.path, index, data });
    });
  }

  const checked = checkDocuments(docs, complete);
  mergeFindings(findings, checked.findings);

  // The located reports of the checks (their findings are PlacedFindings: placeFindings keeps the report).
  const checks: LocatedCheck[] = [];
  const located = () => {
    const out = [...problems];
    checks.length = 0;
    for (const [path, list] of findings) {
      const parsed = parsedByFile.get(path)!;
      const decoded = decodeUtf8(parsed.file.bytes);
      const text = 'text' in decoded ? decoded.text : '';
      const placed = locateFindings(path, text, parsed.kind, list, positions?.get(path));
      out.push(...placed);
      placed.forEach((p, i) => {
        const report = (list[i] as Partial<PlacedFinding>).report;
        if (report !== undefined) checks.push({ ...p, ...subjectOf(report) });
      });
    }
    return out.sort(compareProblems);
  };

  const hasError = problems.some((p) => p.severity === 'error') || [...findings.values()].some((l) => l.some((f) => f.severity === 'error'));
  if (hasError) return { problems: located() };

  const warnings = located();
  const built = buildSnapshot(checked.namespaces, {
    reference: opts.reference,
    revision: opts.revision,
    builtAt: (opts.now ?? new Date()).toISOString(),
    warnings,
    ...(buildCache !== undefined ? { cache: buildCache } : {}),
  });
  if ('findings' in built) {
    mergeFindings(findings, built.findings);
    return { problems: located() };
  }
  if (opts.checks === undefined) return { snapshot: built.snapshot, problems: warnings };
  const reports = runChecks(built.snapshot, opts.checks);
  if (reports.length === 0) return { snapshot: built.snapshot, problems: warnings, checks: [] };
  mergeFindings(findings, placeFindings(reports, checked.namespaces));
  const all = located();
  return { snapshot: built.snapshot, problems: all, checks: checks.sort(compareProblems) };
}

function mergeFindings(into: FindingsByFile, from: FindingsByFile): void {
  for (const [path, list] of from) {
    const existing = into.get(path);
    if (existing) existing.push(...list);
    else into.set(path, list);
  }
}

function parseFile(
  file: StateFile,
  kind: FileKind,
  cache: ParseCache | undefined,
  contents: ContentTable | undefined,
  positions: Map<string, YamlPositions> | undefined,
): ParsedEntry {
  const key = file.contentId === undefined ? undefined : `${kind}:${file.contentId}`;
  if (cache && key !== undefined) {
    const hit = cache.get(key) as ParsedEntry | undefined;
    if (hit && hit.tag === ENTRY_TAG) return hit;
  }
  if (file.bytes === UNREAD) throw new UnreadFileNeeded(file.path);
  const entry = parseUncached(file, kind, positions);
  // After the schema findings (which name only paths and values, equal for equal content) and
  // before anyone else sees the documents.
  if (contents !== undefined && entry.schema.length === 0) internFile(`${kind}:${file.path}`, entry.docs, contents);
  if (cache && key !== undefined) cache.set(key, entry);
  return entry;
}

function parseUncached(file: StateFile, kind: FileKind, positions?: Map<string, YamlPositions>): ParsedEntry {
  const fail = (syntax: Omit<Problem, 'file'>[]): ParsedEntry => ({ tag: ENTRY_TAG, docs: [], schema: [], syntax, aliasAdded: 0 });
  const decoded = decodeUtf8(file.bytes);
  if ('failure' in decoded) {
    const f = decoded.failure;
    return fail([{ severity: 'error', rule: 'file.encoding' satisfies RuleId, line: f.line, column: f.column, message: f.message, hint: 'save the file as UTF-8' }]);
  }
  const withPositions = positions !== undefined && kind === 'yaml' ? YamlPositions.parse(decoded.text, YAML_SCHEMA) : undefined;
  if (withPositions !== undefined) positions!.set(file.path, withPositions.positions);
  // A file js-yaml refuses is parsed again the usual way, for its syntax problems.
  const parsed = withPositions !== undefined ? { docs: withPositions.docs } : parseText(decoded.text, kind);
  if ('failure' in parsed) {
    const located =
      kind === 'yaml' ? yamlSyntaxProblems(file.path, decoded.text, parsed.failure) : [jsonSyntaxProblem(file.path, decoded.text)];
    return fail(located.map(({ file: _file, ...p }) => p));
  }
  // Before anything walks the documents. JSON has no aliases, and a YAML alias is written `*name`:
  // a text without `*` (most state files) has none, and skips the walk.
  let aliasAdded = 0;
  if (kind === 'yaml' && decoded.text.includes('*')) {
    const expansion = measureAliasExpansion(parsed.docs, MAX_ALIAS_EXPANSION);
    if ('over' in expansion) {
      return fail(locateFindings(file.path, decoded.text, kind, [aliasExpansionFinding(expansion.over, 'file')]).map(({ file: _file, ...p }) => p));
    }
    aliasAdded = expansion.added;
  }
  const schema: Finding[] = [];
  parsed.docs.forEach((doc, index) => {
    if (doc !== null && doc !== undefined) schema.push(...schemaFindings(doc, index));
  });
  return { tag: ENTRY_TAG, docs: parsed.docs, schema, aliasAdded };
}

/** The index-file names, in order of preference, read only at the state root. */
export { INDEX_FILE_NAMES } from './select.js';

/**
 * Which of `paths` are state files: applies the index file (`include`/`exclude`, gobwas-glob
 * semantics where `*` crosses `/`) or the default discovery when there is none. Problems in the
 * index file are reported located. When they include an error, `paths` is empty and the state
 * must be treated as invalid (do not load an empty selection as if it were valid).
 */
export function selectStateFiles(
  paths: readonly string[],
  indexFile?: StateFile,
): { paths: string[]; problems: Problem[] } {
  return selectFiles(paths, indexFile);
}
