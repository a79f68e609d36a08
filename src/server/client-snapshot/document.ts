/**
 * The client-side evaluation snapshot of one namespace: the JSON that Flipt's client SDKs download
 * (`GET /internal/v1/evaluation/snapshot/namespace/{key}`) and hand to their evaluation engine, the
 * Rust `flipt-evaluation` crate (flipt-auth-and-clients.md §4a). A pure function of the namespace.
 *
 * The engine parses it strictly (serde): every flag has `name`, every rule `distributions` and
 * `segmentOperator`, every segment `constraints`, so those are always written, empty arrays
 * included. Segments are inlined into each rule and rollout that names them; enums are written by
 * their names in the evaluation API's spelling (`ALL_SEGMENT_MATCH_TYPE`,
 * `STRING_CONSTRAINT_COMPARISON_TYPE`); rules and rollouts come in rank order (the engine ignores
 * `rank` and goes by position); `rollout`/`percentage` are printed as Flipt prints its float32s.
 *
 * Where Flipt v1.61.1 differs, on purpose:
 * - a rule naming N > 1 segments is written once, with its distributions once (Flipt appends the
 *   rule and its distributions N times: a loop nesting defect);
 * - a segment named twice by one rule or rollout is inlined once (Flipt keeps them in a map);
 * - segments carry their declared name and description (Flipt writes "" for both);
 * - nothing depends on `X-Flipt-Accept-Server-Version`: the full document is always served.
 * Distribution `id`/`ruleId` are "" as in Flipt's: the engine does not read them.
 */
import type { Constraint, Flag, Namespace, Rollout, Rule, Segment } from '../../model/snapshot.js';
import type { SegmentOperator } from '../../model/enums.js';
import { float32Number } from './float32.js';

export type SnapshotMatchType = 'ALL_SEGMENT_MATCH_TYPE' | 'ANY_SEGMENT_MATCH_TYPE';
export type SnapshotComparisonType =
  | 'STRING_CONSTRAINT_COMPARISON_TYPE'
  | 'NUMBER_CONSTRAINT_COMPARISON_TYPE'
  | 'BOOLEAN_CONSTRAINT_COMPARISON_TYPE'
  | 'DATETIME_CONSTRAINT_COMPARISON_TYPE'
  | 'ENTITY_ID_CONSTRAINT_COMPARISON_TYPE';

export interface SnapshotConstraint {
  id: string;
  type: string;
  property: string;
  operator: string;
  value: string;
}
export interface SnapshotSegment {
  key: string;
  name: string;
  description: string;
  matchType: SnapshotMatchType;
  constraints: SnapshotConstraint[];
}
export interface SnapshotDistribution {
  id: string;
  ruleId: string;
  variantId: string;
  variantKey: string;
  variantAttachment: string;
  rollout: number;
}
export interface SnapshotRule {
  id: string;
  segments: SnapshotSegment[];
  rank: number;
  segmentOperator: SegmentOperator;
  distributions: SnapshotDistribution[];
}
export type SnapshotRollout =
  | { type: 'UNKNOWN_ROLLOUT_TYPE'; rank: number }
  | { type: 'THRESHOLD_ROLLOUT_TYPE'; rank: number; threshold: { percentage: number; value: boolean } }
  | { type: 'SEGMENT_ROLLOUT_TYPE'; rank: number; segment: { value: boolean; segmentOperator: SegmentOperator; segments: SnapshotSegment[] } };
export interface SnapshotFlag {
  key: string;
  name: string;
  description: string;
  enabled: boolean;
  type: 'VARIANT_FLAG_TYPE' | 'BOOLEAN_FLAG_TYPE';
  /** Left out of the content the ETag is computed from (see documentText). */
  createdAt?: string;
  updatedAt?: string;
  /** Variant flags only; `[]` on boolean flags. */
  rules: SnapshotRule[];
  /** Boolean flags only; `[]` on variant flags. */
  rollouts: SnapshotRollout[];
  /** Variant flags with a default variant only. */
  defaultVariant?: { id: string; key: string; attachment: string };
}
export interface SnapshotDocument {
  namespace: { key: string };
  flags: SnapshotFlag[];
}

const MATCH_TYPE: Readonly<Record<Segment['matchType'], SnapshotMatchType>> = {
  ALL_MATCH_TYPE: 'ALL_SEGMENT_MATCH_TYPE',
  ANY_MATCH_TYPE: 'ANY_SEGMENT_MATCH_TYPE',
};

const COMPARISON_TYPE: Readonly<Record<Constraint['type'], SnapshotComparisonType>> = {
  STRING_COMPARISON_TYPE: 'STRING_CONSTRAINT_COMPARISON_TYPE',
  NUMBER_COMPARISON_TYPE: 'NUMBER_CONSTRAINT_COMPARISON_TYPE',
  BOOLEAN_COMPARISON_TYPE: 'BOOLEAN_CONSTRAINT_COMPARISON_TYPE',
  DATETIME_COMPARISON_TYPE: 'DATETIME_CONSTRAINT_COMPARISON_TYPE',
  ENTITY_ID_COMPARISON_TYPE: 'ENTITY_ID_CONSTRAINT_COMPARISON_TYPE',
};

/**
 * The document of `ns`. `at` is every flag's createdAt/updatedAt (the snapshot's build time, as
 * the management API serves them); without it they are left out: that is the content the ETag
 * is derived from, which must not change when only the build time does.
 */
export function snapshotDocument(ns: Namespace, at?: string): SnapshotDocument {
  // One object per segment, shared by every rule and rollout that inlines it.
  const segments = new Map<string, SnapshotSegment>();
  const segment = (key: string): SnapshotSegment | undefined => {
    let s = segments.get(key);
    if (s === undefined) {
      const declared = ns.segments.get(key);
      if (declared === undefined) return undefined;
      s = segmentJson(declared);
      segments.set(key, s);
    }
    return s;
  };
  const inline = (one: string, keys: readonly string[]): SnapshotSegment[] => {
    const out: SnapshotSegment[] = [];
    for (const key of one !== '' ? [one] : new Set(keys)) {
      const s = segment(key);
      // Validation refuses unknown segment keys; a miss here would only drop a key the engine could not match.
      if (s !== undefined) out.push(s);
    }
    return out;
  };

  const flags: SnapshotFlag[] = [];
  for (const flag of ns.flags.values()) flags.push(flagJson(flag, at, inline));
  return { namespace: { key: ns.key }, flags };
}

/** The document as JSON text (compact). */
export function snapshotDocumentText(ns: Namespace, at?: string): string {
  return JSON.stringify(snapshotDocument(ns, at));
}

type Inline = (one: string, keys: readonly string[]) => SnapshotSegment[];

function flagJson(flag: Flag, at: string | undefined, inline: Inline): SnapshotFlag {
  const variant = flag.type === 'VARIANT_FLAG_TYPE';
  const { key, name, description, enabled, type } = flag;
  const rules = variant ? flag.rules.map((r) => ruleJson(r, flag, inline)) : [];
  const rollouts = variant ? [] : flag.rollouts.map((r) => rolloutJson(r, inline));
  // Field order as Flipt writes them.
  const out: SnapshotFlag =
    at === undefined
      ? { key, name, description, enabled, type, rules, rollouts }
      : { key, name, description, enabled, type, createdAt: at, updatedAt: at, rules, rollouts };
  const dv = flag.defaultVariant;
  if (variant && dv !== undefined) out.defaultVariant = { id: dv.id, key: dv.key, attachment: dv.attachment };
  return out;
}

function ruleJson(r: Rule, flag: Flag, inline: Inline): SnapshotRule {
  return {
    id: r.id,
    segments: inline(r.segmentKey, r.segmentKeys),
    rank: r.rank,
    segmentOperator: r.segmentOperator,
    distributions: r.distributions.map((d) => ({
      id: '',
      ruleId: '',
      variantId: d.variantId,
      variantKey: d.variantKey,
      variantAttachment: attachmentOf(flag, d.variantKey),
      rollout: float32Number(d.rollout),
    })),
  };
}

function attachmentOf(flag: Flag, variantKey: string): string {
  for (const v of flag.variants) if (v.key === variantKey) return v.attachment;
  return '';
}

function rolloutJson(r: Rollout, inline: Inline): SnapshotRollout {
  if (r.segment !== undefined) {
    return {
      type: 'SEGMENT_ROLLOUT_TYPE',
      rank: r.rank,
      segment: { value: r.segment.value, segmentOperator: r.segment.segmentOperator, segments: inline(r.segment.segmentKey, r.segment.segmentKeys) },
    };
  }
  if (r.threshold !== undefined) {
    return { type: 'THRESHOLD_ROLLOUT_TYPE', rank: r.rank, threshold: { percentage: float32Number(r.threshold.percentage), value: r.threshold.value } };
  }
  // `- {}` in a rollouts list: served as Flipt serves it, and skipped by every engine.
  return { type: 'UNKNOWN_ROLLOUT_TYPE', rank: r.rank };
}

function segmentJson(s: Segment): SnapshotSegment {
  return {
    key: s.key,
    name: s.name,
    description: s.description,
    matchType: MATCH_TYPE[s.matchType],
    constraints: s.constraints.map((c) => ({ id: c.id, type: COMPARISON_TYPE[c.type], property: c.property, operator: c.operator, value: c.value })),
  };
}
