/**
 * Request validation for management writes (POST/PUT/DELETE under `/api/v1`). Declarative state
 * is read-only, so every write that passes validation is then refused with code 9; validation
 * still runs first, as in Flipt, so a client learns about a bad request before a read-only store.
 *
 * Messages follow Flipt's `invalid field <name>: <problem>` form.
 *
 * A field left out is its protobuf default, as for evaluation requests (protojson-speaking clients
 * leave out `""`, `0`, `false` and empty lists), and JSON `null` is read as left out: absent and
 * `""` (or `[]`) give the same answer, and so do absent and `0`.
 */
import { field, invalidField, isPlainObject } from '../../http/fields.js';

type Kind = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'stringArray';

export interface FieldRule {
  readonly name: string;
  readonly kind: Kind;
  /**
   * Strings and string arrays: absent, `""` or `[]` is refused with `must not be empty`. (An
   * absent number is 0 and goes through the number checks: `positive`, `range`.)
   */
  readonly required?: boolean;
  /** Enum names, in protobuf order (a number is taken as the index, as jsonpb does). */
  readonly oneOf?: readonly string[];
  /** Inclusive range for numbers. */
  readonly range?: readonly [number, number];
  /** Integers that must be > 0 (ranks). */
  readonly positive?: boolean;
  /** String that must hold valid JSON (variant attachments). */
  readonly json?: boolean;
}

export interface WriteSpec {
  readonly fields: readonly FieldRule[];
  /** Cross-field checks after the per-field ones. */
  readonly check?: (body: Readonly<Record<string, unknown>>) => void;
}

const FLAG_TYPES = ['VARIANT_FLAG_TYPE', 'BOOLEAN_FLAG_TYPE'] as const;
const MATCH_TYPES = ['ALL_MATCH_TYPE', 'ANY_MATCH_TYPE'] as const;
const SEGMENT_OPERATORS = ['OR_SEGMENT_OPERATOR', 'AND_SEGMENT_OPERATOR'] as const;
const COMPARISON_TYPES = [
  'UNKNOWN_COMPARISON_TYPE',
  'STRING_COMPARISON_TYPE',
  'NUMBER_COMPARISON_TYPE',
  'BOOLEAN_COMPARISON_TYPE',
  'DATETIME_COMPARISON_TYPE',
  'ENTITY_ID_COMPARISON_TYPE',
] as const;

const STRING_OPS = ['eq', 'neq', 'empty', 'notempty', 'prefix', 'suffix', 'isoneof', 'isnotoneof', 'contains', 'notcontains'];
const ORDERED_OPS = ['eq', 'neq', 'present', 'notpresent', 'lt', 'lte', 'gt', 'gte'];
const OPERATORS_BY_TYPE: Readonly<Record<string, readonly string[]>> = {
  STRING_COMPARISON_TYPE: STRING_OPS,
  ENTITY_ID_COMPARISON_TYPE: STRING_OPS,
  NUMBER_COMPARISON_TYPE: [...ORDERED_OPS, 'isoneof', 'isnotoneof'],
  BOOLEAN_COMPARISON_TYPE: ['true', 'false', 'present', 'notpresent'],
  DATETIME_COMPARISON_TYPE: ORDERED_OPS,
};
/** Operators that compare nothing against the constraint's value. */
const VALUELESS_OPS = new Set(['empty', 'notempty', 'present', 'notpresent', 'true', 'false']);

function enumName(value: unknown, names: readonly string[]): string | undefined {
  if (typeof value === 'string') return names.includes(value) ? value : undefined;
  if (typeof value === 'number' && Number.isInteger(value)) return names[value];
  return undefined;
}

function isEmpty(v: unknown, kind: Kind): boolean {
  return v === undefined || (kind === 'string' && v === '') || (kind === 'stringArray' && Array.isArray(v) && v.length === 0);
}

function checkField(body: Readonly<Record<string, unknown>>, rule: FieldRule): void {
  let v = field(body, rule.name);
  const { name } = rule;
  if (v === undefined && (rule.kind === 'number' || rule.kind === 'integer')) v = 0;
  if (isEmpty(v, rule.kind)) {
    if (rule.required) throw invalidField(name, 'must not be empty');
    return;
  }
  if (rule.oneOf) {
    if (enumName(v, rule.oneOf) === undefined) throw invalidField(name, `must be one of ${rule.oneOf.join(', ')}`);
    return;
  }
  switch (rule.kind) {
    case 'string':
      if (typeof v !== 'string') throw invalidField(name, 'must be a string');
      if (rule.json) {
        try {
          JSON.parse(v);
        } catch {
          throw invalidField(name, 'must be a json string');
        }
      }
      return;
    case 'boolean':
      if (typeof v !== 'boolean') throw invalidField(name, 'must be a boolean');
      return;
    case 'object':
      if (!isPlainObject(v)) throw invalidField(name, 'must be an object');
      return;
    case 'stringArray':
      if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw invalidField(name, 'must be an array of strings');
      return;
    case 'integer':
    case 'number': {
      if (typeof v !== 'number' || !Number.isFinite(v)) throw invalidField(name, 'must be a number');
      if (rule.kind === 'integer' && !Number.isInteger(v)) throw invalidField(name, 'must be an integer');
      if (rule.positive && v <= 0) throw invalidField(name, 'must be greater than 0');
      if (rule.range && (v < rule.range[0] || v > rule.range[1])) {
        throw invalidField(name, `must be within range [${rule.range[0]}, ${rule.range[1]}]`);
      }
      return;
    }
  }
}

export function validateWrite(body: Readonly<Record<string, unknown>>, spec: WriteSpec): void {
  for (const rule of spec.fields) checkField(body, rule);
  spec.check?.(body);
}

function checkConstraint(body: Readonly<Record<string, unknown>>): void {
  const type = enumName(field(body, 'type'), COMPARISON_TYPES);
  if (type === undefined || type === 'UNKNOWN_COMPARISON_TYPE') throw invalidField('type', 'must not be empty');
  const operator = String(field(body, 'operator'));
  if (!OPERATORS_BY_TYPE[type]!.includes(operator)) {
    throw invalidField('operator', `"${operator}" is not valid for type ${type}`);
  }
  const value = field(body, 'value');
  if (!VALUELESS_OPS.has(operator) && (value === undefined || value === '')) throw invalidField('value', 'must not be empty');
}

function checkRuleSegments(body: Readonly<Record<string, unknown>>): void {
  const key = field(body, 'segmentKey');
  const keys = field(body, 'segmentKeys');
  const hasKey = typeof key === 'string' && key !== '';
  const hasKeys = Array.isArray(keys) && keys.length > 0;
  if (!hasKey && !hasKeys) throw invalidField('segmentKey', 'must not be empty');
  if (hasKey && hasKeys) throw invalidField('segmentKey', 'only one of segmentKey or segmentKeys can be set');
}

function checkRollout(body: Readonly<Record<string, unknown>>): void {
  const segment = field(body, 'segment');
  const threshold = field(body, 'threshold');
  if (segment !== undefined && threshold !== undefined) throw invalidField('rule', 'only one of segment or threshold can be set');
  if (isPlainObject(threshold)) {
    validateWrite(threshold, {
      fields: [
        { name: 'percentage', kind: 'number', range: [0, 100] },
        { name: 'value', kind: 'boolean' },
      ],
    });
  }
  if (isPlainObject(segment)) {
    validateWrite(segment, {
      fields: [
        { name: 'segmentKey', kind: 'string' },
        { name: 'segmentKeys', kind: 'stringArray' },
        { name: 'segmentOperator', kind: 'string', oneOf: SEGMENT_OPERATORS },
        { name: 'value', kind: 'boolean' },
      ],
      check: checkRuleSegments,
    });
  }
}

const key = (required = true): FieldRule => ({ name: 'key', kind: 'string', required });
const name = (required = true): FieldRule => ({ name: 'name', kind: 'string', required });
const description: FieldRule = { name: 'description', kind: 'string' };

/** Request specs by resource and operation. Path parameters are never empty (the router matched them). */
export const WRITE_SPECS = {
  createNamespace: { fields: [key(), name(), description] },
  updateNamespace: { fields: [name(), description] },
  createFlag: {
    fields: [key(), name(), description, { name: 'enabled', kind: 'boolean' }, { name: 'type', kind: 'string', oneOf: FLAG_TYPES }, { name: 'metadata', kind: 'object' }],
  },
  updateFlag: {
    fields: [name(), description, { name: 'enabled', kind: 'boolean' }, { name: 'defaultVariantId', kind: 'string' }, { name: 'metadata', kind: 'object' }],
  },
  createVariant: { fields: [key(), name(false), description, { name: 'attachment', kind: 'string', json: true }] },
  updateVariant: { fields: [key(), name(false), description, { name: 'attachment', kind: 'string', json: true }] },
  createSegment: { fields: [key(), name(), description, { name: 'matchType', kind: 'string', oneOf: MATCH_TYPES }] },
  updateSegment: { fields: [name(), description, { name: 'matchType', kind: 'string', oneOf: MATCH_TYPES }] },
  createConstraint: {
    fields: [
      { name: 'type', kind: 'string', required: true, oneOf: COMPARISON_TYPES },
      { name: 'property', kind: 'string', required: true },
      { name: 'operator', kind: 'string', required: true },
      { name: 'value', kind: 'string' },
      description,
    ],
    check: checkConstraint,
  },
  updateConstraint: {
    fields: [
      { name: 'type', kind: 'string', required: true, oneOf: COMPARISON_TYPES },
      { name: 'property', kind: 'string', required: true },
      { name: 'operator', kind: 'string', required: true },
      { name: 'value', kind: 'string' },
      description,
    ],
    check: checkConstraint,
  },
  createRule: {
    fields: [
      { name: 'segmentKey', kind: 'string' },
      { name: 'segmentKeys', kind: 'stringArray' },
      { name: 'segmentOperator', kind: 'string', oneOf: SEGMENT_OPERATORS },
      { name: 'rank', kind: 'integer', positive: true },
    ],
    check: checkRuleSegments,
  },
  updateRule: {
    fields: [
      { name: 'segmentKey', kind: 'string' },
      { name: 'segmentKeys', kind: 'stringArray' },
      { name: 'segmentOperator', kind: 'string', oneOf: SEGMENT_OPERATORS },
    ],
    check: checkRuleSegments,
  },
  orderRules: { fields: [{ name: 'ruleIds', kind: 'stringArray', required: true }] },
  createDistribution: {
    fields: [
      { name: 'variantId', kind: 'string', required: true },
      { name: 'rollout', kind: 'number', range: [0, 100] },
    ],
  },
  updateDistribution: {
    fields: [
      { name: 'variantId', kind: 'string', required: true },
      { name: 'rollout', kind: 'number', range: [0, 100] },
    ],
  },
  createRollout: {
    fields: [
      { name: 'rank', kind: 'integer', positive: true },
      description,
      { name: 'segment', kind: 'object' },
      { name: 'threshold', kind: 'object' },
    ],
    check: checkRollout,
  },
  updateRollout: {
    fields: [description, { name: 'segment', kind: 'object' }, { name: 'threshold', kind: 'object' }],
    check: checkRollout,
  },
  orderRollouts: { fields: [{ name: 'rolloutIds', kind: 'stringArray', required: true }] },
  /** Deletes carry no body; their inputs are path parameters, already non-empty. */
  delete: { fields: [] },
} as const satisfies Record<string, WriteSpec>;

export type WriteOperation = keyof typeof WRITE_SPECS;
