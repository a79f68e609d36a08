/**
 * `vexil stale [DIR] [--repo PATH [--rev REV] [--max-commits N]] [--code DIR] [--format
 * text|json|markdown] [--today DATE]`: the flags ready to be removed. Reads one state (a folder,
 * or a revision of a local Git repository through diff's loader), finds the flags serving one
 * outcome to everyone (state/checks/uniform-outcome.ts) and, with --repo, since which commit
 * (history.ts), the temporary flags past `expires` (state/checks/lifecycle.ts, "today" from the
 * clock or --today), and with --code the keys no source file mentions (code-scan.ts). Exit 0
 * whatever it finds; 1 when the state is invalid or cannot be read; 2 on usage errors.
 */
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, resolve } from 'node:path';
import { chosenFormat, parseCommandArgs } from '../command-args.js';
import type { Problem } from '../../model/problem.js';
import type { Snapshot } from '../../model/snapshot.js';
import type { SourceFile } from '../../sources/types.js';
import { lifecycleChecks } from '../../state/checks/lifecycle.js';
import { locateFlags, type FlagPlace, type Position } from '../../state/checks/locate-flags.js';
import { INDEX_FILE_NAMES, selectStateFiles, type StateFile } from '../../state/load.js';
import { countSummary, formatText as formatProblems } from '../format-problems.js';
import type { CliIO } from '../io.js';
import { displayPath, toPosix } from '../local-state.js';
import { STALE_USAGE, UsageError } from '../usage.js';
import { loadFolder, loadRevision, resolveRevision, UnknownRevisionError, type LoadedSide } from '../diff/load-side.js';
import { CodeScanError, scanCode, type CodeScanResult } from './code-scan.js';
import { formatMarkdown } from './format-markdown.js';
import { formatText } from './format-text.js';
import { uniformOutcomes, walkHistory, type Since } from './history.js';
import { buildReport } from './report.js';

const FORMATS = ['text', 'json', 'markdown'] as const;
type StaleFormat = (typeof FORMATS)[number];

/** Bounds of the history walk and of the code scan, unless the options say otherwise. */
export const STALE_DEFAULTS = { maxCommits: 200, maxFiles: 20_000, maxFileBytes: 1024 * 1024, maxCodeBytes: 256 * 1024 * 1024 } as const;

export async function runStale(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs(
    {
      args: [...args],
      options: {
        repo: { type: 'string' },
        rev: { type: 'string' },
        'max-commits': { type: 'string' },
        code: { type: 'string' },
        'max-files': { type: 'string' },
        'max-file-bytes': { type: 'string' },
        'max-code-bytes': { type: 'string' },
        format: { type: 'string', short: 'f', default: 'text' },
        today: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: true,
      strict: true,
    },
    STALE_USAGE,
  );
  const v = parsed.values;
  if (v.help) {
    io.stdout(STALE_USAGE);
    return 0;
  }
  const format = chosenFormat(v.format, FORMATS, STALE_USAGE);
  if (parsed.positionals.length > 1) throw new UsageError(`expected at most one DIR, got ${parsed.positionals.length}`, STALE_USAGE);
  if (v.repo === undefined && (v.rev !== undefined || v['max-commits'] !== undefined)) throw new UsageError('--rev and --max-commits go with --repo', STALE_USAGE);
  if (v.code === undefined && (v['max-files'] !== undefined || v['max-file-bytes'] !== undefined || v['max-code-bytes'] !== undefined)) {
    throw new UsageError('--max-files, --max-file-bytes and --max-code-bytes go with --code', STALE_USAGE);
  }
  const maxCommits = count(v['max-commits'], '--max-commits', STALE_DEFAULTS.maxCommits);
  const maxFiles = count(v['max-files'], '--max-files', STALE_DEFAULTS.maxFiles);
  const maxFileBytes = count(v['max-file-bytes'], '--max-file-bytes', STALE_DEFAULTS.maxFileBytes);
  const maxCodeBytes = count(v['max-code-bytes'], '--max-code-bytes', STALE_DEFAULTS.maxCodeBytes);
  const today = v.today === undefined ? new Date() : dateOption(v.today);
  const dir = parsed.positionals[0];

  // The state: a folder, or a revision of a repository.
  let side: LoadedSide;
  let stateRoot: string;
  let shown: (file: string) => string;
  let repo: string | undefined;
  let commit: string | undefined;
  /** With --repo: the state's sub-folder, `/`-separated; undefined for the repository's root. */
  const directory = subFolder(dir);
  if (v.repo !== undefined) {
    repo = resolve(io.cwd, v.repo);
    const dotGit = await stat(join(repo, '.git')).catch(() => undefined);
    if (dotGit === undefined && !(existsSync(join(repo, 'HEAD')) && existsSync(join(repo, 'objects')))) {
      throw new Error(`not a Git repository: ${v.repo}`);
    }
    if (dotGit !== undefined && !dotGit.isDirectory()) {
      // A linked work tree or a submodule: its objects live in another repository.
      throw new Error(`${v.repo} is a linked work tree or a submodule (.git is a file): pass the path of the repository that holds the objects`);
    }
    try {
      commit = await resolveRevision(repo, v.rev ?? 'HEAD');
    } catch (err) {
      if (err instanceof UnknownRevisionError) throw new Error(err.message);
      throw err;
    }
    side = await loadRevision(repo, commit, directory);
    stateRoot = join(repo, directory ?? '');
    shown = (file) => displayPath(directory ?? '.', file);
  } else {
    const folder = dir ?? '.';
    const abs = resolve(io.cwd, folder);
    const st = await stat(abs).catch(() => undefined);
    if (st === undefined || !st.isDirectory()) throw new Error(`no such folder: ${folder}`);
    await readdir(abs).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`cannot read folder ${folder}: ${err.code ?? err.message}`);
    });
    side = await loadFolder(folder, io.cwd);
    stateRoot = abs;
    shown = (file) => displayPath(side.name, file);
  }
  if (side.snapshot === undefined) {
    io.stderr(`vexil: the state in ${side.name} is invalid (${countSummary(side.problems)})\n`);
    io.stderr(formatProblems(side.problems, () => undefined));
    return 1;
  }
  const snapshot = side.snapshot;

  const outcomes = uniformOutcomes(snapshot);
  const reports = lifecycleChecks(snapshot, today);

  let scan: CodeScanResult | undefined;
  const stateFiles = await selectedStateFiles(side.files);
  if (v.code !== undefined) {
    const root = resolve(io.cwd, v.code);
    const inside = relative(root, stateRoot);
    const stateIsBelow = inside !== '' && !inside.startsWith('..') && !isAbsolute(inside);
    const skipFiles = side.files.filter((f) => /\.ya?ml$|\.json$/i.test(f.path)).map((f) => join(stateRoot, f.path));
    try {
      scan = await scanCode({ root, keys: flagKeys(snapshot), skip: stateIsBelow ? [stateRoot] : [], skipFiles, maxFiles, maxFileBytes, maxTotalBytes: maxCodeBytes });
    } catch (err) {
      if (err instanceof CodeScanError) throw new Error(err.message);
      throw err;
    }
  }

  let since: Map<string, Since> | undefined;
  let history = null;
  if (repo !== undefined && commit !== undefined) {
    const walked = outcomes.size === 0 ? { since: new Map<string, Since>(), commitsRead: 0 } : await walkHistory({ repo, start: commit, ...(directory !== undefined ? { directory } : {}), maxCommits, outcomes });
    since = walked.since;
    history = { maxCommits, commitsRead: walked.commitsRead };
  }

  // Positions: the key of every flag with a finding, and `metadata.expires` where reported.
  const ids = new Set(outcomes.keys());
  for (const r of reports) ids.add(`${r.namespace}/${r.place.flag}`);
  if (scan !== undefined) for (const ns of snapshot.namespaces.values()) for (const f of ns.flags.values()) if (!scan.found.has(f.key)) ids.add(`${ns.key}/${f.key}`);
  const places: FlagPlace[] = [...ids].map((id) => placeOf(id));
  for (const r of reports) places.push({ namespace: r.namespace, flag: r.place.flag, under: ['metadata', 'expires'] });
  const located = locateFlags(stateFiles, places);
  const keyAt = new Map<string, Position>();
  const expiresAt = new Map<string, Position>();
  places.forEach((p, i) => {
    const pos = located[i];
    if (pos === undefined) return;
    (p.under === undefined ? keyAt : expiresAt).set(`${p.namespace}/${p.flag}`, { ...pos, file: shown(pos.file) });
  });
  const problems: Problem[] = reports.map((r) => {
    const pos = expiresAt.get(`${r.namespace}/${r.place.flag}`) ?? { file: '', line: 0, column: 0 };
    return { severity: r.severity, rule: r.rule, ...pos, message: r.message, hint: r.hint };
  });

  const report = buildReport({
    snapshot,
    today,
    state: { path: repo !== undefined ? shown('') : side.name, repository: v.repo ?? null, revision: commit ?? null },
    outcomes,
    since,
    history,
    code: scan === undefined ? undefined : { root: v.code!, scan },
    problems,
    keyAt,
    expiresAt,
  });
  if (format === 'json') io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else if (format === 'markdown') io.stdout(formatMarkdown(report));
  else io.stdout(formatText(report));
  return 0;
}

function count(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[1-9]\d{0,14}$/.test(value)) throw new UsageError(`${name} must be a positive integer (got "${value}")`, STALE_USAGE);
  return Number(value);
}

function dateOption(value: string): Date {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const d = m === null ? undefined : new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  if (d === undefined || d.toISOString().slice(0, 10) !== value) throw new UsageError(`--today must be a date YYYY-MM-DD (got "${value}")`, STALE_USAGE);
  return d;
}

function subFolder(dir: string | undefined): string | undefined {
  if (dir === undefined) return undefined;
  const n = posix.normalize(toPosix(dir)).replace(/\/+$/, '');
  return n === '.' || n === '' ? undefined : n;
}

function placeOf(id: string): FlagPlace {
  const slash = id.indexOf('/');
  return { namespace: id.slice(0, slash), flag: id.slice(slash + 1) };
}

function flagKeys(snapshot: Snapshot): Set<string> {
  const keys = new Set<string>();
  for (const ns of snapshot.namespaces.values()) for (const f of ns.flags.values()) keys.add(f.key);
  return keys;
}

/** The state files the index selects (as the loader did), with their bytes, for locating flags. */
async function selectedStateFiles(files: readonly SourceFile[]): Promise<StateFile[]> {
  const index = files.find((f) => (INDEX_FILE_NAMES as readonly string[]).includes(f.path));
  const indexFile = index === undefined ? undefined : { path: index.path, bytes: await index.bytes() };
  const { paths } = selectStateFiles(files.map((f) => f.path), indexFile);
  const byPath = new Map(files.map((f) => [f.path, f]));
  return Promise.all(paths.map(async (path) => ({ path, bytes: await byPath.get(path)!.bytes() })));
}
