/**
 * The management read shapes (flipt-semantics §3.4): camelCase, zero values and empty arrays
 * always emitted, `defaultVariant`/`metadata` only when set, enums by name, every timestamp the
 * snapshot's build time. Shapes are derived once per snapshot and cached (a snapshot never
 * changes), so repeated reads only pay for JSON.stringify.
 */
import { notFound } from '../../errors.js';
import type { Constraint, Distribution, Flag, Namespace, Rollout, Rule, Segment, Snapshot, Variant } from '../../model/snapshot.js';

export interface NamespaceJson {
  key: string;
  name: string;
  description: string;
  protected: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface VariantJson {
  id: string;
  flagKey: string;
  key: string;
  name: string;
  description: string;
  createdAt: string;
  updatedAt: string;
  attachment: string;
  namespaceKey: string;
}

export interface FlagJson {
  key: string;
  name: string;
  description: string;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  variants: VariantJson[];
  namespaceKey: string;
  type: string;
  defaultVariant?: VariantJson;
  metadata?: Record<string, string | number | boolean>;
}

export interface ConstraintJson {
  id: string;
  segmentKey: string;
  type: string;
  property: string;
  operator: string;
  value: string;
  createdAt: string;
  updatedAt: string;
  namespaceKey: string;
  description: string;
}

export interface SegmentJson {
  key: string;
  name: string;
  description: string;
  createdAt: string;
  updatedAt: string;
  constraints: ConstraintJson[];
  matchType: string;
  namespaceKey: string;
}

export interface DistributionJson {
  id: string;
  ruleId: string;
  variantId: string;
  rollout: number;
  createdAt: string;
  updatedAt: string;
}

export interface RuleJson {
  id: string;
  flagKey: string;
  segmentKey: string;
  distributions: DistributionJson[];
  rank: number;
  createdAt: string;
  updatedAt: string;
  namespaceKey: string;
  segmentKeys: string[];
  segmentOperator: string;
}

export interface RolloutJson {
  id: string;
  namespaceKey: string;
  flagKey: string;
  type: string;
  rank: number;
  description: string;
  createdAt: string;
  updatedAt: string;
  segment?: { segmentKey: string; value: boolean; segmentKeys: string[]; segmentOperator: string };
  threshold?: { percentage: number; value: boolean };
}

export function namespaceJson(ns: Namespace, at: string): NamespaceJson {
  return { key: ns.key, name: ns.name, description: ns.description, protected: false, createdAt: at, updatedAt: at };
}

export function variantJson(v: Variant, at: string): VariantJson {
  return {
    id: v.id,
    // Flipt's declarative loader never fills a variant's flagKey (§1.8).
    flagKey: '',
    key: v.key,
    name: v.name,
    description: v.description,
    createdAt: at,
    updatedAt: at,
    attachment: v.attachment,
    namespaceKey: v.namespaceKey,
  };
}

export function flagJson(flag: Flag, at: string): FlagJson {
  const variants = flag.variants.map((v) => variantJson(v, at));
  const out: FlagJson = {
    key: flag.key,
    name: flag.name,
    description: flag.description,
    enabled: flag.enabled,
    createdAt: at,
    updatedAt: at,
    variants,
    namespaceKey: flag.namespaceKey,
    type: flag.type,
  };
  if (flag.defaultVariant) {
    const i = flag.variants.indexOf(flag.defaultVariant);
    out.defaultVariant = i >= 0 ? variants[i]! : variantJson(flag.defaultVariant, at);
  }
  if (flag.metadata) out.metadata = { ...flag.metadata };
  return out;
}

export function constraintJson(c: Constraint, at: string): ConstraintJson {
  return {
    id: c.id,
    segmentKey: c.segmentKey,
    type: c.type,
    property: c.property,
    operator: c.operator,
    value: c.value,
    createdAt: at,
    updatedAt: at,
    namespaceKey: c.namespaceKey,
    description: c.description,
  };
}

export function segmentJson(s: Segment, at: string): SegmentJson {
  return {
    key: s.key,
    name: s.name,
    description: s.description,
    createdAt: at,
    updatedAt: at,
    constraints: s.constraints.map((c) => constraintJson(c, at)),
    matchType: s.matchType,
    namespaceKey: s.namespaceKey,
  };
}

function distributionJson(d: Distribution, at: string): DistributionJson {
  return { id: d.id, ruleId: d.ruleId, variantId: d.variantId, rollout: d.rollout, createdAt: at, updatedAt: at };
}

export function ruleJson(r: Rule, at: string): RuleJson {
  return {
    id: r.id,
    flagKey: r.flagKey,
    segmentKey: r.segmentKey,
    distributions: r.distributions.map((d) => distributionJson(d, at)),
    rank: r.rank,
    createdAt: at,
    updatedAt: at,
    namespaceKey: r.namespaceKey,
    segmentKeys: [...r.segmentKeys],
    segmentOperator: r.segmentOperator,
  };
}

export function rolloutJson(r: Rollout, at: string): RolloutJson {
  const out: RolloutJson = {
    id: r.id,
    namespaceKey: r.namespaceKey,
    flagKey: r.flagKey,
    type: r.type,
    rank: r.rank,
    description: r.description,
    createdAt: at,
    updatedAt: at,
  };
  if (r.segment) {
    out.segment = {
      segmentKey: r.segment.segmentKey,
      value: r.segment.value,
      segmentKeys: [...r.segment.segmentKeys],
      segmentOperator: r.segment.segmentOperator,
    };
  }
  if (r.threshold) out.threshold = { percentage: r.threshold.percentage, value: r.threshold.value };
  return out;
}

/** Per-namespace derived views, built lazily per collection on first use. */
export interface NamespaceView {
  readonly namespace: NamespaceJson;
  flags(): readonly FlagJson[];
  flag(key: string): FlagJson | undefined;
  segments(): readonly SegmentJson[];
  segment(key: string): SegmentJson | undefined;
  /** Rules of a flag in rank order; empty when the flag does not exist. */
  rules(flagKey: string): readonly RuleJson[];
  rule(id: string): RuleJson | undefined;
  rollouts(flagKey: string): readonly RolloutJson[];
  rollout(id: string): RolloutJson | undefined;
}

interface SnapshotView {
  namespaces: readonly NamespaceJson[];
  byKey: Map<string, NamespaceView>;
}

const snapshotViews = new WeakMap<Snapshot, SnapshotView>();

function lazy<T>(build: () => T): () => T {
  let value: T | undefined;
  let built = false;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}

/** Byte order of keys (keys are ASCII, so UTF-16 order is byte order); the model promises it, this keeps it. */
function byKey<T extends { key: string }>(items: T[]): T[] {
  return items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function indexBy<T>(items: readonly T[], keyOf: (t: T) => string): Map<string, T> {
  const m = new Map<string, T>();
  for (const it of items) m.set(keyOf(it), it);
  return m;
}

function buildNamespaceView(ns: Namespace, at: string): NamespaceView {
  const flags = lazy(() => byKey([...ns.flags.values()].map((f) => flagJson(f, at))));
  const flagByKey = lazy(() => indexBy(flags(), (f) => f.key));
  const segments = lazy(() => byKey([...ns.segments.values()].map((s) => segmentJson(s, at))));
  const segmentByKey = lazy(() => indexBy(segments(), (s) => s.key));
  const rulesByFlag = lazy(() => {
    const m = new Map<string, RuleJson[]>();
    for (const f of ns.flags.values()) m.set(f.key, f.rules.map((r) => ruleJson(r, at)));
    return m;
  });
  const ruleById = lazy(() => {
    const m = new Map<string, RuleJson>();
    for (const list of rulesByFlag().values()) for (const r of list) m.set(r.id, r);
    // Rules kept only in the namespace index (e.g. of a replaced duplicate) are still addressable.
    for (const [id, r] of ns.rulesById) if (!m.has(id)) m.set(id, ruleJson(r, at));
    return m;
  });
  const rolloutsByFlag = lazy(() => {
    const m = new Map<string, RolloutJson[]>();
    for (const f of ns.flags.values()) m.set(f.key, f.rollouts.map((r) => rolloutJson(r, at)));
    return m;
  });
  const rolloutById = lazy(() => {
    const m = new Map<string, RolloutJson>();
    for (const list of rolloutsByFlag().values()) for (const r of list) m.set(r.id, r);
    for (const [id, r] of ns.rolloutsById) if (!m.has(id)) m.set(id, rolloutJson(r, at));
    return m;
  });
  return {
    namespace: namespaceJson(ns, at),
    flags,
    flag: (key) => flagByKey().get(key),
    segments,
    segment: (key) => segmentByKey().get(key),
    rules: (flagKey) => rulesByFlag().get(flagKey) ?? [],
    rule: (id) => ruleById().get(id),
    rollouts: (flagKey) => rolloutsByFlag().get(flagKey) ?? [],
    rollout: (id) => rolloutById().get(id),
  };
}

function snapshotView(snapshot: Snapshot): SnapshotView {
  let view = snapshotViews.get(snapshot);
  if (!view) {
    const nsViews = new Map<string, NamespaceView>();
    for (const ns of snapshot.namespaces.values()) nsViews.set(ns.key, buildNamespaceView(ns, snapshot.builtAt));
    view = { namespaces: byKey([...nsViews.values()].map((v) => v.namespace)), byKey: nsViews };
    snapshotViews.set(snapshot, view);
  }
  return view;
}

/** Namespaces of the snapshot in ascending key order. */
export function namespacesOf(snapshot: Snapshot): readonly NamespaceJson[] {
  return snapshotView(snapshot).namespaces;
}

export function namespaceView(snapshot: Snapshot, key: string): NamespaceView | undefined {
  return snapshotView(snapshot).byKey.get(key);
}

/** The namespace view of `key`, or 404 `namespace "<key>" not found`. */
export function namespaceOr404(snapshot: Snapshot, key: string): NamespaceView {
  const view = namespaceView(snapshot, key);
  if (!view) throw notFound(`namespace "${key}" not found`);
  return view;
}
