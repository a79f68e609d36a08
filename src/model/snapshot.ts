/**
 * The immutable snapshot: what one revision of one reference of flag state holds.
 * Built once by `state/build.ts` (deeply frozen, see freeze.ts), then only read: by the HTTP read
 * API, by evaluation, by the CLI. Everything evaluation needs is precomputed at build time in
 * `Flag.compiled` (shapes in compiled.ts, made by `evaluation/compile.ts`).
 * Types only: part of the ground floor every layer may import, so it imports nothing above `model/`.
 */
import type { CompiledFlag } from './compiled.js';
import type { FlagType, MatchType, ComparisonType, RolloutType, SegmentOperator } from './enums.js';
import type { Problem } from './problem.js';

export interface Snapshot {
  /** The reference this snapshot serves (`main`, a tag, `local` for the local backend...). */
  readonly reference: string;
  /** The revision it was built from: commit id, manifest digest, content hash of the files. */
  readonly revision: string;
  /** RFC 3339 build time; every resource's createdAt/updatedAt. */
  readonly builtAt: string;
  /** Namespaces by key, iterated in ascending key (byte) order; always holds `default`. */
  readonly namespaces: ReadonlyMap<string, Namespace>;
  /** Warnings found while loading (errors never produce a snapshot). */
  readonly warnings: readonly Problem[];
}

export interface Namespace {
  readonly key: string;
  readonly name: string;
  readonly description: string;
  /** Flags by key, iterated in ascending key (byte) order. */
  readonly flags: ReadonlyMap<string, Flag>;
  /** Segments by key, iterated in ascending key (byte) order. */
  readonly segments: ReadonlyMap<string, Segment>;
  /** Every rule of every flag of the namespace, by id (Flipt looks rule ids up namespace-wide). */
  readonly rulesById: ReadonlyMap<string, Rule>;
  /** Every rollout of every flag of the namespace, by id. */
  readonly rolloutsById: ReadonlyMap<string, Rollout>;
}

export interface Variant {
  readonly id: string;
  readonly namespaceKey: string;
  readonly key: string;
  readonly name: string;
  readonly description: string;
  /** Compact JSON with object keys sorted (Go encoder style, `<>&` escaped); `"null"` when absent. */
  readonly attachment: string;
  readonly default: boolean;
}

/** The flag as declared, before evaluation data is compiled. */
export interface FlagDefinition {
  readonly namespaceKey: string;
  readonly key: string;
  readonly name: string;
  readonly description: string;
  readonly enabled: boolean;
  readonly type: FlagType;
  /** Present only when the document declares metadata. */
  readonly metadata?: Readonly<Record<string, string | number | boolean>>;
  readonly variants: readonly Variant[];
  readonly defaultVariant?: Variant;
  /** Rules in rank order (rank = 1-based position); empty for boolean flags' evaluation. */
  readonly rules: readonly Rule[];
  /** Rollouts in rank order; boolean flags only. */
  readonly rollouts: readonly Rollout[];
}

export interface Flag extends FlagDefinition {
  /** Everything evaluation needs, precomputed at build. */
  readonly compiled: CompiledFlag;
}

export interface Segment {
  readonly namespaceKey: string;
  readonly key: string;
  readonly name: string;
  readonly description: string;
  readonly matchType: MatchType;
  readonly constraints: readonly Constraint[];
}

export interface Constraint {
  readonly id: string;
  readonly namespaceKey: string;
  readonly segmentKey: string;
  readonly type: ComparisonType;
  readonly property: string;
  readonly operator: string;
  readonly value: string;
  readonly description: string;
}

export interface Rule {
  readonly id: string;
  readonly namespaceKey: string;
  readonly flagKey: string;
  /** Set (and `segmentKeys` empty) when the document used the string form `segment: key`. */
  readonly segmentKey: string;
  /** Set (and `segmentKey` empty) when the document used the object form `segment: {keys, operator}`. */
  readonly segmentKeys: readonly string[];
  readonly segmentOperator: SegmentOperator;
  readonly distributions: readonly Distribution[];
  readonly rank: number;
}

export interface Distribution {
  readonly id: string;
  readonly ruleId: string;
  readonly variantId: string;
  /** The variant's key (what the document names); not part of the API shape. */
  readonly variantKey: string;
  readonly rollout: number;
}

export interface Rollout {
  readonly id: string;
  readonly namespaceKey: string;
  readonly flagKey: string;
  readonly type: RolloutType;
  readonly rank: number;
  readonly description: string;
  readonly segment?: {
    /** One key (from `key` or a one-element `keys`) → here, `segmentKeys` empty. */
    readonly segmentKey: string;
    /** Two or more keys → here, `segmentKey` empty. */
    readonly segmentKeys: readonly string[];
    readonly segmentOperator: SegmentOperator;
    readonly value: boolean;
  };
  readonly threshold?: { readonly percentage: number; readonly value: boolean };
}
