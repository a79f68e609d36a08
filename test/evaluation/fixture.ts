/**
 * Builds minimal Snapshot / FlagDefinition / Segment objects by hand (plain data per
 * src/model/snapshot.ts) and compiles flags with compileFlag, so evaluation tests do not depend on the
 * loader. Ids are derived from positions, like the real build.
 */
import { compileFlag } from '../../src/evaluation/compile.js';
import type { EvaluationRequest } from '../../src/model/evaluation-request.js';
import type { ComparisonType, MatchType, SegmentOperator } from '../../src/model/enums.js';
import type {
  Constraint,
  Distribution,
  Flag,
  FlagDefinition,
  Namespace,
  Rollout,
  Rule,
  Segment,
  Snapshot,
  Variant,
} from '../../src/model/snapshot.js';

export type ConstraintSpec = [type: ComparisonType | string, property: string, operator: string, value?: string];

export function segment(key: string, matchType: MatchType, constraints: ConstraintSpec[] = [], ns = 'default'): Segment {
  return {
    namespaceKey: ns,
    key,
    name: key,
    description: '',
    matchType,
    constraints: constraints.map(
      ([type, property, operator, value = ''], i): Constraint => ({
        id: `${ns}/${key}/c${i}`,
        namespaceKey: ns,
        segmentKey: key,
        type: type as ComparisonType,
        property,
        operator,
        value,
        description: '',
      }),
    ),
  };
}

/** `segment` as a string = the string form; `{keys, op}` = the object form. */
export type SegmentRef = string | { keys: string[]; op?: SegmentOperator };

export interface RuleSpec {
  segment: SegmentRef;
  distributions?: Array<[variantKey: string, rollout: number]>;
}

export interface VariantFlagSpec {
  key: string;
  enabled?: boolean;
  variants?: Array<string | [key: string, attachment: string]>;
  defaultVariant?: string;
  rules?: RuleSpec[];
}

export function variantFlag(spec: VariantFlagSpec, ns = 'default'): FlagDefinition {
  const variants: Variant[] = (spec.variants ?? []).map((v, i) => {
    const [key, attachment] = typeof v === 'string' ? [v, 'null'] : v;
    return { id: `${ns}/${spec.key}/v${i}`, namespaceKey: ns, key, name: '', description: '', attachment, default: key === spec.defaultVariant };
  });
  const rules: Rule[] = (spec.rules ?? []).map((r, i) => {
    const id = `${ns}/${spec.key}/r${i + 1}`;
    const distributions: Distribution[] = (r.distributions ?? []).map(([variantKey, rollout], j) => ({
      id: `${id}/d${j}`,
      ruleId: id,
      variantId: variants.find((v) => v.key === variantKey)?.id ?? '',
      variantKey,
      rollout,
    }));
    return {
      id,
      namespaceKey: ns,
      flagKey: spec.key,
      segmentKey: typeof r.segment === 'string' ? r.segment : '',
      segmentKeys: typeof r.segment === 'string' ? [] : r.segment.keys,
      segmentOperator: typeof r.segment !== 'string' && r.segment.op ? r.segment.op : 'OR_SEGMENT_OPERATOR',
      distributions,
      rank: i + 1,
    };
  });
  return {
    namespaceKey: ns,
    key: spec.key,
    name: spec.key,
    description: '',
    enabled: spec.enabled ?? true,
    type: 'VARIANT_FLAG_TYPE',
    variants,
    ...(spec.defaultVariant !== undefined ? { defaultVariant: variants.find((v) => v.key === spec.defaultVariant)! } : {}),
    rules,
    rollouts: [],
  };
}

export type RolloutSpec =
  | { threshold: number; value?: boolean }
  | { segment: SegmentRef; value?: boolean }
  | Record<string, never>;

export interface BooleanFlagSpec {
  key: string;
  enabled?: boolean;
  rollouts?: RolloutSpec[];
}

export function booleanFlag(spec: BooleanFlagSpec, ns = 'default'): FlagDefinition {
  const rollouts: Rollout[] = (spec.rollouts ?? []).map((r, i): Rollout => {
    const base = { id: `${ns}/${spec.key}/ro${i + 1}`, namespaceKey: ns, flagKey: spec.key, rank: i + 1, description: '' };
    if ('threshold' in r) {
      return { ...base, type: 'THRESHOLD_ROLLOUT_TYPE', threshold: { percentage: r.threshold, value: r.value ?? false } };
    }
    if ('segment' in r) {
      const ref = r.segment;
      const keys = typeof ref === 'string' ? [ref] : ref.keys;
      return {
        ...base,
        type: 'SEGMENT_ROLLOUT_TYPE',
        segment: {
          segmentKey: keys.length === 1 ? keys[0] : '',
          segmentKeys: keys.length === 1 ? [] : keys,
          segmentOperator: typeof ref !== 'string' && ref.op ? ref.op : 'OR_SEGMENT_OPERATOR',
          value: r.value ?? false,
        },
      };
    }
    return { ...base, type: 'UNKNOWN_ROLLOUT_TYPE' };
  });
  return {
    namespaceKey: ns,
    key: spec.key,
    name: spec.key,
    description: '',
    enabled: spec.enabled ?? false,
    type: 'BOOLEAN_FLAG_TYPE',
    variants: [],
    rules: [],
    rollouts,
  };
}

export interface NamespaceSpec {
  flags?: FlagDefinition[];
  segments?: Segment[];
}

/** A snapshot holding the given namespaces (plus an empty `default` when not given). */
export function snapshot(namespaces: Record<string, NamespaceSpec>): Snapshot {
  const all: Record<string, NamespaceSpec> = { default: {}, ...namespaces };
  const map = new Map<string, Namespace>();
  for (const key of Object.keys(all).sort()) {
    const spec = all[key];
    const segments = new Map((spec.segments ?? []).map((s) => [s.key, s] as const));
    const flags = new Map<string, Flag>(
      (spec.flags ?? []).map((f) => [f.key, { ...f, compiled: compileFlag(f, segments) }] as const),
    );
    map.set(key, { key, name: key, description: '', flags, segments, rulesById: new Map(), rolloutsById: new Map() });
  }
  return { reference: 'test', revision: 'test', builtAt: '2026-01-01T00:00:00Z', namespaces: map, warnings: [] };
}

export function req(flagKey: string, entityId: string, context: Record<string, string> = {}, namespaceKey = ''): EvaluationRequest {
  return { namespaceKey, flagKey, entityId, context };
}
