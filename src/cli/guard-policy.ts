/**
 * Which policy governs the guards on a change, for `vexil validate --base` and `vexil diff
 * --policy`: the file given with `--policy`, else the base side's `.vexil/policy.yml`, else the
 * head side's. The base's comes first so that a pull request cannot loosen the guards it is judged
 * by (raising a limit, unprotecting a flag) in the same change: a new limit applies from the change
 * after the one that merges it. A head policy governs only when the base has none, which can only
 * add guards. The side policies were read with the sides (store/state-policy.ts).
 */
import type { Problem } from '../model/problem.js';
import type { Snapshot } from '../model/snapshot.js';
import type { Policy } from '../state/policy/policy-file.js';
import { statePolicyOf } from '../store/state-policy.js';
import type { PolicyFile } from './policy-file.js';

export interface GuardPolicy {
  /** The policy file as shown in problems. */
  readonly display: string;
  /** Which one governs: `--policy`, the base side's or the head side's. */
  readonly from: 'option' | 'base' | 'head';
  readonly policy?: Policy;
  /** The policy file's own problems (then there is no policy). */
  readonly problems: readonly Problem[];
}

export interface PolicySide {
  readonly snapshot: Snapshot;
  /** A state-relative path as shown to the user. */
  readonly display: (path: string) => string;
}

/** The governing policy, or undefined when there is none at all. */
export function chooseGuardPolicy(given: PolicyFile | undefined, base: PolicySide, head: PolicySide): GuardPolicy | undefined {
  if (given !== undefined) return { display: given.display, from: 'option', ...(given.policy !== undefined ? { policy: given.policy } : {}), problems: given.problems };
  for (const [from, side] of [['base', base], ['head', head]] as const) {
    const kept = statePolicyOf(side.snapshot);
    if (kept === undefined) continue;
    const display = side.display(kept.file);
    if ('policy' in kept) return { display, from, policy: kept.policy, problems: [] };
    return { display, from, problems: kept.problems.map((p) => ({ ...p, file: p.file === '' ? '' : side.display(p.file) })) };
  }
  return undefined;
}
