/**
 * The shape of a state document once it has passed the schema (schemas/features.schema.json):
 * field names as written in the files. Before validation a document is `unknown`; the semantic
 * checks read it defensively, the builder only reads documents that passed every check.
 */

export type DocVersion = '1.0' | '1.1' | '1.2' | '1.3' | '1.4';
export type SegmentOperatorName = 'OR_SEGMENT_OPERATOR' | 'AND_SEGMENT_OPERATOR';

export interface DocNamespaceObject {
  readonly key?: string;
  readonly name?: string;
  readonly description?: string;
}

export interface StateDocument {
  readonly version?: DocVersion;
  readonly namespace?: string | DocNamespaceObject;
  readonly flags?: readonly DocFlag[];
  readonly segments?: readonly DocSegment[];
}

export interface DocFlag {
  readonly key: string;
  readonly name: string;
  readonly description?: string;
  readonly enabled?: boolean;
  readonly type?: 'VARIANT_FLAG_TYPE' | 'BOOLEAN_FLAG_TYPE';
  readonly metadata?: Readonly<Record<string, string | number | boolean>>;
  readonly variants?: readonly DocVariant[];
  readonly rules?: readonly DocRule[];
  readonly rollouts?: readonly DocRollout[];
}

export interface DocVariant {
  readonly key: string;
  readonly name?: string;
  readonly description?: string;
  readonly attachment?: unknown;
  readonly default?: boolean;
}

export interface DocRuleSegmentObject {
  readonly keys: readonly string[];
  readonly operator?: SegmentOperatorName;
}

export interface DocRule {
  readonly segment: string | DocRuleSegmentObject;
  readonly rank?: number;
  readonly distributions?: readonly DocDistribution[];
}

export interface DocDistribution {
  readonly variant: string;
  readonly rollout: number;
}

export interface DocRollout {
  readonly description?: string;
  readonly segment?: {
    readonly key?: string;
    readonly keys?: readonly string[];
    readonly operator?: SegmentOperatorName;
    readonly value?: boolean;
  };
  readonly threshold?: { readonly percentage: number; readonly value?: boolean };
}

export interface DocSegment {
  readonly key: string;
  readonly name: string;
  readonly description?: string;
  readonly match_type: 'ALL_MATCH_TYPE' | 'ANY_MATCH_TYPE';
  readonly constraints?: readonly DocConstraint[];
}

export interface DocConstraint {
  readonly type:
    | 'STRING_COMPARISON_TYPE'
    | 'NUMBER_COMPARISON_TYPE'
    | 'BOOLEAN_COMPARISON_TYPE'
    | 'DATETIME_COMPARISON_TYPE'
    | 'ENTITY_ID_COMPARISON_TYPE';
  readonly property: string;
  readonly operator: string;
  readonly value?: string;
  readonly description?: string;
}

/** One document of one file, as the checks and the builder see it. */
export interface LoadedDocument {
  readonly file: string;
  /** Index in the file's stream. */
  readonly index: number;
  readonly data: unknown;
}

/** The namespace a document targets: `default` when absent (also for an object without key). */
export function namespaceKeyOf(data: unknown): string {
  const ns = (data as { namespace?: unknown } | null)?.namespace;
  if (typeof ns === 'string') return ns;
  if (ns && typeof ns === 'object' && typeof (ns as DocNamespaceObject).key === 'string') return (ns as DocNamespaceObject).key!;
  return 'default';
}
