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
 *
 * In steps (steps.ts): an impact preview evaluates OUTCOME_STEP entries at a time (outcomeRange)
 * and prepareSampleSteps numbers SAMPLE_STEP contexts between two yields, so the server can cut a
 * large preview into time slices; every entry's outcome is computed by the same code whatever the
 * cut. The sample is held as columns (entity ids, context numbers, distinct contexts), not as one
 * object per entry, so a synthetic sample of 100,000 entities (impact.ts) is two arrays, not
 * 100,000 young objects for the garbage collector to copy while other requests wait.
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
import { drain, type Steps } from './steps.js';
import type { SampleContext } from './types.js';

/** Entries evaluated at a time by an impact preview, between two yields (tens to hundreds of microseconds). */
export const OUTCOME_STEP = 256;
/** Contexts numbered between two yields of prepareSampleSteps. */
export const SAMPLE_STEP = 4096;

/** The sample with each entry's context numbered: entries whose contexts are equal share a number. */
export interface PreparedSample {
  /** Entries in the sample. */
  readonly size: number;
  /** entityIds[i]: entry i's entity id, for i < size (the array may be longer: a shared prefix). */
  readonly entityIds: readonly string[];
  /** contextIds[i]: the number of entry i's context, 0 .. distinctContexts - 1. */
  readonly contextIds: Int32Array;
  /** The contexts by number. */
  readonly contexts: readonly Readonly<Record<string, string>>[];
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
  return drain(prepareSampleSteps(entries));
}

export function* prepareSampleSteps(entries: readonly SampleContext[]): Steps<PreparedSample> {
  const entityIds = new Array<string>(entries.length);
  const contextIds = new Int32Array(entries.length);
  const contexts: Readonly<Record<string, string>>[] = [];
  const byObject = new Map<object, number>();
  const byContent = new Map<string, number>();
  for (let i = 0; i < entries.length; i++) {
    if (i > 0 && i % SAMPLE_STEP === 0) yield;
    const ctx = entries[i]!.context;
    entityIds[i] = entries[i]!.entityId;
    let id = byObject.get(ctx);
    if (id === undefined) {
      const key = contentKey(ctx);
      id = key === null ? undefined : byContent.get(key);
      if (id === undefined) {
        id = contexts.length;
        contexts.push(ctx);
        if (key !== null) byContent.set(key, id);
      }
      byObject.set(ctx, id);
    }
    contextIds[i] = id;
  }
  return columnSample(entries.length, entityIds, contextIds, contexts);
}

/**
 * A sample given as columns: entry i is (entityIds[i], contexts[contextIds[i]]). Contexts under
 * different numbers may be equal: that only costs their segment answers being computed twice.
 */
export function columnSample(size: number, entityIds: readonly string[], contextIds: Int32Array, contexts: readonly Readonly<Record<string, string>>[]): PreparedSample {
  return { size, entityIds, contextIds, contexts, distinctContexts: contexts.length, plans: new Map() };
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

/** matchSegment's answer for an entry (context number `id`). */
function segmentMatches(plan: SegmentPlan, id: number, entityId: string, context: Readonly<Record<string, string>>): boolean {
  let m = plan.memo[id]!;
  if (m === 0) {
    const part = plan.contextPart;
    // A segment without constraints matches (matchSegment); the context part of a segment that has
    // some on the entity id is "all of nothing" (true) for ALL and "any of nothing" (false) for ANY.
    const matched = part === null ? matchSegment(plan.segment, entityId, context) : part.constraints.length === 0 ? plan.all : matchSegment(part, entityId, context);
    m = plan.memo[id] = matched ? 2 : 1;
  }
  const contextMatched = m === 2;
  const entity = plan.entity;
  if (entity.length === 0) return contextMatched;
  if (plan.all) {
    if (!contextMatched) return false;
    for (let i = 0; i < entity.length; i++) if (!matchConstraint(entity[i]!, entityId, context)) return false;
    return true;
  }
  if (contextMatched) return true;
  for (let i = 0; i < entity.length; i++) if (matchConstraint(entity[i]!, entityId, context)) return true;
  return false;
}

/**
 * Whether matchSegmentSet would find a match (AND: every segment, the empty set included; OR: at
 * least one). Which segments matched does not change an outcome (decideRule answers the same
 * variant for a partial OR match; a matched segment rollout answers its value), so only whether.
 */
function setMatches(set: CompiledSegmentSet, plans: readonly SegmentPlan[], id: number, entityId: string, context: Readonly<Record<string, string>>): boolean {
  // An unknown constraint type: matchSegmentSet throws exactly as the evaluators do.
  if (set.unknownType) return matchSegmentSet(set, entityId, context) !== null;
  if (set.and) {
    for (let i = 0; i < plans.length; i++) if (!segmentMatches(plans[i]!, id, entityId, context)) return false;
    return true;
  }
  for (let i = 0; i < plans.length; i++) if (segmentMatches(plans[i]!, id, entityId, context)) return true;
  return false;
}

/** Every entry's outcome for one flag (the whole sample at once). */
export function sampleOutcomes(flag: Flag, sample: PreparedSample): string[] {
  const out = new Array<string>(sample.size);
  outcomeRange(flag, sample)(out, 0, sample.size, 0);
  return out;
}

/** Writes the outcomes of entries from..to-1 into out[from - offset .. to - offset - 1]. */
export type OutcomeRange = (out: string[], from: number, to: number, offset: number) => void;

/** The outcomes of one flag over any range of the sample (an impact preview asks OUTCOME_STEP at a time). */
export function outcomeRange(flag: Flag, sample: PreparedSample): OutcomeRange {
  const c = flag.compiled;
  if (c.variant !== null) {
    const v = c.variant;
    if (!c.enabled) {
      // runVariant for a disabled flag: the same answer for every entry.
      const o = outcomeOfVariant(v.disabled.variantKey);
      return (out, from, to, offset) => {
        for (let i = from; i < to; i++) out[i - offset] = o;
      };
    }
    const plans = v.rules.map((r) => r.segments.map((seg) => planFor(seg, sample)));
    return (out, from, to, offset) => variantOutcomes(c, v, plans, sample, out, from, to, offset);
  }
  const b = c.boolean!;
  const plans = b.rollouts.map((r) => r.segments.map((seg) => planFor(seg, sample)));
  return (out, from, to, offset) => booleanOutcomes(c, b, plans, sample, out, from, to, offset);
}

// One function per flag type: each loop is optimized on its own, with its own type feedback.

/** interpretVariant's procedure over entries from..to-1 of the sample, for an enabled flag. */
function variantOutcomes(c: CompiledFlag, v: CompiledVariantFlag, plans: readonly (readonly SegmentPlan[])[], sample: PreparedSample, out: string[], from: number, to: number, offset: number): void {
  const entityIds = sample.entityIds;
  const ids = sample.contextIds;
  const contexts = sample.contexts;
  const rules = v.rules;
  const noMatch = outcomeOfVariant(v.noMatch!.variantKey);
  for (let i = from; i < to; i++) {
    const entityId = entityIds[i]!;
    const id = ids[i]!;
    const context = contexts[id]!;
    let o = noMatch;
    for (let r = 0; r < rules.length; r++) {
      const rule = rules[r]!;
      if (setMatches(rule, plans[r]!, id, entityId, context)) {
        o = outcomeOfVariant(decideRule(c, v, rule, entityId, rule.allKeys).variantKey);
        break;
      }
    }
    out[i - offset] = o;
  }
}

/** interpretBoolean's procedure over entries from..to-1 of the sample. */
function booleanOutcomes(c: CompiledFlag, b: CompiledBooleanFlag, plans: readonly (readonly SegmentPlan[])[], sample: PreparedSample, out: string[], from: number, to: number, offset: number): void {
  const entityIds = sample.entityIds;
  const ids = sample.contextIds;
  const contexts = sample.contexts;
  const rollouts = b.rollouts;
  const fallThrough = b.fallThrough.enabled ? 'true' : 'false';
  for (let i = from; i < to; i++) {
    const entityId = entityIds[i]!;
    const id = ids[i]!;
    let o = fallThrough;
    let n = -1; // crc32(entityId ‖ flagKey) % 100, on the first threshold rollout reached
    for (let r = 0; r < rollouts.length; r++) {
      const rollout = rollouts[r]!;
      if (rollout.kind === ROLLOUT_THRESHOLD) {
        if (n < 0) n = thresholdValue(entityId, c.key);
        if (n < rollout.percentage) {
          o = rollout.value ? 'true' : 'false';
          break;
        }
      } else if (rollout.kind === ROLLOUT_SEGMENT) {
        if (setMatches(rollout, plans[r]!, id, entityId, contexts[id]!)) {
          o = rollout.value ? 'true' : 'false';
          break;
        }
      }
    }
    out[i - offset] = o;
  }
}

function outcomeOfVariant(key: string): string {
  return key === '' ? '(none)' : key;
}
