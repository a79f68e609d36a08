/**
 * Which rules of a variant flag, and which rollouts of a boolean flag, can ever decide, following
 * the evaluators (flipt-semantics.md §2.2, §2.4): the first rule whose segments match decides
 * (no fall-through); rollouts are tried in order, a threshold takes the entities whose
 * crc32(entityId ‖ flagKey) % 100 is below its percentage (float32, strict `<`), a segment rollout
 * those its segments match, and a rollout with neither is skipped.
 *
 * A rule or rollout never decides when its own segments match no entity, when an earlier one
 * matches every entity (no constraints, AND of nothing, a threshold over 99), when an earlier one
 * matches every entity it matches (segment-set implication, segment-verdicts.ts), or, for a
 * threshold, when earlier thresholds already take every bucket it would (0% takes none). Rules of
 * a disabled variant flag are judged as if it were enabled (they decide once it is). Pure; the
 * implication test looks at most MAX_EARLIER rules back, so work stays linear in the rules.
 */
import type { Flag, Segment } from '../../model/snapshot.js';
import { implies, normalSet, type NormalSet } from './segment-verdicts.js';

/** Earlier rules or rollouts a set is compared with (see judge). */
const MAX_EARLIER = 256;

/** Why a rule or rollout never decides, in words that finish "it never decides: ...". */
export type NeverDecides = { readonly because: string; readonly by?: number };

export interface FlagDecisions {
  /** Per rule (variant flag) or rollout (boolean flag), in declared order: why it never decides, or undefined when it may. */
  readonly never: readonly (NeverDecides | undefined)[];
}

/** Bucket count of a threshold: how many of 0..99 are below float32(percentage). */
export function thresholdBuckets(percentage: number): number {
  const p = Math.fround(percentage);
  if (!(p > 0)) return 0;
  return Math.min(100, Math.ceil(p));
}

export function flagDecisions(flag: Flag, segments: ReadonlyMap<string, Segment>): FlagDecisions {
  return flag.type === 'VARIANT_FLAG_TYPE' ? ruleDecisions(flag, segments) : rolloutDecisions(flag, segments);
}

function ruleDecisions(flag: Flag, segments: ReadonlyMap<string, Segment>): FlagDecisions {
  const never: (NeverDecides | undefined)[] = [];
  const sets: NormalSet[] = [];
  let catchAll: { index: number; because: string } | undefined;
  for (let r = 0; r < flag.rules.length; r++) {
    const rule = flag.rules[r];
    const set = normalSet(rule.segmentKey !== '' ? oneKey(rule.segmentKey) : rule.segmentKeys, rule.segmentOperator === 'AND_SEGMENT_OPERATOR', segments);
    sets.push(set);
    never.push(judge(set, sets, r, catchAll, 'rule'));
    if (catchAll === undefined && set.truth === 'always') catchAll = { index: r, because: set.because };
  }
  return { never };
}

function judge(set: NormalSet, sets: readonly NormalSet[], at: number, catchAll: { index: number; because: string } | undefined, noun: string): NeverDecides | undefined {
  if (catchAll !== undefined) {
    return { because: `${noun} ${catchAll.index + 1} before it matches every entity (${catchAll.because})`, by: catchAll.index };
  }
  if (set.truth === 'never') return { because: `it matches no entity: ${set.because}` };
  if (set.truth === 'depends') {
    // Bounded work for flags with thousands of rules: the nearest earlier ones only (missing a
    // report is allowed, a wrong one is not).
    for (let e = Math.max(0, at - MAX_EARLIER); e < at; e++) {
      const earlier = sets[e];
      if (earlier !== undefined && earlier.truth === 'depends' && implies(set, earlier)) {
        return { because: `${noun} ${e + 1} before it matches every entity this one matches${sameIds(set, earlier) ? ' (the same segments)' : ''}`, by: e };
      }
    }
  }
  return undefined;
}

/** A one-key list without allocating (normalSet reads it before the next call). */
const ONE: string[] = [''];
function oneKey(key: string): readonly string[] {
  ONE[0] = key;
  return ONE;
}

function sameIds(a: NormalSet, b: NormalSet): boolean {
  return a.ids.length === b.ids.length && a.ids.every((x) => b.ids.includes(x)) && (a.and === b.and || a.ids.length === 1);
}

function rolloutDecisions(flag: Flag, segments: ReadonlyMap<string, Segment>): FlagDecisions {
  const never: (NeverDecides | undefined)[] = [];
  const sets: NormalSet[] = [];
  let catchAll: { index: number; because: string } | undefined;
  let taken = 0; // buckets (of 0..99) earlier thresholds take
  let takenBy = -1;
  for (let r = 0; r < flag.rollouts.length; r++) {
    const rollout = flag.rollouts[r];
    if (rollout.threshold !== undefined) {
      const buckets = thresholdBuckets(rollout.threshold.percentage);
      if (catchAll !== undefined) never.push({ because: `rollout ${catchAll.index + 1} before it matches every entity (${catchAll.because})`, by: catchAll.index });
      else if (buckets === 0) never.push({ because: `a threshold of ${rollout.threshold.percentage}% matches no entity` });
      else if (buckets <= taken) never.push({ because: `the threshold of rollout ${takenBy + 1} before it already takes every entity this one would`, by: takenBy });
      else never.push(undefined);
      if (buckets > taken) {
        taken = buckets;
        takenBy = r;
      }
      if (catchAll === undefined && buckets === 100) catchAll = { index: r, because: `a threshold of ${rollout.threshold.percentage}% takes every entity` };
      continue;
    }
    if (rollout.segment === undefined) {
      never.push(catchAll !== undefined ? { because: `rollout ${catchAll.index + 1} before it matches every entity (${catchAll.because})`, by: catchAll.index } : { because: 'it has neither a segment nor a threshold, so evaluation skips it' });
      continue;
    }
    const s = rollout.segment;
    const set = normalSet(s.segmentKey !== '' ? oneKey(s.segmentKey) : s.segmentKeys, s.segmentOperator === 'AND_SEGMENT_OPERATOR', segments);
    sets[r] = set;
    never.push(judge(set, sets, r, catchAll, 'rollout'));
    if (catchAll === undefined && set.truth === 'always') catchAll = { index: r, because: set.because };
  }
  return { never };
}
