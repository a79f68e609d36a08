/**
 * The impact preview: for a sample of evaluation inputs, which outcomes differ between base and
 * head, per flag. Pure (no I/O); evaluates the compiled flags of each snapshot (outcomes.ts).
 *
 * Only flags that can answer differently are evaluated: those the diff reports changed, and
 * unchanged ones whose rules or rollouts read a segment the diff reports changed, added or
 * removed. An outcome is a variant key (`(none)` when no variant is returned) or `true`/`false`.
 *
 * `impactSteps` is the same computation in steps (steps.ts), for the server's time slices, and
 * `syntheticImpactSteps` the same over the synthetic sample, built as columns (outcomes.ts
 * columnSample) over one process-wide list of synthetic entity ids instead of one object per
 * entity; `impact` runs it at once. Base and head outcomes are compared OUTCOME_STEP entries at a
 * time, never held for the whole sample.
 */
import type { Flag, Namespace, Snapshot } from '../model/snapshot.js';
import { byteOrder } from './diff.js';
import { OUTCOME_STEP, SAMPLE_STEP, columnSample, outcomeRange, prepareSampleSteps, type PreparedSample } from './outcomes.js';
import { drain, type Steps } from './steps.js';
import type { FlagImpact, ImpactReport, SampleContext, SnapshotDiff, Transition } from './types.js';

export const DEFAULT_IMPACT_ENTITIES = 10_000;
export const MAX_IMPACT_ENTITIES = 100_000;
/**
 * Flags are evaluated in namespace, key order while at most 1,000 flags and at most 2,000,000
 * flag × entity pairs (each evaluated on both sides) are reached; the others are counted in
 * `omittedFlags`. Bounds the work of one API request (a few seconds of CPU at most).
 */
export const MAX_IMPACT_FLAGS = 1_000;
export const MAX_IMPACT_PAIRS = 2_000_000;

export interface ImpactOptions {
  readonly sample: readonly SampleContext[];
  readonly source: 'synthetic' | 'contexts-file';
  /** Distinct contexts the sample was built from (reported only). */
  readonly contexts: number;
}

/**
 * The synthetic sample: `entities` ids (`entity-1`...), each given one of `contexts` in turn (the
 * contexts of the flag test files; the empty context when there are none), so the sample size
 * stays `entities` whatever the number of contexts.
 */
export function syntheticSample(entities: number, contexts: readonly Readonly<Record<string, string>>[]): SampleContext[] {
  const pool = contexts.length > 0 ? contexts : [{}];
  const out: SampleContext[] = new Array(entities);
  for (let i = 0; i < entities; i++) out[i] = { entityId: `entity-${i + 1}`, context: pool[i % pool.length]! };
  return out;
}

/**
 * `entity-1`, `entity-2`...: the ids of every synthetic sample, made once per process (up to
 * MAX_IMPACT_ENTITIES, about 4 MB) and shared; a sample of N entities reads the first N.
 */
const syntheticIds: string[] = [];

function* syntheticIdsSteps(entities: number): Steps<readonly string[]> {
  while (syntheticIds.length < entities) {
    syntheticIds.push(`entity-${syntheticIds.length + 1}`);
    if (syntheticIds.length % SAMPLE_STEP === 0) yield;
  }
  return syntheticIds;
}

/** syntheticSample(entities, contexts) as columns: the same entries, the same outcomes. */
function* syntheticPreparedSteps(entities: number, contexts: readonly Readonly<Record<string, string>>[]): Steps<PreparedSample> {
  const pool = contexts.length > 0 ? contexts : [{}];
  const entityIds = yield* syntheticIdsSteps(entities);
  const contextIds = new Int32Array(entities);
  for (let i = 0; i < entities; i++) contextIds[i] = i % pool.length;
  return columnSample(entities, entityIds, contextIds, pool);
}

export function impact(base: Snapshot, head: Snapshot, d: SnapshotDiff, opts: ImpactOptions): ImpactReport {
  return drain(impactSteps(base, head, d, opts));
}

export function* impactSteps(base: Snapshot, head: Snapshot, d: SnapshotDiff, opts: ImpactOptions): Steps<ImpactReport> {
  const sample = yield* prepareSampleSteps(opts.sample);
  return yield* impactOfSample(base, head, d, sample, { source: opts.source, entities: opts.sample.length, contexts: opts.contexts });
}

/** The impact over the synthetic sample of `entities` ids over `contexts` (syntheticSample), in steps. */
export function* syntheticImpactSteps(base: Snapshot, head: Snapshot, d: SnapshotDiff, entities: number, contexts: readonly Readonly<Record<string, string>>[]): Steps<ImpactReport> {
  const sample = yield* syntheticPreparedSteps(entities, contexts);
  return yield* impactOfSample(base, head, d, sample, { source: 'synthetic', entities, contexts: contexts.length });
}

function* impactOfSample(base: Snapshot, head: Snapshot, d: SnapshotDiff, sample: PreparedSample, info: ImpactReport['sample']): Steps<ImpactReport> {
  const flags: FlagImpact[] = [];
  let omittedFlags = 0;
  for (const ns of d.namespaces) {
    const b = base.namespaces.get(ns.key);
    const h = head.namespaces.get(ns.key);
    if (b === undefined || h === undefined) continue; // a namespace on one side only: every flag is added or removed
    const touched = new Set(ns.segments.map((s) => s.key));
    const keys = new Set(ns.flags.filter((f) => f.status === 'changed').map((f) => f.key));
    if (touched.size > 0) {
      for (const [key, flag] of h.flags) if (!keys.has(key) && b.flags.has(key) && readsAny(flag, touched)) keys.add(key);
    }
    for (const key of [...keys].sort(byteOrder)) {
      if (flags.length < MAX_IMPACT_FLAGS && (flags.length + 1) * sample.size <= MAX_IMPACT_PAIRS) flags.push(yield* flagImpact(ns.key, b, h, key, sample));
      else omittedFlags++;
    }
  }
  return { sample: info, flags, omittedFlags };
}

function readsAny(flag: Flag, segments: ReadonlySet<string>): boolean {
  for (const r of flag.rules) {
    if (segments.has(r.segmentKey) || r.segmentKeys.some((k) => segments.has(k))) return true;
  }
  for (const r of flag.rollouts) {
    if (r.segment !== undefined && (segments.has(r.segment.segmentKey) || r.segment.segmentKeys.some((k) => segments.has(k)))) return true;
  }
  return false;
}

function* flagImpact(namespace: string, b: Namespace, h: Namespace, key: string, sample: PreparedSample): Steps<FlagImpact> {
  const before = outcomeRange(b.flags.get(key)!, sample);
  const after = outcomeRange(h.flags.get(key)!, sample);
  const x = new Array<string>(OUTCOME_STEP);
  const y = new Array<string>(OUTCOME_STEP);
  const counts = new Map<string, Transition & { count: number }>();
  let changed = 0;
  const n = sample.size;
  for (let from = 0; from < n; from += OUTCOME_STEP) {
    if (from > 0) yield;
    const to = Math.min(n, from + OUTCOME_STEP);
    before(x, from, to, from);
    after(y, from, to, from);
    for (let j = 0; j < to - from; j++) {
      const f = x[j]!;
      const t = y[j]!;
      if (f === t) continue;
      changed++;
      const k = `${f}\u0000${t}`;
      const c = counts.get(k);
      if (c === undefined) counts.set(k, { from: f, to: t, count: 1 });
      else c.count++;
    }
  }
  const transitions = [...counts.values()].sort((x, y) => y.count - x.count || byteOrder(x.from, y.from) || byteOrder(x.to, y.to));
  return { namespace, flag: key, evaluated: n, changed, ratio: n === 0 ? 0 : changed / n, transitions };
}
