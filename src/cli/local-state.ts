/**
 * A state folder read the way `vexil serve` reads it (local source → readState → load), for the
 * commands that work on files without a server (`evaluate`, `test`). Problem locations and file
 * names are given as the user would type them from the working folder.
 */
import { posix, resolve, sep } from 'node:path';
import { defaultStateLimits } from '../config/defaults.js';
import { createLocalSource, LOCAL_REFERENCE } from '../sources/local.js';
import { readState } from '../store/read-state.js';
import type { SourceFile } from '../sources/types.js';
import type { Snapshot } from '../model/snapshot.js';
import type { Problem } from '../model/problem.js';

export interface LocalState {
  /** The folder as given, `/`-separated (`.` for the working folder). */
  readonly display: string;
  /** Present iff the state has no error. */
  readonly snapshot?: Snapshot;
  /** Errors and warnings, located with display paths. */
  readonly problems: readonly Problem[];
  /** Every file of the folder (state files or not), by path relative to the folder. */
  readonly files: readonly SourceFile[];
  /** The state files the index selected, by path relative to the folder. */
  readonly stateFiles: readonly string[];
  /** Lines of a file by display path, to quote offending lines. */
  lines(displayFile: string): Promise<readonly string[] | undefined>;
}

export async function loadLocalState(dir: string, cwd: string): Promise<LocalState> {
  const display = displayDir(dir);
  const limits = defaultStateLimits();
  const source = createLocalSource({ path: resolve(cwd, dir), ...limits });
  const rev = (await source.refs()).get(LOCAL_REFERENCE);
  if (rev === undefined) throw new Error(`no state in ${dir}`);
  const fileSet = await source.files(rev);
  const result = await readState(fileSet, { reference: LOCAL_REFERENCE, ...limits });
  const byDisplay = new Map(fileSet.files.map((f) => [displayPath(display, f.path), f]));
  return {
    display,
    ...(result.snapshot !== undefined ? { snapshot: result.snapshot } : {}),
    problems: result.problems.map((p) => ({ ...p, file: displayPath(display, p.file) })),
    files: fileSet.files,
    stateFiles: result.files,
    async lines(file) {
      const f = byDisplay.get(file);
      if (f === undefined) return undefined;
      try {
        return new TextDecoder().decode(await f.bytes()).split(/\r?\n/);
      } catch {
        return undefined;
      }
    },
  };
}

/** `dir` + a state-relative path, as a user would type it from the working folder. */
export function displayPath(dir: string, file: string): string {
  const base = toPosix(dir);
  if (file === '') return base;
  return base === '.' || base === '' ? posix.normalize(file) : posix.normalize(posix.join(base, file));
}

/** A folder as given, tidied: `./flags/` → `flags`, `` → `.`. */
export function displayDir(dir: string): string {
  const n = posix.normalize(toPosix(dir) || '.');
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
}

export function toPosix(p: string): string {
  return sep === '/' ? p : p.split(sep).join('/');
}

/** The lines of every file some problem points into, for formatText. */
export async function problemLines(state: LocalState, problems: readonly Problem[]): Promise<Map<string, readonly string[]>> {
  const out = new Map<string, readonly string[]>();
  for (const file of new Set(problems.filter((p) => p.line > 0).map((p) => p.file))) {
    const lines = await state.lines(file);
    if (lines !== undefined) out.set(file, lines);
  }
  return out;
}
