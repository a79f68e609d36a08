/**
 * Which files of a state folder are state files: the index file at the root (`.vexil.yml`, or
 * Flipt's `.flipt.yml`) with `include`/`exclude` globs, or the default discovery without one.
 */
import jsYaml from 'js-yaml';
import { compareProblems, compareWalkOrder } from './order.js';
import type { Finding } from './finding.js';
import { GlobSyntaxError, compileGlob, type CompiledGlob } from './glob.js';
import { locateFindings, yamlSyntaxProblems } from './locate.js';
import type { RuleId } from './rules.js';
import { decodeUtf8 } from './parse.js';
import type { Problem } from '../model/problem.js';

export const INDEX_FILE_NAMES = ['.vexil.yml', '.flipt.yml'] as const;

/**
 * Flipt's default index, plus JSON (Flipt needs an explicit include for JSON). Globs here let `*`
 * cross `/`, so `**features.yml` also matches `a/b/features.yml` and `myfeatures.yml`, as in Flipt.
 */
export const DEFAULT_INCLUDE: readonly string[] = [
  '**features.yml',
  '**features.yaml',
  '**features.json',
  '**.features.yml',
  '**.features.yaml',
  '**.features.json',
];

export interface IndexFileInput {
  readonly path: string;
  readonly bytes: Uint8Array;
}

export interface StateIndex {
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

export function selectFiles(paths: readonly string[], indexFile?: IndexFileInput): { paths: string[]; problems: Problem[] } {
  const problems: Problem[] = [];
  let index: StateIndex = { include: DEFAULT_INCLUDE, exclude: [] };
  let locate: (findings: Finding[]) => Problem[] = () => [];
  if (indexFile) {
    const read = readIndex(indexFile);
    problems.push(...read.problems);
    if (!read.index) return { paths: [], problems };
    index = read.index;
    locate = read.locate;
  }
  const include: CompiledGlob[] = [];
  const exclude: CompiledGlob[] = [];
  for (const [list, out, field] of [
    [index.include, include, 'include'],
    [index.exclude, exclude, 'exclude'],
  ] as const) {
    list.forEach((pattern, i) => {
      try {
        out.push(compileGlob(pattern));
      } catch (err) {
        if (!(err instanceof GlobSyntaxError)) throw err;
        problems.push(
          ...locate([
            { severity: 'error', rule: 'index.glob.invalid', message: err.message, hint: 'fix the pattern (escape a literal [ or { with \\)', doc: 0, path: [field, i] },
          ]),
        );
      }
    });
  }
  problems.sort(compareProblems);
  if (problems.some((p) => p.severity === 'error')) return { paths: [], problems };
  const selected: string[] = [];
  for (const raw of paths) {
    // Globs match the path without a leading `./`; the caller's own spelling is returned.
    const path = raw.startsWith('./') ? raw.slice(2) : raw;
    if (path === '' || (INDEX_FILE_NAMES as readonly string[]).includes(path)) continue;
    if (include.some((g) => g.test(path)) && !exclude.some((g) => g.test(path))) selected.push(raw);
  }
  selected.sort(compareWalkOrder);
  return { paths: selected, problems };
}

// `tests` holds flag test cases for `vexil test`; the loader itself does not read it.
const INDEX_KEYS = new Set(['version', 'include', 'exclude', 'tests']);

/**
 * The index file's content, or located problems (and no index when they are errors);
 * `locate` positions further findings about it (glob errors).
 */
export function readIndex(file: IndexFileInput): { index?: StateIndex; problems: Problem[]; locate: (findings: Finding[]) => Problem[] } {
  const none = () => [];
  const decoded = decodeUtf8(file.bytes);
  if ('failure' in decoded) {
    const f = decoded.failure;
    return { locate: none, problems: [{ severity: 'error', rule: 'index.encoding' satisfies RuleId, file: file.path, line: f.line, column: f.column, message: f.message, hint: 'save the index file as UTF-8' }] };
  }
  let docs: unknown[];
  try {
    docs = jsYaml.loadAll(decoded.text, undefined, { schema: jsYaml.CORE_SCHEMA });
  } catch (err) {
    const mark = (err as { mark?: { line?: number; column?: number; position?: number } }).mark;
    const problems = yamlSyntaxProblems(file.path, decoded.text, {
      message: err instanceof jsYaml.YAMLException ? err.reason : String(err),
      line: (mark?.line ?? 0) + 1,
      column: (mark?.column ?? 0) + 1,
      ...(typeof mark?.position === 'number' ? { offset: mark.position } : {}),
    }).map((p) => ({ ...p, rule: 'index.syntax' satisfies RuleId }));
    return { problems, locate: none };
  }
  const locate = (findings: Finding[]) => locateFindings(file.path, decoded.text, 'yaml', findings);
  // yaml.v3 (Flipt) fails on an index without content; js-yaml returns [] or [null] for it.
  if (docs.length === 0 || docs[0] === null || docs[0] === undefined) {
    return {
      locate,
      problems: [{ severity: 'error', rule: 'index.empty' satisfies RuleId, file: file.path, line: 1, column: 1, message: 'the index file is empty', hint: 'add `include:` with the globs of the state files, or delete the index file to use the default discovery' }],
    };
  }
  const data = docs[0];
  const findings: Finding[] = [];
  const index = { include: [] as string[], exclude: [] as string[] };
  if (typeof data !== 'object' || Array.isArray(data)) {
    findings.push({ severity: 'error', rule: 'index.type', message: 'the index file must be a mapping with `include` and `exclude`', hint: 'write `include:` and `exclude:` lists of globs', doc: 0, path: [] });
  } else {
    const obj = data as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      if (!INDEX_KEYS.has(key)) {
        findings.push({ severity: 'warning', rule: 'index.unknown-key', message: `unknown key \`${key}\` in the index file is ignored`, hint: 'the index file holds only `version`, `include`, `exclude` and `tests` (flag test cases)', doc: 0, path: [key], at: 'key' });
      }
    }
    const version = obj.version;
    if (version !== undefined && version !== null && typeof version !== 'string' && typeof version !== 'number') {
      findings.push({ severity: 'error', rule: 'index.type', message: '`version` of the index file must be a string', hint: 'write version: "1.0"', doc: 0, path: ['version'] });
    }
    for (const field of ['include', 'exclude'] as const) {
      const list = obj[field];
      if (list === undefined || list === null) continue;
      if (!Array.isArray(list)) {
        findings.push({ severity: 'error', rule: 'index.type', message: `\`${field}\` of the index file must be a list of globs`, hint: `write ${field}:\n  - "**/*.features.yml"`, doc: 0, path: [field] });
        continue;
      }
      list.forEach((g, i) => {
        if (typeof g === 'string') index[field].push(g);
        else findings.push({ severity: 'error', rule: 'index.type', message: `item ${i + 1} of \`${field}\` must be a glob string`, hint: 'quote the pattern', doc: 0, path: [field, i] });
      });
    }
    if (obj.include === undefined || obj.include === null) {
      findings.push({ severity: 'warning', rule: 'index.include.missing', message: 'the index file has no `include`: no state file is read', hint: 'add `include:` with globs such as "**/*.features.yml"', doc: 0, path: [] });
    }
  }
  const problems = locate(findings).sort(compareProblems);
  if (problems.some((p) => p.severity === 'error')) return { problems, locate };
  return { index, problems, locate };
}
