/**
 * `vexil diff BASE HEAD [--repo PATH] [--format text|json|markdown] [--impact N] [--contexts FILE]
 * [--namespace NS] [--fail-on-change] [--policy[=FILE]]`: the semantic diff of two states (two
 * folders, or two revisions of a local Git repository) with the impact preview, formatted for a
 * terminal, a script or a pull-request comment; with `--policy`, judged by the policy's guards
 * (run-guards.ts; the policy chosen by guard-policy.ts). Exit 0 either way (1 with
 * --fail-on-change when anything changed, when a side or the policy does not load, or when a
 * guard fails), 2 on usage errors.
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { chosenFormat, parseCommandArgs } from '../command-args.js';
import { parseContexts } from '../../diff/contexts.js';
import { DEFAULT_IMPACT_ENTITIES, MAX_IMPACT_ENTITIES, syntheticSample, type ImpactOptions } from '../../diff/impact.js';
import { diffReport } from '../../diff/report.js';
import { VexilError } from '../../errors.js';
import { formatMarkdown } from '../../diff/format-markdown.js';
import { formatText } from '../../diff/format-text.js';
import { testContextsOf } from '../../store/test-contexts.js';
import { loadFolder, loadRevision, UnknownRevisionError, type LoadedSide } from './load-side.js';
import { countSummary, formatText as formatProblems } from '../format-problems.js';
import { processIO, type CliIO } from '../io.js';
import { DIFF_USAGE, UsageError } from '../usage.js';
import type { DiffReport } from '../../diff/types.js';
import type { Policy } from '../../state/policy/policy-file.js';
import { STATE_POLICY_PATH } from '../../store/state-policy.js';
import { chooseGuardPolicy, type GuardPolicy } from '../guard-policy.js';
import { loadPolicyFile } from '../policy-file.js';
import { runGuards } from '../run-guards.js';
import { formatGuardsMarkdown, formatGuardsText } from '../../diff/format-guards.js';

const FORMATS = ['text', 'json', 'markdown'] as const;
type DiffFormat = (typeof FORMATS)[number];
/** A contexts file larger than this is refused before it is read. */
const MAX_CONTEXTS_FILE_BYTES = 64 * 1024 * 1024;

export async function runDiff(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs(
    {
      // `--policy` alone: the sides' policy; `--policy=FILE`: that file (a bare FILE after it would read as BASE).
      args: args.map((a) => (a === '--policy' ? '--policy=' : a)),
      options: {
        repo: { type: 'string' },
        directory: { type: 'string' },
        format: { type: 'string', short: 'f', default: 'text' },
        impact: { type: 'string' },
        contexts: { type: 'string' },
        namespace: { type: 'string', short: 'n' },
        'fail-on-change': { type: 'boolean', default: false },
        policy: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: true,
      strict: true,
    },
    DIFF_USAGE,
  );
  const v = parsed.values;
  if (v.help) {
    io.stdout(DIFF_USAGE);
    return 0;
  }
  const format = chosenFormat(v.format, FORMATS, DIFF_USAGE);
  if (parsed.positionals.length !== 2) {
    const hint = v.policy === '' && parsed.positionals.length === 3 ? ' (name a policy file as --policy=FILE)' : '';
    throw new UsageError(`expected BASE and HEAD, got ${parsed.positionals.length} argument(s)${hint}`, DIFF_USAGE);
  }
  const [baseName, headName] = parsed.positionals as [string, string];
  let entities = DEFAULT_IMPACT_ENTITIES;
  if (v.impact !== undefined) {
    if (!/^\d+$/.test(v.impact) || Number(v.impact) > MAX_IMPACT_ENTITIES) {
      throw new UsageError(`--impact must be an integer from 0 to ${MAX_IMPACT_ENTITIES} (got "${v.impact}")`, DIFF_USAGE);
    }
    entities = Number(v.impact);
  }
  if (v.directory !== undefined && v.repo === undefined) throw new UsageError('--directory goes with --repo', DIFF_USAGE);

  let base: LoadedSide;
  let head: LoadedSide;
  if (v.repo !== undefined) {
    const repo = resolve(io.cwd, v.repo);
    try {
      [base, head] = await Promise.all([loadRevision(repo, baseName, v.directory), loadRevision(repo, headName, v.directory)]);
    } catch (err) {
      if (err instanceof UnknownRevisionError) throw new UsageError(err.message, DIFF_USAGE);
      throw err;
    }
  } else {
    for (const dir of [baseName, headName]) {
      const st = await stat(resolve(io.cwd, dir)).catch(() => undefined);
      if (st === undefined || !st.isDirectory()) throw new UsageError(`no such folder: ${dir} (use --repo PATH to compare Git revisions)`, DIFF_USAGE);
    }
    [base, head] = await Promise.all([loadFolder(baseName, io.cwd), loadFolder(headName, io.cwd)]);
  }
  let failed = false;
  for (const side of [base, head]) {
    if (side.snapshot !== undefined) continue;
    failed = true;
    io.stderr(`vexil: the state in ${side.name} is invalid (${countSummary(side.problems)})\n`);
    io.stderr(formatProblems(side.problems, () => undefined));
  }
  if (failed) return 1;

  let impactOpts: ImpactOptions | undefined;
  try {
    if (v.contexts !== undefined) {
      const path = resolve(io.cwd, v.contexts);
      const st = await stat(path).catch(() => undefined);
      if (st === undefined || !st.isFile()) throw new UsageError(`no such file: ${v.contexts}`, DIFF_USAGE);
      if (st.size > MAX_CONTEXTS_FILE_BYTES) throw new UsageError(`${v.contexts} is larger than ${MAX_CONTEXTS_FILE_BYTES} bytes`, DIFF_USAGE);
      const sample = parseContexts(await readFile(path, 'utf8'), v.contexts);
      impactOpts = { sample, source: 'contexts-file', contexts: sample.length };
    } else if (entities > 0) {
      const contexts = testContextsOf(head.snapshot!);
      impactOpts = { sample: syntheticSample(entities, contexts), source: 'synthetic', contexts: contexts.length };
    }
  } catch (err) {
    if (err instanceof VexilError) throw new UsageError(err.message, DIFF_USAGE);
    throw err;
  }

  // The governing policy (guard-policy.ts) before the diff: a malformed one fails without output.
  let chosen: (GuardPolicy & { readonly policy: Policy }) | undefined;
  if (v.policy !== undefined) {
    const given = v.policy !== '' ? await loadPolicyFile(v.policy, io.cwd) : undefined;
    const found = chooseGuardPolicy(given, { snapshot: base.snapshot!, display: base.display }, { snapshot: head.snapshot!, display: head.display });
    if (found === undefined) throw new UsageError(`--policy: neither ${base.name} nor ${head.name} has ${STATE_POLICY_PATH} (name a file with --policy=FILE)`, DIFF_USAGE);
    if (found.policy === undefined) {
      io.stderr(`vexil: the policy file ${found.display} is invalid (${countSummary(found.problems)})\n`);
      io.stderr(formatProblems(found.problems, () => undefined));
      return 1;
    }
    chosen = { ...found, policy: found.policy };
  }

  const computed = diffReport(base.snapshot!, head.snapshot!, { ...(v.namespace !== undefined ? { namespace: v.namespace } : {}), ...(impactOpts ? { impact: impactOpts } : {}) });
  const guards = chosen !== undefined ? await runGuards(computed, chosen, base, head) : undefined;
  // A folder's snapshot is reference `local`: name each side as the user did.
  const report: DiffReport = { ...computed, base: { ...computed.base, reference: base.name }, head: { ...computed.head, reference: head.name }, ...(guards !== undefined ? { guards } : {}) };
  if (format === 'json') io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else if (format === 'markdown') io.stdout(formatMarkdown(report) + (guards !== undefined ? formatGuardsMarkdown(guards) : ''));
  else io.stdout(formatText(report, useColour(io)) + (guards !== undefined ? formatGuardsText(guards) : ''));
  if (guards?.failed === true) {
    for (const g of guards.findings) if (g.severity === 'error') io.stderr(`vexil: guard failed: ${g.file !== '' ? `${g.file}${g.line > 0 ? `:${g.line}:${g.column}` : ''}: ` : ''}${g.message}\n`);
    return 1;
  }
  return v['fail-on-change'] && report.changed ? 1 : 0;
}

/** Colours only on the real terminal, and never when NO_COLOR is set (https://no-color.org). */
function useColour(io: CliIO): boolean {
  return io === processIO && process.stdout.isTTY === true && (process.env.NO_COLOR ?? '') === '';
}
