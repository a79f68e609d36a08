/**
 * Every sample entry's outcome for one flag of one side, for the impact preview (impact.ts). Pure.
 *
 * Why not the generated matchers: a diff evaluates each changed flag twice (base and head) over the
 * whole sample, so ~200 distinct generated functions each run 10,000 times once and never again.
 * V8 runs each one in its slow tiers for its first few thousand calls and compiles each one
 * separately: measured on the bench (`npm run bench -- diff`), that made the first diff of a
 * process 3-5× slower than the next ones (1.0-1.3 s quiet, 4.5 s on a loaded machine).
 *
 * Instead the decision procedure of the interpreter (variant.ts interpretVariant, boolean.ts
 * interpretBoolean: rules / rollouts in rank order over the compiled flag, first match decides) runs
 * here with one addition: the match of a segment set that reads no entity id depends on the context
 * alone, so it is computed once per distinct context (equal contexts share an id, see prepareSample)
 * and remembered. What stays per entity is the bucketing hash of the rule or threshold that decides.
 * This code is shared by every flag, so V8 optimizes it once, during the first flag.
 *
 * The outcomes equal those of runVariant / runBoolean entry by entry (test/diff/outcomes.test.ts
 * compares them over random states). An outcome is a variant key (`(none)` when the flag returns
 * none) or `true` / `false`.
 */
import type { CompiledSegmentSet } from '../evaluation/compile.js';
import { ROLLOUT_SEGMENT, ROLLOUT_THRESHOLD } from '../evaluation/compile.js';
import { matchSegmentSet } from '../evaluation/constraints.js';
import { decideRule } from '../evaluation/decide.js';
import { thresholdValue } from '../evaluation/hash.js';
import type { Flag } from '../state/model.js';
import type { SampleContext } from './types.js';

/** The sample with each entry's context numbered: entries whose contexts are equal share a number. */
export interface PreparedSample {
  readonly entries: readonly SampleContext[];
  /** contextIds[i]: the number of entries[i].context, 0 .. distinctContexts - 1. */
  readonly contextIds: Int32Array;
  readonly distinctContexts: number;
}

/**
 * Numbers the sample's contexts: the same object, or objects with the same prototype (null or
 * Object.prototype, what JSON and literals make) and the same own string entries, get one number.
 * A context read by the evaluators can only see those, so equal ones match the same segments.
 */
export function prepareSample(entries: readonly SampleContext[]): PreparedSample {
  const contextIds = new Int32Array(entries.length);
  const byObject = new Map<object, number>();
  const byContent = new Map<string, number>();
  let next = 0;
  for (let i = 0; i < entries.length; i++) {
    const ctx = entries[i]!.context;
    let id = byObject.get(ctx);
    if (id === undefined) {
      const key = contentKey(ctx);
      id = key === null ? undefined : byContent.get(key);
      if (id === undefined) {
        id = next++;
        if (key !== null) byContent.set(key, id);
      }
      byObject.set(ctx, id);
    }
    contextIds[i] = id;
  }
  return { entries, contextIds, distinctContexts: next };
}

/** A string naming the context's content, or null for an object of another prototype (never grouped). */
function contentKey(ctx: Readonly<Record<string, string>>): string | null {
  const proto = Object.getPrototypeOf(ctx) as unknown;
  if (proto !== null && proto !== Object.prototype) return null;
  const keys = Object.keys(ctx).sort();
  // Length-prefixed fields: two different contexts never make the same key.
  let out = proto === null ? 'n' : 'o';
  for (const k of keys) {
    const v = ctx[k];
    out += typeof v === 'string' ? `${k.length}:${k}${v.length}:${v}` : `${k.length}:${k}?`;
  }
  return out;
}

/**
 * Per segment set: its match by context number, filled as contexts are met (`undefined`: not yet
 * computed; null: no match), or null when the set reads the entity id (then it is matched per entry)
 * or holds an unknown constraint type (matchSegmentSet throws, as the evaluators do).
 */
type MatchMemo = Array<readonly string[] | null | undefined> | null;

function memoFor(set: CompiledSegmentSet, contexts: number): MatchMemo {
  if (set.unknownType) return null;
  for (const s of set.segments) for (const c of s.constraints) if (c.entity) return null;
  return new Array<readonly string[] | null | undefined>(contexts);
}

function match(set: CompiledSegmentSet, memo: MatchMemo, id: number, s: SampleContext): readonly string[] | null {
  if (memo === null) return matchSegmentSet(set, s.entityId, s.context);
  let keys = memo[id];
  if (keys === undefined) keys = memo[id] = matchSegmentSet(set, s.entityId, s.context);
  return keys;
}

export function sampleOutcomes(flag: Flag, sample: PreparedSample): string[] {
  const c = flag.compiled;
  const entries = sample.entries;
  const ids = sample.contextIds;
  const out = new Array<string>(entries.length);
  if (c.variant !== null) {
    const v = c.variant;
    if (!c.enabled) return out.fill(outcomeOfVariant(v.disabled.variantKey));
    const rules = v.rules;
    const memos = rules.map((r) => memoFor(r, sample.distinctContexts));
    const noMatch = outcomeOfVariant(v.noMatch!.variantKey);
    for (let i = 0; i < entries.length; i++) {
      const s = entries[i]!;
      let o = noMatch;
      for (let r = 0; r < rules.length; r++) {
        const rule = rules[r]!;
        const keys = match(rule, memos[r]!, ids[i]!, s);
        if (keys !== null) {
          o = outcomeOfVariant(decideRule(c, v, rule, s.entityId, keys).variantKey);
          break;
        }
      }
      out[i] = o;
    }
    return out;
  }
  const b = c.boolean!;
  const rollouts = b.rollouts;
  const memos = rollouts.map((r) => (r.kind === ROLLOUT_SEGMENT ? memoFor(r, sample.distinctContexts) : null));
  const fallThrough = b.fallThrough.enabled ? 'true' : 'false';
  for (let i = 0; i < entries.length; i++) {
    const s = entries[i]!;
    let o = fallThrough;
    let n = -1; // crc32(entityId ‖ flagKey) % 100, on the first threshold rollout reached
    for (let r = 0; r < rollouts.length; r++) {
      const rollout = rollouts[r]!;
      if (rollout.kind === ROLLOUT_THRESHOLD) {
        if (n < 0) n = thresholdValue(s.entityId, c.key);
        if (n < rollout.percentage) {
          o = rollout.value ? 'true' : 'false';
          break;
        }
      } else if (rollout.kind === ROLLOUT_SEGMENT) {
        // A matched segment rollout answers its value whichever of its segments matched.
        if (match(rollout, memos[r]!, ids[i]!, s) !== null) {
          o = rollout.value ? 'true' : 'false';
          break;
        }
      }
    }
    out[i] = o;
  }
  return out;
}

function outcomeOfVariant(key: string): string {
  return key === '' ? '(none)' : key;
}
