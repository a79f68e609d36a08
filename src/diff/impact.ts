/**
 * The impact preview: for a sample of evaluation inputs, which outcomes differ between base and
 * head, per flag. Pure (no I/O); evaluates the compiled flags of each snapshot (outcomes.ts).
 *
 * Only flags that can answer differently are evaluated: those the diff reports changed, and
 * unchanged ones whose rules or rollouts read a segment the diff reports changed, added or
 * removed. An outcome is a variant key (`(none)` when no variant is returned) or `true`/`false`.
 */
import type { Flag, Namespace, Snapshot } from '../model/snapshot.js';
import { byteOrder } from './diff.js';
import { prepareSample, sampleOutcomes, type PreparedSample } from './outcomes.js';
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

export function impact(base: Snapshot, head: Snapshot, d: SnapshotDiff, opts: ImpactOptions): ImpactReport {
  const flags: FlagImpact[] = [];
  let omittedFlags = 0;
  const sample = prepareSample(opts.sample);
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
      if (flags.length < MAX_IMPACT_FLAGS && (flags.length + 1) * opts.sample.length <= MAX_IMPACT_PAIRS) flags.push(flagImpact(ns.key, b, h, key, sample));
      else omittedFlags++;
    }
  }
  return { sample: { source: opts.source, entities: opts.sample.length, contexts: opts.contexts }, flags, omittedFlags };
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

function flagImpact(namespace: string, b: Namespace, h: Namespace, key: string, sample: PreparedSample): FlagImpact {
  const before = sampleOutcomes(b.flags.get(key)!, sample);
  const after = sampleOutcomes(h.flags.get(key)!, sample);
  const counts = new Map<string, Transition & { count: number }>();
  let changed = 0;
  const n = sample.entries.length;
  for (let i = 0; i < n; i++) {
    const from = before[i]!;
    const to = after[i]!;
    if (from === to) continue;
    changed++;
    const k = `${from}\u0000${to}`;
    const t = counts.get(k);
    if (t === undefined) counts.set(k, { from, to, count: 1 });
    else t.count++;
  }
  const transitions = [...counts.values()].sort((x, y) => y.count - x.count || byteOrder(x.from, y.from) || byteOrder(x.to, y.to));
  return { namespace, flag: key, evaluated: n, changed, ratio: n === 0 ? 0 : changed / n, transitions };
}
