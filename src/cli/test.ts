/**
 * `vexil test [PATH...] [--dir PATH] [--format text|json|junit|github]`: runs flag test files
 * against state folders loaded exactly as `vexil serve` loads them, without a server.
 *
 * A PATH that is a folder is a state folder: its `*.test.yml` / `*.test.yaml` files (at any depth)
 * and the `tests:` section of its `.vexil.yml` run against it. A PATH that is a file is a test
 * file: it runs against the folder holding it. `--dir` names the state folder for all of them.
 * Exit 0 when every case passed, 1 otherwise (a failed case, an invalid state or test file, no
 * case at all), 2 usage error.
 */
import { open, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { chosenFormat, parseCommandArgs } from './command-args.js';
import { defaultStateLimits } from '../config/defaults.js';
import { FileRefusedError, tooLarge } from '../sources/file-refused.js';
import { createLocalSource, LOCAL_REFERENCE } from '../sources/local.js';
import type { SourceFile } from '../sources/types.js';
import type { Problem } from '../model/problem.js';
import { countSummary, formatText } from './format-problems.js';
import { readTestFile } from '../state/flag-tests/read-test-file.js';
import { reportGithub } from './flag-tests/report-github.js';
import { reportJson } from './flag-tests/report-json.js';
import { reportJunit } from './flag-tests/report-junit.js';
import { reportText } from './flag-tests/report-text.js';
import { runCase } from './flag-tests/run-case.js';
import { summarize } from './flag-tests/summary.js';
import type { CaseResult, StateFailure, SuiteResult, TestRun } from './flag-tests/types.js';
import type { CliIO } from './io.js';
import { displayPath, loadLocalState, problemLines, toPosix } from './local-state.js';
import { TEST_USAGE, UsageError } from './usage.js';
import type { RuleId } from '../state/rules.js';

const FORMATS = ['text', 'json', 'junit', 'github'] as const;
type TestFormat = (typeof FORMATS)[number];

/** Test files by name; the index file may carry a `tests:` section. */
const TEST_FILE = /(^|\/)[^/]*\.test\.ya?ml$/;
const INDEX_WITH_TESTS = '.vexil.yml';

interface TestSource {
  /** As the user would type it from the working folder. */
  readonly display: string;
  /** Absolute path, to run a file named twice only once. */
  readonly abs: string;
  /** Only the `tests:` key is read (the index file). */
  readonly section: boolean;
  read(): Promise<Uint8Array>;
}

interface Group {
  readonly stateDir: string;
  /** Folders whose test files run against this state, found once the folder is scanned. */
  readonly folders: string[];
  readonly sources: TestSource[];
}

export async function runTest(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs(
    {
      args: [...args],
      options: {
        dir: { type: 'string', short: 'd' },
        format: { type: 'string', short: 'f', default: 'text' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: true,
      strict: true,
    },
    TEST_USAGE,
  );
  if (parsed.values.help) {
    io.stdout(TEST_USAGE);
    return 0;
  }
  const format = chosenFormat(parsed.values.format, FORMATS, TEST_USAGE);
  const dir = parsed.values.dir;
  if (dir !== undefined) {
    const st = await stat(resolve(io.cwd, dir)).catch(() => undefined);
    if (st === undefined || !st.isDirectory()) throw new UsageError(`no such folder: ${dir}`, TEST_USAGE);
  }
  const paths = parsed.positionals.length > 0 ? parsed.positionals : ['.'];

  // Group the test sources by the state folder they run against, in the order given.
  const groups = new Map<string, Group>();
  const group = (stateDir: string): Group => {
    const key = resolve(io.cwd, stateDir);
    let g = groups.get(key);
    if (g === undefined) {
      g = { stateDir, folders: [], sources: [] };
      groups.set(key, g);
    }
    return g;
  };
  for (const p of paths) {
    const abs = resolve(io.cwd, p);
    const st = await stat(abs).catch(() => undefined);
    if (st === undefined) throw new UsageError(`no such file or folder: ${p}`, TEST_USAGE);
    if (st.isDirectory()) {
      group(dir ?? p).folders.push(p);
    } else {
      const display = displayPath('.', toPosix(p));
      group(dir ?? (dirname(p) === '' ? '.' : dirname(p))).sources.push({
        display,
        abs,
        section: basename(p) === INDEX_WITH_TESTS,
        read: () => readLimited(abs, display),
      });
    }
  }

  const suites: SuiteResult[] = [];
  const invalidStates: StateFailure[] = [];
  const seen = new Set<string>();
  for (const g of groups.values()) {
    const state = await loadLocalState(g.stateDir, io.cwd);
    const sources: TestSource[] = [];
    for (const folder of g.folders) {
      const files = resolve(io.cwd, folder) === resolve(io.cwd, g.stateDir) ? state.files : await scanFolder(folder, io.cwd);
      sources.push(...testSources(folder, io.cwd, files));
    }
    sources.push(...g.sources);

    const errors = state.problems.filter((p) => p.severity === 'error');
    if (state.snapshot === undefined) {
      invalidStates.push({ state: state.display, problems: errors, lines: await problemLines(state, errors) });
    }
    for (const source of sources) {
      if (seen.has(source.abs)) continue;
      seen.add(source.abs);
      const started = process.hrtime.bigint();
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(await source.read());
      } catch (err) {
        suites.push({ file: source.display, state: state.display, problems: [unreadable(source.display, err)], cases: [], durationMs: 0, lines: [] });
        continue;
      }
      const content = readTestFile(source.display, text, { section: source.section });
      if (source.section && content.cases.length === 0 && content.problems.length === 0) continue;
      const cases: CaseResult[] =
        state.snapshot !== undefined
          ? content.cases.map((c) => runCase(state.snapshot!, c))
          : content.cases.map((c) => ({
              case: c,
              status: 'error' as const,
              mismatches: [],
              message: `the state in ${state.display} is invalid (${countSummary(errors)})`,
              problems: errors,
              durationMs: 0,
            }));
      suites.push({
        file: source.display,
        state: state.display,
        problems: content.problems,
        cases,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        lines: text.split(/\r?\n/),
      });
    }
  }

  const run: TestRun = { suites, invalidStates };
  const summary = summarize(run);
  if (summary.cases === 0 && summary.invalidFiles === 0 && invalidStates.length === 0) {
    io.stderr(
      `vexil: no flag test found in ${paths.join(', ')}\n` +
        '  hint: write cases in *.test.yml files (see schemas/flag-tests.schema.json), or name test files as PATH\n',
    );
    return 1;
  }

  switch (format) {
    case 'text':
      io.stdout(reportText(run));
      break;
    case 'json': {
      io.stdout(reportJson(run));
      // Problems are not cases: people and logs still need to see them.
      let problems = '';
      for (const s of invalidStates) problems += `vexil: the state in ${s.state} is invalid:\n${formatText(s.problems, (f) => s.lines.get(f))}`;
      for (const s of suites) if (s.problems.length > 0) problems += formatText(s.problems, () => s.lines);
      if (problems !== '') io.stderr(problems);
      break;
    }
    case 'junit':
      io.stdout(reportJunit(run));
      break;
    case 'github':
      io.stdout(reportGithub(run));
      break;
  }
  return summary.ok ? 0 : 1;
}

/** The test files among a folder's files (and its index file, which may have a tests: section). */
function testSources(folder: string, cwd: string, files: readonly SourceFile[]): TestSource[] {
  return files
    .filter((f) => TEST_FILE.test(f.path) || f.path === INDEX_WITH_TESTS)
    .map((f) => ({
      display: displayPath(toPosix(folder), f.path),
      abs: resolve(cwd, folder, f.path),
      section: f.path === INDEX_WITH_TESTS,
      read: () => f.bytes(),
    }));
}

/** A folder's files with the local source's safety rules (symlinks, size limit, skipped folders). */
async function scanFolder(folder: string, cwd: string): Promise<readonly SourceFile[]> {
  const source = createLocalSource({ path: resolve(cwd, folder), ...defaultStateLimits() });
  const rev = (await source.refs()).get(LOCAL_REFERENCE);
  if (rev === undefined) return [];
  return (await source.files(rev)).files;
}

async function readLimited(abs: string, display: string): Promise<Uint8Array> {
  const fh = await open(abs, 'r');
  try {
    const st = await fh.stat();
    const { maxFileSize } = defaultStateLimits();
    if (st.size > maxFileSize) throw tooLarge(display, st.size, maxFileSize);
    const buf = await fh.readFile();
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  } finally {
    await fh.close();
  }
}

function unreadable(file: string, err: unknown): Problem {
  if (err instanceof FileRefusedError) {
    return { severity: 'error', rule: err.rule, file, line: 0, column: 0, message: err.message, ...(err.hint !== undefined ? { hint: err.hint } : {}) };
  }
  const message = err instanceof TypeError ? `${file} is not valid UTF-8` : `${file} could not be read: ${(err as Error).message}`;
  return { severity: 'error', rule: 'flag-test.unreadable' satisfies RuleId, file, line: 0, column: 0, message };
}
