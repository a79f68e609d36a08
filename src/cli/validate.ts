/**
 * `vexil validate [PATH...] [--format text|json|github|sarif] [--strict] [--no-checks] [--policy FILE]`: loads
 * state exactly as `vexil serve` does (same source, same reader, same loader) and reports every
 * located problem, plus the semantic checks (src/state/checks/) on a state without errors, with
 * "today" taken from the clock here. Each folder is one state; files named directly are checked
 * together as one state. `--strict` fails on warnings too (information never fails). The policy
 * file (`--policy`, else a folder's `.vexil/policy.yml`) adds its checks and sets rule severities.
 * `--base REV [--repo PATH]` also judges the change from that revision to the folder by the
 * policy's guards (validate-guards.ts), reported as problems (`guard.*`) like the others.
 */
import { createHash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import { posix, resolve, sep } from 'node:path';
import { chosenFormat, parseCommandArgs } from './command-args.js';
import { createLocalSource, LOCAL_REFERENCE } from '../sources/local.js';
import { readState, sortProblems } from '../store/read-state.js';
import { defaultStateLimits } from '../config/defaults.js';
import { FileRefusedError, tooLarge } from '../sources/file-refused.js';
import { load, type CheckOptions, type StateFile } from '../state/load.js';
import type { Problem } from '../model/problem.js';
import { countSummary, formatProblems, OUTPUT_FORMATS, type OutputFormat } from './format-problems.js';
import type { CliIO } from './io.js';
import { UsageError, VALIDATE_USAGE } from './usage.js';
import { defaultPolicyPath, loadPolicyFile, type PolicyFile } from './policy-file.js';
import { applySeverities } from '../state/policy/apply-severities.js';
import type { Policy } from '../state/policy/policy-file.js';
import { checkGuards } from './validate-guards.js';

interface Checked {
  readonly problems: Problem[];
  readonly fileCount: number;
  /** Text of the files, by display path, for quoting offending lines. */
  readonly texts: Map<string, () => Promise<string | undefined>>;
}

export async function runValidate(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs(
    {
      args: [...args],
      options: {
        format: { type: 'string', short: 'f', default: 'text' },
        strict: { type: 'boolean', default: false },
        checks: { type: 'boolean', default: true },
        policy: { type: 'string' },
        base: { type: 'string' },
        repo: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: true,
      allowNegative: true,
      strict: true,
    },
    VALIDATE_USAGE,
  );
  if (parsed.values.help) {
    io.stdout(VALIDATE_USAGE);
    return 0;
  }
  const format = chosenFormat(parsed.values.format, OUTPUT_FORMATS, VALIDATE_USAGE);

  const folders: string[] = [];
  const files: string[] = [];
  for (const p of parsed.positionals.length > 0 ? parsed.positionals : ['.']) {
    const st = await stat(resolve(io.cwd, p)).catch(() => undefined);
    if (st === undefined) throw new UsageError(`no such file or folder: ${p}`, VALIDATE_USAGE);
    (st.isDirectory() ? folders : files).push(p);
  }

  if (parsed.values.repo !== undefined && parsed.values.base === undefined) throw new UsageError('--repo goes with --base', VALIDATE_USAGE);
  if (parsed.values.base !== undefined && (folders.length !== 1 || files.length > 0)) {
    throw new UsageError('--base compares one state folder with the base revision: give exactly one folder', VALIDATE_USAGE);
  }

  const today = new Date();
  const given = parsed.values.policy !== undefined ? await loadPolicyFile(parsed.values.policy, io.cwd) : undefined;
  const policyProblems: Problem[] = [];
  const policyTexts = new Map<string, () => Promise<string | undefined>>();
  const seen = new Set<string>();
  /** The policy of one state: --policy, else the folder's own file; its problems reported once. */
  const policyFor = async (folder: string | undefined): Promise<PolicyFile | undefined> => {
    const path = given === undefined && folder !== undefined ? await defaultPolicyPath(folder, io.cwd) : undefined;
    const file = given ?? (path !== undefined ? await loadPolicyFile(path, io.cwd) : undefined);
    if (file !== undefined && !seen.has(file.display)) {
      seen.add(file.display);
      policyProblems.push(...file.problems);
      if (file.text !== undefined) policyTexts.set(file.display, () => Promise.resolve(file.text));
    }
    return file;
  };
  const optionsFor = (policy: Policy | undefined): CheckOptions | undefined =>
    parsed.values.checks
      ? { today, ...(policy !== undefined ? { policy } : {}), ...(policy?.timeProperties !== undefined ? { timeProperties: policy.timeProperties } : {}) }
      : undefined;
  const checks: Checked[] = [];
  for (const folder of folders) {
    const policy = (await policyFor(folder))?.policy;
    checks.push(withSeverities(await checkFolder(folder, io.cwd, optionsFor(policy)), policy));
  }
  if (files.length > 0) {
    const policy = (await policyFor(undefined))?.policy;
    checks.push(withSeverities(await checkFiles(files, io.cwd, optionsFor(policy)), policy));
  }
  if (parsed.values.base !== undefined) {
    checks.push({ fileCount: 0, ...(await checkGuards({ folder: folders[0]!, base: parsed.values.base, repo: parsed.values.repo, cwd: io.cwd, given, io })) });
  }
  checks.push({ problems: policyProblems, fileCount: 0, texts: policyTexts });

  const problems = sortProblems(checks.flatMap((c) => c.problems));
  const texts = new Map(checks.flatMap((c) => [...c.texts]));
  const fileCount = checks.reduce((n, c) => n + c.fileCount, 0);

  let lines: Map<string, string[]> | undefined;
  if (format === 'text') {
    lines = new Map();
    for (const file of new Set(problems.filter((p) => p.line > 0).map((p) => p.file))) {
      const text = await texts.get(file)?.().catch(() => undefined);
      if (text !== undefined) lines.set(file, text.split(/\r?\n/));
    }
  }
  io.stdout(formatProblems(format, problems, (f) => lines?.get(f)));

  const errors = problems.filter((p) => p.severity === 'error').length;
  const warnings = problems.filter((p) => p.severity === 'warning').length;
  const failed = errors > 0 || (parsed.values.strict && warnings > 0);
  if (format === 'text') {
    const noun = fileCount === 1 ? 'state file' : 'state files';
    io.stdout(`${failed ? 'FAILED' : 'OK'}: ${fileCount} ${noun}, ${countSummary(problems)}\n`);
  }
  return failed ? 1 : 0;
}

/** The policy's `rules:` severities applied to one state's problems. */
function withSeverities(checked: Checked, policy: Policy | undefined): Checked {
  return policy === undefined ? checked : { ...checked, problems: applySeverities(checked.problems, policy.severities) };
}

/** `dir` + a state-relative path, as a user would type it from the working folder. */
function displayPath(dir: string, file: string): string {
  const base = toPosix(dir);
  if (file === '') return base;
  return posix.normalize(posix.join(base, file));
}

function toPosix(p: string): string {
  return sep === '/' ? p : p.split(sep).join('/');
}

async function checkFolder(folder: string, cwd: string, checks: CheckOptions | undefined): Promise<Checked> {
  const limits = defaultStateLimits();
  const source = createLocalSource({ path: resolve(cwd, folder), ...limits });
  const rev = (await source.refs()).get(LOCAL_REFERENCE);
  if (rev === undefined) throw new Error(`no state in ${folder}`);
  const fileSet = await source.files(rev);
  const result = await readState(fileSet, { reference: LOCAL_REFERENCE, testContexts: false, policy: false, ...limits, ...(checks !== undefined ? { checks } : {}) });
  const texts = new Map<string, () => Promise<string | undefined>>();
  for (const f of fileSet.files) {
    texts.set(displayPath(folder, f.path), async () => new TextDecoder().decode(await f.bytes()));
  }
  return {
    problems: result.problems.map((p) => ({ ...p, file: displayPath(folder, p.file) })),
    fileCount: result.files.length,
    texts,
  };
}

async function checkFiles(paths: readonly string[], cwd: string, checks: CheckOptions | undefined): Promise<Checked> {
  const { maxFileSize } = defaultStateLimits();
  const problems: Problem[] = [];
  const stateFiles: StateFile[] = [];
  const texts = new Map<string, () => Promise<string | undefined>>();
  const hash = createHash('sha256');
  for (const p of paths) {
    const file = posix.normalize(toPosix(p));
    try {
      const bytes = await readLimited(resolve(cwd, p), file, maxFileSize);
      stateFiles.push({ path: file, bytes });
      hash.update(`${file}\0`).update(bytes);
      texts.set(file, () => Promise.resolve(new TextDecoder().decode(bytes)));
    } catch (err) {
      const refused =
        err instanceof FileRefusedError ? err : new FileRefusedError('file.unreadable', `${file} could not be read: ${(err as Error).message}`);
      problems.push({
        severity: 'error',
        rule: refused.rule,
        file,
        line: 0,
        column: 0,
        message: refused.message,
        ...(refused.hint !== undefined ? { hint: refused.hint } : {}),
      });
    }
  }
  const result = load(stateFiles, { reference: LOCAL_REFERENCE, revision: hash.digest('hex').slice(0, 40), ...(checks !== undefined ? { checks } : {}) });
  return { problems: [...problems, ...result.problems], fileCount: paths.length, texts };
}

async function readLimited(abs: string, display: string, max: number): Promise<Uint8Array> {
  const fh = await open(abs, 'r');
  try {
    const st = await fh.stat();
    if (st.size > max) throw tooLarge(display, st.size, max);
    const buf = await fh.readFile();
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  } finally {
    await fh.close();
  }
}
