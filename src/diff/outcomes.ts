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
 * here with one addition: what a segment's constraints on the context answer depends on the context
 * alone, so it is computed once per distinct context (equal contexts share a number, see
 * prepareSample) and remembered, for every flag using that segment. What stays per entry is the
 * constraints on the entity id and the bucketing hash of the rule or threshold that decides. This
 * code is shared by every flag, so V8 optimizes it once, during the first flag.
 *
 * The outcomes equal those of runVariant / runBoolean entry by entry (test/diff/outcomes.test.ts
 * compares them over random states). An outcome is a variant key (`(none)` when the flag returns
 * none) or `true` / `false`.
 */
import { ROLLOUT_SEGMENT, ROLLOUT_THRESHOLD } from '../evaluation/opcodes.js';
import type {
  CompiledBooleanFlag,
  CompiledConstraint,
  CompiledFlag,
  CompiledSegment,
  CompiledSegmentSet,
  CompiledVariantFlag,
} from '../model/compiled.js';
import { matchConstraint, matchSegment, matchSegmentSet } from '../evaluation/constraints.js';
import { decideRule } from '../evaluation/decide.js';
import { thresholdValue } from '../evaluation/hash.js';
import type { Flag } from '../model/snapshot.js';
import type { SampleContext } from './types.js';

/** The sample with each entry's context numbered: entries whose contexts are equal share a number. */
export interface PreparedSample {
  readonly entries: readonly SampleContext[];
  /** contextIds[i]: the number of entries[i].context, 0 .. distinctContexts - 1. */
  readonly contextIds: Int32Array;
  readonly distinctContexts: number;
  /** How each compiled segment met so far is matched, with what it remembered (filled by sampleOutcomes). */
  readonly plans: Map<CompiledSegment, SegmentPlan>;
}

/**
 * Numbers the sample's contexts: the same object, or objects with the same prototype (null or
 * Object.prototype, what JSON and literals make) and the same own entries in the same order, get one
 * number. The evaluators read nothing else of a context, so equal ones match the same segments.
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
  return { entries, contextIds, distinctContexts: next, plans: new Map() };
}

/** A string naming the context's content, or null for an object of another prototype (never grouped). */
function contentKey(ctx: Readonly<Record<string, string>>): string | null {
  const proto = Object.getPrototypeOf(ctx) as unknown;
  if (proto !== null && proto !== Object.prototype) return null;
  // Keys in the object's own order (not sorted: cheaper, and equal contexts written in another
  // order only miss the sharing). Length-prefixed fields: two different contexts never make the same key.
  const keys = Object.keys(ctx);
  let out = proto === null ? 'n' : 'o';
  for (const k of keys) {
    const v = ctx[k];
    out += typeof v === 'string' ? `${k.length}:${k}${v.length}:${v}` : `${k.length}:${k}?`;
  }
  return out;
}

/**
 * How one compiled segment is matched over the sample: the part of it that reads the context only
 * is computed once per distinct context and remembered (0: not yet, 1: no match, 2: match); the
 * constraints on the entity id, if any, are checked per entry. Compiled segments are shared by the
 * flags of a snapshot, so what one flag remembers serves the others.
 */
interface SegmentPlan {
  readonly segment: CompiledSegment;
  /** ALL (else ANY). */
  readonly all: boolean;
  /** The context part as a segment of its own (same match type), or null when the whole segment reads the context only. */
  readonly contextPart: CompiledSegment | null;
  /** The constraints on the entity id. */
  readonly entity: readonly CompiledConstraint[];
  readonly memo: Int8Array;
}

function planFor(segment: CompiledSegment, sample: PreparedSample): SegmentPlan {
  let plan = sample.plans.get(segment);
  if (plan === undefined) {
    const entity = segment.constraints.filter((c) => c.entity);
    const contextPart = entity.length === 0 ? null : { ...segment, constraints: segment.constraints.filter((c) => !c.entity) };
    plan = { segment, all: segment.all, contextPart, entity, memo: new Int8Array(sample.distinctContexts) };
    sample.plans.set(segment, plan);
  }
  return plan;
}

/** matchSegment's answer for entry `s` (context number `id`). */
function segmentMatches(plan: SegmentPlan, id: number, s: SampleContext): boolean {
  let m = plan.memo[id]!;
  if (m === 0) {
    const part = plan.contextPart;
    // A segment without constraints matches (matchSegment); the context part of a segment that has
    // some on the entity id is "all of nothing" (true) for ALL and "any of nothing" (false) for ANY.
    const matched = part === null ? matchSegment(plan.segment, s.entityId, s.context) : part.constraints.length === 0 ? plan.all : matchSegment(part, s.entityId, s.context);
    m = plan.memo[id] = matched ? 2 : 1;
  }
  const contextMatched = m === 2;
  const entity = plan.entity;
  if (entity.length === 0) return contextMatched;
  if (plan.all) {
    if (!contextMatched) return false;
    for (let i = 0; i < entity.length; i++) if (!matchConstraint(entity[i]!, s.entityId, s.context)) return false;
    return true;
  }
  if (contextMatched) return true;
  for (let i = 0; i < entity.length; i++) if (matchConstraint(entity[i]!, s.entityId, s.context)) return true;
  return false;
}

/**
 * Whether matchSegmentSet would find a match (AND: every segment, the empty set included; OR: at
 * least one). Which segments matched does not change an outcome (decideRule answers the same
 * variant for a partial OR match; a matched segment rollout answers its value), so only whether.
 */
function setMatches(set: CompiledSegmentSet, plans: readonly SegmentPlan[], id: number, s: SampleContext): boolean {
  // An unknown constraint type: matchSegmentSet throws exactly as the evaluators do.
  if (set.unknownType) return matchSegmentSet(set, s.entityId, s.context) !== null;
  if (set.and) {
    for (let i = 0; i < plans.length; i++) if (!segmentMatches(plans[i]!, id, s)) return false;
    return true;
  }
  for (let i = 0; i < plans.length; i++) if (segmentMatches(plans[i]!, id, s)) return true;
  return false;
}

export function sampleOutcomes(flag: Flag, sample: PreparedSample): string[] {
  const c = flag.compiled;
  // One function per flag type: each loop is optimized on its own, with its own type feedback.
  return c.variant !== null ? variantOutcomes(c, c.variant, sample) : booleanOutcomes(c, c.boolean!, sample);
}

/** interpretVariant's procedure (runVariant for a disabled flag) over the sample. */
function variantOutcomes(c: CompiledFlag, v: CompiledVariantFlag, sample: PreparedSample): string[] {
  const entries = sample.entries;
  const ids = sample.contextIds;
  const out = new Array<string>(entries.length);
  if (!c.enabled) return out.fill(outcomeOfVariant(v.disabled.variantKey));
  const rules = v.rules;
  const plans = rules.map((r) => r.segments.map((seg) => planFor(seg, sample)));
  const noMatch = outcomeOfVariant(v.noMatch!.variantKey);
  for (let i = 0; i < entries.length; i++) {
    const s = entries[i]!;
    let o = noMatch;
    for (let r = 0; r < rules.length; r++) {
      const rule = rules[r]!;
      if (setMatches(rule, plans[r]!, ids[i]!, s)) {
        o = outcomeOfVariant(decideRule(c, v, rule, s.entityId, rule.allKeys).variantKey);
        break;
      }
    }
    out[i] = o;
  }
  return out;
}

/** interpretBoolean's procedure over the sample. */
function booleanOutcomes(c: CompiledFlag, b: CompiledBooleanFlag, sample: PreparedSample): string[] {
  const entries = sample.entries;
  const ids = sample.contextIds;
  const out = new Array<string>(entries.length);
  const rollouts = b.rollouts;
  const plans = rollouts.map((r) => r.segments.map((seg) => planFor(seg, sample)));
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
        if (setMatches(rollout, plans[r]!, ids[i]!, s)) {
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
