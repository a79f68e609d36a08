/**
 * The outline of a namespace: for each flag only what decides who gets what, without names,
 * variants, attachments, constraints or timestamps — each rule's and rollout's rank and segment
 * keys, a rollout's percentage and value — plus the keys of the segments that match every entity
 * (no constraints, flipt-semantics §2.2). It answers "what does this flag do at a glance" and
 * "which flags use this segment" for a whole namespace in a fraction of the evaluation snapshot's
 * bytes (no constraints, no distributions). Built once per snapshot and namespace (a snapshot never
 * changes) and kept beside it in a WeakMap. Pure: no I/O.
 */
import { notFound } from '../../errors.js';
import type { Namespace, Rollout, Rule, Snapshot } from '../../model/snapshot.js';

/** A rule or segment rollout's segment set: keys in declared order, `AND` or `OR`. */
export interface OutlineSegmentSet {
  segments: string[];
  operator: 'AND' | 'OR';
}

export interface OutlineRule extends OutlineSegmentSet {
  rank: number;
}

/** A threshold rollout has `percentage`; a segment rollout `segments` and `operator`. */
export interface OutlineRollout {
  rank: number;
  value: boolean;
  percentage?: number;
  segments?: string[];
  operator?: 'AND' | 'OR';
}

export interface OutlineFlag {
  key: string;
  rules: OutlineRule[];
  rollouts: OutlineRollout[];
}

export interface NamespaceOutline {
  namespaceKey: string;
  flags: OutlineFlag[];
  /** Segments with no constraints: every entity is in them. */
  everyoneSegments: string[];
}

/** One use of a segment by one flag: the ranks of the rules and rollouts naming it. */
export interface SegmentUse {
  key: string;
  name: string;
  rules: number[];
  rollouts: number[];
}

const cache = new WeakMap<Snapshot, Map<string, NamespaceOutline>>();

function keysOf(s: { segmentKey: string; segmentKeys: readonly string[] }): string[] {
  if (s.segmentKeys.length > 0) return [...s.segmentKeys];
  return s.segmentKey === '' ? [] : [s.segmentKey];
}

function ruleOutline(r: Rule): OutlineRule {
  return { rank: r.rank, segments: keysOf(r), operator: r.segmentOperator === 'AND_SEGMENT_OPERATOR' ? 'AND' : 'OR' };
}

function rolloutOutline(r: Rollout): OutlineRollout {
  if (r.threshold !== undefined) return { rank: r.rank, value: r.threshold.value, percentage: r.threshold.percentage };
  if (r.segment !== undefined) {
    return {
      rank: r.rank,
      value: r.segment.value,
      segments: keysOf(r.segment),
      operator: r.segment.segmentOperator === 'AND_SEGMENT_OPERATOR' ? 'AND' : 'OR',
    };
  }
  // A rollout of neither kind never matches (the evaluator skips it); kept so the ranks stay true.
  return { rank: r.rank, value: false, segments: [], operator: 'OR' };
}

function build(ns: Namespace): NamespaceOutline {
  const flags: OutlineFlag[] = [];
  for (const f of ns.flags.values()) {
    flags.push({
      key: f.key,
      rules: [...f.rules].sort((a, b) => a.rank - b.rank).map(ruleOutline),
      rollouts: [...f.rollouts].sort((a, b) => a.rank - b.rank).map(rolloutOutline),
    });
  }
  const everyoneSegments: string[] = [];
  for (const s of ns.segments.values()) if (s.constraints.length === 0) everyoneSegments.push(s.key);
  return { namespaceKey: ns.key, flags, everyoneSegments };
}

/** The outline of namespace `key`, or 404 `namespace "<key>" not found`. */
export function namespaceOutline(snapshot: Snapshot, key: string): NamespaceOutline {
  let byNs = cache.get(snapshot);
  if (byNs === undefined) {
    byNs = new Map();
    cache.set(snapshot, byNs);
  }
  let outline = byNs.get(key);
  if (outline === undefined) {
    const ns = snapshot.namespaces.get(key);
    if (ns === undefined) throw notFound(`namespace "${key}" not found`);
    outline = build(ns);
    byNs.set(key, outline);
  }
  return outline;
}

/**
 * The flags whose rules or rollouts name segment `segmentKey` of namespace `key`, in flag key
 * order; 404 when the namespace or the segment does not exist. Work: one pass over the outline.
 */
export function segmentUses(snapshot: Snapshot, key: string, segmentKey: string): SegmentUse[] {
  const outline = namespaceOutline(snapshot, key);
  const ns = snapshot.namespaces.get(key)!;
  if (!ns.segments.has(segmentKey)) throw notFound(`segment "${key}/${segmentKey}" not found`);
  const uses: SegmentUse[] = [];
  for (const f of outline.flags) {
    const rules = f.rules.filter((r) => r.segments.includes(segmentKey)).map((r) => r.rank);
    const rollouts = f.rollouts.filter((r) => r.segments?.includes(segmentKey) === true).map((r) => r.rank);
    if (rules.length > 0 || rollouts.length > 0) uses.push({ key: f.key, name: ns.flags.get(f.key)!.name, rules, rollouts });
  }
  return uses;
}
