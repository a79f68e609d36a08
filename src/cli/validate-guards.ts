/**
 * `vexil validate DIR --base REV [--repo PATH]`: the change from the state at Git revision REV to
 * the state folder DIR, judged by the policy's guards. The base is read from the repository's
 * object database as `vexil diff --repo` reads a side (diff/load-side.ts), at DIR's path inside
 * the repository (`--repo`, else the repository DIR is in). The governing policy is chosen by
 * guard-policy.ts (`--policy`, else REV's `.vexil/policy.yml`, else DIR's); the impact guard
 * samples the default impact preview (10,000 synthetic entities over DIR's flag test contexts).
 *
 * What does not judge the change is said on stderr and fails nothing: a base without the folder
 * or whose state is invalid (the change may be what fixes it), or no policy with guards. A policy
 * file of REV that cannot be read is reported as its located problems (errors: the run fails).
 */
import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { DEFAULT_IMPACT_ENTITIES } from '../diff/impact.js';
import { diffReport } from '../diff/report.js';
import type { Problem } from '../model/problem.js';
import { DirectoryMissingError } from '../sources/git/objects.js';
import { testContextsOf } from '../store/test-contexts.js';
import { countSummary } from './format-problems.js';
import { loadFolder, loadRevision, UnknownRevisionError, type LoadedSide } from './diff/load-side.js';
import { chooseGuardPolicy } from './guard-policy.js';
import type { CliIO } from './io.js';
import type { PolicyFile } from './policy-file.js';
import { runGuards } from './run-guards.js';
import { UsageError, VALIDATE_USAGE } from './usage.js';

export interface GuardCheck {
  readonly problems: Problem[];
  /** Text of the base's files by display path (`REV:path`), to quote the offending lines. */
  readonly texts: Map<string, () => Promise<string | undefined>>;
}

export async function checkGuards(o: { folder: string; base: string; repo: string | undefined; cwd: string; given: PolicyFile | undefined; io: CliIO }): Promise<GuardCheck> {
  const none: GuardCheck = { problems: [], texts: new Map() };
  const head = await loadFolder(o.folder, o.cwd);
  if (head.snapshot === undefined) return none; // its errors are the run's own problems
  const folder = await realpath(resolve(o.cwd, o.folder));
  const repo = o.repo !== undefined ? await realpath(resolve(o.cwd, o.repo)).catch(() => resolve(o.cwd, o.repo!)) : repositoryOf(folder);
  if (repo === undefined) throw new UsageError(`no Git repository holds ${o.folder}: name one with --repo PATH`, VALIDATE_USAGE);
  const inRepo = relative(repo, folder);
  if (inRepo.startsWith('..') || isAbsolute(inRepo)) throw new UsageError(`${o.folder} is not inside the repository ${o.repo ?? repo}`, VALIDATE_USAGE);
  const directory = inRepo.split(sep).join('/');

  let base: LoadedSide;
  try {
    base = await loadRevision(repo, o.base, directory === '' ? undefined : directory);
  } catch (err) {
    if (err instanceof UnknownRevisionError) throw new UsageError(err.message, VALIDATE_USAGE);
    if (err instanceof DirectoryMissingError) {
      o.io.stderr(`vexil: ${o.base} has no folder ${directory}: every flag is new, the guards are not checked\n`);
      return none;
    }
    throw err;
  }
  if (base.snapshot === undefined) {
    o.io.stderr(`vexil: the state at ${o.base} is invalid (${countSummary(base.problems)}): the guards are not checked\n`);
    return none;
  }
  const chosen = chooseGuardPolicy(o.given, { snapshot: base.snapshot, display: base.display }, { snapshot: head.snapshot, display: head.display });
  if (chosen === undefined || (chosen.policy !== undefined && chosen.policy.guards === undefined)) {
    o.io.stderr(`vexil: ${chosen === undefined ? 'no policy file' : `the policy ${chosen.display} has no guards`}: the change from ${o.base} is not judged\n`);
    return none;
  }
  // A malformed policy of the folder or given with --policy is already reported by validate itself.
  if (chosen.policy === undefined) return { problems: chosen.from === 'base' ? [...chosen.problems] : [], texts: new Map() };
  const share = chosen.policy.guards?.maxImpactShare;
  const report = diffReport(base.snapshot, head.snapshot, share !== undefined ? { impact: { entities: DEFAULT_IMPACT_ENTITIES, contexts: testContextsOf(head.snapshot) } } : {});
  const guards = await runGuards(report, { ...chosen, policy: chosen.policy }, base, head);
  const texts = new Map<string, () => Promise<string | undefined>>();
  for (const f of base.files) texts.set(base.display(f.path), async () => new TextDecoder().decode(await f.bytes()));
  return { problems: [...guards.findings], texts };
}

/** The working tree root (a folder holding `.git`) at or above `folder`. */
function repositoryOf(folder: string): string | undefined {
  for (let dir = folder; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}
