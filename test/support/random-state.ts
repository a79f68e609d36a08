/**
 * A seeded generator of random but VALID Flipt-format states, for the differential test against
 * Flipt's own engine (test/oracle/). Everything is reproducible from a seed: `stateRng(seed, i)`
 * gives the generator of state i, `evalRng(seed, i, j)` the generator of its j-th evaluation.
 *
 * The generator builds an abstract state (`GenState`) first. Two independent writers turn it into
 * the two engines' inputs: `toFeaturesYaml` (Flipt's declarative files, what vexil reads) and
 * test/support/flipt-snapshot.ts (the client snapshot JSON, what Flipt's WASM engine reads).
 * Neither is derived from vexil's own snapshot: the point is independence.
 *
 * "Valid" means valid for vexil, which is stricter than Flipt v1 in a few places it reports as
 * errors (distributions summing to more than 100, unparsable number/datetime/array constraint
 * values, thresholds outside 0..100, duplicate keys): those are never generated.
 * `le` is never generated (Flipt v1 accepts it but never matches it; vexil warns).
 *
 * Context values, entity ids and constraint values are drawn from the same small pools so that
 * constraints match often enough for every branch to be exercised. A few pool values are "quirky":
 * Flipt v1 (Go) and the WASM engine (Rust) read them differently; see test/oracle/quirks.ts.
 */
import jsYaml from 'js-yaml';
import type { ComparisonType, MatchType, SegmentOperator } from '../../src/model/enums.js';
import { mulberry32 } from './prng.js';
export { mulberry32 };

// ----- PRNG ----------------------------------------------------------------------------------------

export type Rng = () => number;

/** Mixes several integers into one 32-bit seed (murmur3 finalizer per step), so seeds of neighbours are unrelated. */
export function mixSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    // The high part of indices above 2^32 (the long run) must matter too.
    h = Math.imul(h ^ Math.floor(p / 4294967296), 0x27d4eb2f);
    h ^= h >>> 15;
  }
  return h >>> 0;
}

export const stateRng = (seed: number, stateIndex: number): Rng => mulberry32(mixSeed(seed, stateIndex, 1));
export const evalRng = (seed: number, stateIndex: number, evalIndex: number): Rng => mulberry32(mixSeed(seed, stateIndex, evalIndex, 2));

export const int = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));
export const chance = (rng: Rng, p: number): boolean => rng() < p;
export function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)];
}
/** Fisher-Yates on a copy. */
export function shuffle<T>(rng: Rng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

// ----- the abstract state ------------------------------------------------------------------------

export interface GenConstraint {
  readonly type: ComparisonType;
  readonly property: string;
  readonly operator: string;
  /** undefined: the `value` key is left out (reads as ""). */
  readonly value?: string;
}

export interface GenSegment {
  readonly key: string;
  readonly matchType: MatchType;
  readonly constraints: readonly GenConstraint[];
}

export interface GenVariant {
  readonly key: string;
  /** A JSON-compatible object or array; undefined: no attachment. */
  readonly attachment?: unknown;
  readonly default?: boolean;
}

/** How a rule or rollout names its segments. */
export interface GenSegmentRef {
  /** `segment: key` (rules) / `segment: {key: k}` (rollouts), or the `keys` list form. */
  readonly form: 'key' | 'keys';
  /** In declared order; may hold duplicates and may be empty (`keys: []`) in the list form. */
  readonly keys: readonly string[];
  /** undefined: left out (means OR). */
  readonly operator?: SegmentOperator;
}

export interface GenDistribution {
  readonly variant: string;
  readonly rollout: number;
}

export interface GenRule {
  readonly segment: GenSegmentRef;
  readonly distributions: readonly GenDistribution[];
}

export type GenRollout = (
  | { readonly kind: 'threshold'; readonly percentage: number; readonly value?: boolean }
  | { readonly kind: 'segment'; readonly segment: GenSegmentRef; readonly value?: boolean }
  /** `- {}`: accepted by Flipt v1 and skipped by evaluation. */
  | { readonly kind: 'empty' }
) & {
  /** Accepted, not exposed, no effect. */
  readonly description?: string;
};

export interface GenFlag {
  readonly key: string;
  readonly name: string;
  readonly type: 'VARIANT_FLAG_TYPE' | 'BOOLEAN_FLAG_TYPE';
  /** Write `type:` even for variant flags (only allowed from version 1.1). */
  readonly writeType: boolean;
  /** undefined: left out (false). */
  readonly enabled?: boolean;
  readonly variants: readonly GenVariant[];
  readonly rules: readonly GenRule[];
  readonly rollouts: readonly GenRollout[];
}

export interface GenNamespace {
  readonly key: string;
  /** `namespace: {key, name}` instead of `namespace: key`. */
  readonly objectForm: boolean;
  /** undefined: `version` left out (means 1.4). */
  readonly version?: string;
  readonly segments: readonly GenSegment[];
  readonly flags: readonly GenFlag[];
}

export interface GenState {
  readonly namespaces: readonly GenNamespace[];
  /**
   * How the namespaces become files: all in one YAML file (a document each), one YAML file per
   * namespace, each namespace split over two documents (segments and some flags, then the other
   * flags: references resolve to segments of an earlier document), or one JSON file per namespace.
   */
  readonly layout: 'one-file' | 'file-per-namespace' | 'split-documents' | 'json';
  /** js-yaml dump options, varied so that several YAML styles are read. */
  readonly style: { readonly flowLevel: number; readonly quotingType: "'" | '"'; readonly forceQuotes: boolean };
}

export interface GenerateOptions {
  /** 1..2 namespaces (default: random). */
  readonly namespaces?: number;
  /** Flags per namespace, at most (default 6). */
  readonly maxFlags?: number;
}

// ----- pools -----------------------------------------------------------------------------------------

/** Context properties and the comparison type each is mostly used with. */
export const PROPERTIES: Readonly<Record<string, ComparisonType>> = {
  plan: 'STRING_COMPARISON_TYPE',
  region: 'STRING_COMPARISON_TYPE',
  age: 'NUMBER_COMPARISON_TYPE',
  score: 'NUMBER_COMPARISON_TYPE',
  beta: 'BOOLEAN_COMPARISON_TYPE',
  admin: 'BOOLEAN_COMPARISON_TYPE',
  signup: 'DATETIME_COMPARISON_TYPE',
  seen: 'DATETIME_COMPARISON_TYPE',
};
const PROPERTY_NAMES = Object.keys(PROPERTIES);
const TYPES: readonly ComparisonType[] = [
  'STRING_COMPARISON_TYPE',
  'NUMBER_COMPARISON_TYPE',
  'BOOLEAN_COMPARISON_TYPE',
  'DATETIME_COMPARISON_TYPE',
  'ENTITY_ID_COMPARISON_TYPE',
];

/** Every operator of every type that vexil and Flipt v1 evaluate (`le` left out on purpose, `lt` in). */
export const OPERATORS: Readonly<Record<ComparisonType, readonly string[]>> = {
  STRING_COMPARISON_TYPE: ['eq', 'neq', 'empty', 'notempty', 'prefix', 'suffix', 'contains', 'notcontains', 'isoneof', 'isnotoneof'],
  ENTITY_ID_COMPARISON_TYPE: ['eq', 'neq', 'empty', 'notempty', 'prefix', 'suffix', 'contains', 'notcontains', 'isoneof', 'isnotoneof'],
  NUMBER_COMPARISON_TYPE: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'present', 'notpresent', 'isoneof', 'isnotoneof'],
  DATETIME_COMPARISON_TYPE: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'present', 'notpresent'],
  BOOLEAN_COMPARISON_TYPE: ['true', 'false', 'present', 'notpresent'],
};

/**
 * Values per type. The main pools are read the same way by Go and by the Rust engine; the
 * `_QUIRKY` ones are not (test/oracle/quirks.ts) and are drawn rarely. Surrounding white space
 * is a quirk only for prefix/suffix/empty/notempty, so `_SPACED` values are drawn more often.
 * Context values and constraint operands come from the same pools so that eq/prefix/lt/... match.
 */
const STRINGS = ['pro', 'free', 'enterprise', 'pro-eu', 'eu-pro', 'PRO', 'pr', 'ro', 'e', 'pro', 'free', 'eu-pro'];
const STRINGS_SPACED = [' pro', 'pro ', ' ', '\t', 'eu\t', ' free '];
const ENTITIES = ['alice', 'bob', 'user-7', 'admin@example.com', 'ali', 'user-', 'bob@example.com'];
const ENTITIES_SPACED = [' alice', 'bob ', ' ', 'user-7\n'];
const SPACED = 0.12;
const NUMBERS = ['0', '1', '-1', '3', '10', '42', '100', '-7', '+3', '007', '-0', 'abc', '2147483647'];
const NUMBERS_QUIRKY = ['3.5', '1e2', '0.1', '-2.5', 'NaN', 'Inf', '-Infinity', '0x1p4', '1_000', '2147483648', '1e400', '3.0', ' '];
const NUMBER_OPERANDS = ['0', '3', '10', '42', '-1', '100', '+3', '007'];
const NUMBER_OPERANDS_QUIRKY = ['3.5', '1e2', '-2.5', '0.1', '2147483648', '3.0'];
const BOOLS = ['true', 'false', 'yes', 'no', 'x'];
const BOOLS_QUIRKY = ['1', '0', 't', 'T', 'f', 'F', 'TRUE', 'True', 'FALSE', 'False', ' '];
const DATETIMES = ['2024-01-01T00:00:00Z', '2024-06-15T12:30:00Z', '2024-06-15T14:30:00+02:00', '2025-01-01T00:00:00Z', '2023-12-31T23:59:59Z', '2024-06-15T12:30:01Z', 'never'];
const DATETIMES_QUIRKY = ['2024-06-15', '2024-01-01', '2024-06-15T12:30:00.5Z', '2024-06-15T12:30:00.000Z', '2024-06-15t12:30:00z', '2024-06-15 12:30:00Z', ' '];

const QUIRKY_CONTEXT = 0.04;
const QUIRKY_OPERAND = 0.06;

function drawContextValue(rng: Rng, type: ComparisonType): string {
  const quirky = chance(rng, QUIRKY_CONTEXT);
  switch (type) {
    case 'STRING_COMPARISON_TYPE':
      return pick(rng, chance(rng, SPACED) ? STRINGS_SPACED : STRINGS);
    case 'ENTITY_ID_COMPARISON_TYPE':
      return pick(rng, chance(rng, SPACED) ? ENTITIES_SPACED : ENTITIES);
    case 'NUMBER_COMPARISON_TYPE':
      return pick(rng, quirky ? NUMBERS_QUIRKY : NUMBERS);
    case 'BOOLEAN_COMPARISON_TYPE':
      return pick(rng, quirky ? BOOLS_QUIRKY : BOOLS);
    case 'DATETIME_COMPARISON_TYPE':
      return pick(rng, quirky ? DATETIMES_QUIRKY : DATETIMES);
  }
}

function stringArray(rng: Rng, pool: readonly string[]): string {
  const n = int(rng, 0, 3);
  const items: string[] = [];
  for (let i = 0; i < n; i++) items.push(pick(rng, pool));
  // Both spacings Flipt users write; always a valid JSON array of strings.
  return chance(rng, 0.5) ? JSON.stringify(items) : `[${items.map((s) => JSON.stringify(s)).join(', ')}]`;
}

function numberArray(rng: Rng): string {
  const n = int(rng, 0, 3);
  const quirky = chance(rng, QUIRKY_OPERAND);
  const items: string[] = [];
  for (let i = 0; i < n; i++) items.push(pick(rng, quirky ? ['3.5', '-2.5', '1e2', '10', '3'] : ['0', '1', '3', '10', '42', '-1', '-7', '100']));
  return `[${items.join(chance(rng, 0.5) ? ',' : ', ')}]`;
}

function operand(rng: Rng, type: ComparisonType, op: string): string | undefined {
  const quirky = chance(rng, QUIRKY_OPERAND);
  switch (type) {
    case 'STRING_COMPARISON_TYPE':
    case 'ENTITY_ID_COMPARISON_TYPE': {
      const pool = type === 'STRING_COMPARISON_TYPE' ? [...STRINGS, 'eu', '-', ' pro'] : [...ENTITIES, '@example.com', 'user', 'ce', ' alice'];
      if (op === 'isoneof' || op === 'isnotoneof') return stringArray(rng, pool);
      if (op === 'empty' || op === 'notempty') return chance(rng, 0.5) ? undefined : pick(rng, pool);
      return pick(rng, pool);
    }
    case 'NUMBER_COMPARISON_TYPE':
      if (op === 'isoneof' || op === 'isnotoneof') return numberArray(rng);
      if (op === 'present' || op === 'notpresent') return chance(rng, 0.5) ? undefined : pick(rng, NUMBER_OPERANDS);
      return pick(rng, quirky ? NUMBER_OPERANDS_QUIRKY : NUMBER_OPERANDS);
    case 'DATETIME_COMPARISON_TYPE': {
      const valid = DATETIMES.filter((d) => d !== 'never');
      if (op === 'present' || op === 'notpresent') return chance(rng, 0.5) ? undefined : pick(rng, valid);
      return pick(rng, quirky ? ['2024-06-15', '2024-01-01', '2024-06-15T12:30:00.5Z', '2024-06-15T12:30:00.250+02:00'] : valid);
    }
    case 'BOOLEAN_COMPARISON_TYPE':
      // The operator decides; a value is ignored (vexil warns about non-boolean ones, so keep them boolean).
      return chance(rng, 0.7) ? undefined : pick(rng, ['true', 'false', '']);
  }
}

// ----- generation ----------------------------------------------------------------------------------

const NAMESPACE_KEYS = ['default', 'team-a'];
const SEGMENT_KEYS = ['s0', 's1', 's2', 's3', 's4', 's5', 'beta-users', 'eu,pro'];
const FLAG_KEYS = ['checkout', 'new-ui', 'flag_1', 'dark-mode', 'a,b', 'search_v2', 'X', 'pricing-2024', 'onboarding', 'f'];
const VARIANT_KEYS = ['control', 'treatment', 'red', 'blue', 'v3', 'A b'];

function genConstraint(rng: Rng): GenConstraint {
  const type = chance(rng, 0.12) ? 'ENTITY_ID_COMPARISON_TYPE' : pick(rng, TYPES);
  const operator = pick(rng, OPERATORS[type]);
  let property: string;
  if (type === 'ENTITY_ID_COMPARISON_TYPE') property = pick(rng, ['entity', 'id', 'plan']); // ignored by both engines
  else {
    const own = PROPERTY_NAMES.filter((p) => PROPERTIES[p] === type);
    property = chance(rng, 0.9) ? pick(rng, own) : pick(rng, PROPERTY_NAMES);
  }
  const value = operand(rng, type, operator);
  return value === undefined ? { type, property, operator } : { type, property, operator, value };
}

function genSegment(rng: Rng, key: string): GenSegment {
  // Zero constraints matches everyone (both match types): keep it common enough.
  const n = chance(rng, 0.15) ? 0 : int(rng, 1, 4);
  const constraints: GenConstraint[] = [];
  for (let i = 0; i < n; i++) constraints.push(genConstraint(rng));
  return { key, matchType: chance(rng, 0.5) ? 'ALL_MATCH_TYPE' : 'ANY_MATCH_TYPE', constraints };
}

function genSegmentRef(rng: Rng, segmentKeys: readonly string[]): GenSegmentRef {
  const operator = (): SegmentOperator | undefined =>
    chance(rng, 0.2) ? undefined : chance(rng, 0.5) ? 'AND_SEGMENT_OPERATOR' : 'OR_SEGMENT_OPERATOR';
  const r = rng();
  if (r < 0.45) return { form: 'key', keys: [pick(rng, segmentKeys)] };
  if (r < 0.02 + 0.45) return { form: 'keys', keys: [], operator: operator() }; // `keys: []`: AND matches all, OR none
  const n = int(rng, 1, 3);
  const keys: string[] = [];
  for (let i = 0; i < n; i++) keys.push(pick(rng, segmentKeys));
  if (chance(rng, 0.05)) keys.push(keys[0]); // a duplicate key collapses
  return { form: 'keys', keys, operator: operator() };
}

/** Rollout percentages of a rule's distributions, one of the shapes that matter for bucketing. */
function genRollouts(rng: Rng, n: number): number[] {
  // Random partition of `total` units of 1/`scale` percent into `parts` rollouts (some may be 0).
  const byParts = (parts: number, total: number, scale: number): number[] => {
    const cuts = Array.from({ length: parts - 1 }, () => int(rng, 0, total)).sort((a, b) => a - b);
    const out: number[] = [];
    let prev = 0;
    for (const c of cuts) {
      out.push(c - prev);
      prev = c;
    }
    out.push(total - prev);
    return out.map((p) => p / scale);
  };
  const byHundredths = (total: number): number[] => byParts(n, total, 100);
  const r = rng();
  if (r < 0.2) {
    // Even splits as people write them: 50/50, 33.33/33.33/33.34, 25x4; and the truncating 33.33 x 3.
    if (n === 3 && chance(rng, 0.5)) return pick(rng, [[33.33, 33.33, 33.33], [33.3, 33.3, 33.3], [33.33, 33.33, 33.34], [33.3, 33.3, 33.4]]);
    const even = Math.floor(10000 / n) / 100;
    const parts = Array.from({ length: n }, () => even);
    parts[n - 1] = Math.round((100 - even * (n - 1)) * 100) / 100;
    return parts;
  }
  if (r < 0.45) return byHundredths(chance(rng, 0.5) ? 10000 : int(rng, 0, 100) * 100); // sum 100 (or a round sum <= 100)
  if (r < 0.65) return byHundredths(int(rng, 0, 9999)); // sum < 100, two decimals
  if (r < 0.75) return Array.from({ length: n }, (_, i) => (i === n - 1 ? 100 : 0)); // zeros then 100
  if (r < 0.82) return Array.from({ length: n }, () => pick(rng, [0, 0.05, 0.01, 0.1, 0.15])); // zero-width but "valid"
  if (r < 0.9) return n === 1 ? [0] : [0, ...byParts(n - 1, 10000, 100)]; // a leading 0, then a split of 100
  return byParts(n, int(rng, 900, 1000), 10); // one decimal, sum 90..100
}

function genVariantFlag(rng: Rng, key: string, segmentKeys: readonly string[], allowDefault: boolean): GenFlag {
  const nVariants = chance(rng, 0.08) ? 0 : int(rng, 1, 4);
  const keys = shuffle(rng, VARIANT_KEYS).slice(0, nVariants);
  const defaultIndex = allowDefault && nVariants > 0 && chance(rng, 0.45) ? int(rng, 0, nVariants - 1) : -1;
  const variants: GenVariant[] = keys.map((k, i) => ({
    key: k,
    ...(chance(rng, 0.4) ? { attachment: genAttachment(rng) } : {}),
    ...(i === defaultIndex ? { default: true } : allowDefault && chance(rng, 0.1) ? { default: false } : {}),
  }));
  const rules: GenRule[] = [];
  const nRules = chance(rng, 0.1) ? 0 : int(rng, 1, 4);
  for (let i = 0; i < nRules; i++) {
    let distributions: GenDistribution[] = [];
    if (nVariants > 0 && !chance(rng, 0.1)) {
      const n = int(rng, 1, Math.min(4, nVariants + 1));
      const rollouts = genRollouts(rng, n);
      // Usually distinct variants in order; sometimes one variant twice (Flipt allows it).
      distributions = rollouts.map((rollout, j) => ({ variant: chance(rng, 0.05) ? keys[0] : keys[j % nVariants], rollout }));
    }
    rules.push({ segment: genSegmentRef(rng, segmentKeys), distributions });
  }
  const enabled = chance(rng, 0.75) ? true : chance(rng, 0.5) ? false : undefined;
  return { key, name: `Flag ${key}`, type: 'VARIANT_FLAG_TYPE', writeType: false, enabled, variants, rules, rollouts: [] };
}

function genBooleanFlag(rng: Rng, key: string, segmentKeys: readonly string[]): GenFlag {
  const rollouts: GenRollout[] = [];
  const n = chance(rng, 0.1) ? 0 : int(rng, 1, 4);
  for (let i = 0; i < n; i++) {
    const value = chance(rng, 0.2) ? undefined : chance(rng, 0.5);
    const description = chance(rng, 0.1) ? { description: 'why this rollout' } : {};
    if (chance(rng, 0.03)) {
      rollouts.push({ kind: 'empty', ...description });
    } else if (chance(rng, 0.45)) {
      const percentage = pick(rng, [0, 100, 50, 33.3, 0.5, 99.9, 12.34, 1, 99, int(rng, 0, 100), int(rng, 0, 10000) / 100, 66.67]);
      rollouts.push(value === undefined ? { kind: 'threshold', percentage, ...description } : { kind: 'threshold', percentage, value, ...description });
    } else {
      const segment = genSegmentRef(rng, segmentKeys);
      rollouts.push(value === undefined ? { kind: 'segment', segment, ...description } : { kind: 'segment', segment, value, ...description });
    }
  }
  const enabled = chance(rng, 0.45) ? true : chance(rng, 0.6) ? false : undefined;
  return { key, name: `Flag ${key}`, type: 'BOOLEAN_FLAG_TYPE', writeType: true, enabled, variants: [], rules: [], rollouts };
}

function genAttachment(rng: Rng): unknown {
  if (chance(rng, 0.15)) return [int(rng, 0, 9), pick(rng, ['x', 'y']), chance(rng, 0.5)];
  const out: Record<string, unknown> = {};
  // Keys out of order on purpose (the attachment is re-encoded with sorted keys); one value with <>& (escaped by Go).
  for (const k of ['zeta', 'color', 'size', 'Alpha', 'on', 'list', 'nested', 'html']) {
    if (!chance(rng, 0.45)) continue;
    switch (k) {
      case 'color':
        out[k] = pick(rng, ['red', 'blue', 'ünï']);
        break;
      case 'size':
      case 'zeta':
        out[k] = int(rng, -5, 1000);
        break;
      case 'on':
        out[k] = chance(rng, 0.5);
        break;
      case 'list':
        out[k] = [1, 'two', null];
        break;
      case 'nested':
        out[k] = { b: 1, a: [true] };
        break;
      case 'html':
        out[k] = '<b>&</b>';
        break;
      default:
        out[k] = 'x';
    }
  }
  return out;
}

export function generateState(rng: Rng, opts: GenerateOptions = {}): GenState {
  const nsCount = opts.namespaces ?? (chance(rng, 0.6) ? 2 : 1);
  const maxFlags = opts.maxFlags ?? 6;
  const namespaces: GenNamespace[] = [];
  const nsKeys = nsCount === 1 ? [pick(rng, NAMESPACE_KEYS)] : NAMESPACE_KEYS.slice(0, nsCount);
  for (const nsKey of nsKeys) {
    // The same segment keys in both namespaces, defined differently: evaluation must not mix them up.
    const segKeys = shuffle(rng, SEGMENT_KEYS).slice(0, int(rng, 1, 6));
    const segments = segKeys.map((k) => genSegment(rng, k));

    const versionFloor = pick(rng, ['1.0', '1.1', '1.2', '1.3', '1.4', undefined, undefined]);
    const allowsTypes = versionFloor === undefined || versionFloor >= '1.1';
    const allowsDefault = versionFloor === undefined || versionFloor >= '1.3';
    const flagKeys = shuffle(rng, FLAG_KEYS).slice(0, int(rng, 1, maxFlags));
    const flags = flagKeys.map((k) => {
      if (allowsTypes && chance(rng, 0.4)) return genBooleanFlag(rng, k, segKeys);
      const f = genVariantFlag(rng, k, segKeys, allowsDefault);
      return allowsTypes && chance(rng, 0.3) ? { ...f, writeType: true } : f;
    });
    namespaces.push({ key: nsKey, objectForm: chance(rng, 0.3), version: versionFloor, segments, flags });
  }
  return {
    namespaces,
    layout: pick(rng, ['one-file', 'one-file', 'file-per-namespace', 'split-documents', 'json'] as const),
    style: { flowLevel: pick(rng, [-1, -1, 3, 4, 5]), quotingType: chance(rng, 0.5) ? "'" : '"', forceQuotes: chance(rng, 0.2) },
  };
}

// ----- writing Flipt's declarative format ------------------------------------------------------------

function segmentRefYaml(ref: GenSegmentRef, forRollout: boolean): unknown {
  if (ref.form === 'key') return forRollout ? { key: ref.keys[0] } : ref.keys[0];
  return ref.operator === undefined ? { keys: [...ref.keys] } : { keys: [...ref.keys], operator: ref.operator };
}

/** One Flipt document (a plain object) for a namespace, or for a part of it. */
export function namespaceDocument(ns: GenNamespace, part: { flags: readonly GenFlag[]; withSegments: boolean } = { flags: ns.flags, withSegments: true }): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  if (ns.version !== undefined) doc.version = ns.version;
  doc.namespace = ns.objectForm ? { key: ns.key, name: `Namespace ${ns.key}` } : ns.key;
  doc.flags = part.flags.map((f) => {
    const out: Record<string, unknown> = { key: f.key, name: f.name };
    if (f.writeType) out.type = f.type;
    if (f.enabled !== undefined) out.enabled = f.enabled;
    if (f.variants.length > 0) {
      out.variants = f.variants.map((v) => {
        const vo: Record<string, unknown> = { key: v.key };
        if (v.attachment !== undefined) vo.attachment = v.attachment;
        if (v.default !== undefined) vo.default = v.default;
        return vo;
      });
    }
    if (f.rules.length > 0) {
      out.rules = f.rules.map((r) => ({
        segment: segmentRefYaml(r.segment, false),
        ...(r.distributions.length > 0 ? { distributions: r.distributions.map((d) => ({ variant: d.variant, rollout: d.rollout })) } : {}),
      }));
    }
    if (f.rollouts.length > 0) {
      out.rollouts = f.rollouts.map((r) => {
        const description = r.description === undefined ? {} : { description: r.description };
        if (r.kind === 'empty') return description;
        if (r.kind === 'threshold') return { ...description, threshold: r.value === undefined ? { percentage: r.percentage } : { percentage: r.percentage, value: r.value } };
        const seg = segmentRefYaml(r.segment, true) as Record<string, unknown>;
        return { ...description, segment: r.value === undefined ? seg : { ...seg, value: r.value } };
      });
    }
    return out;
  });
  if (!part.withSegments) return doc;
  doc.segments = ns.segments.map((s) => ({
    key: s.key,
    name: `Segment ${s.key}`,
    match_type: s.matchType,
    constraints: s.constraints.map((c) => (c.value === undefined ? { type: c.type, property: c.property, operator: c.operator } : { ...c })),
  }));
  return doc;
}

export interface StateText {
  readonly path: string;
  readonly text: string;
}

/** The state as Flipt-format YAML files (what vexil loads). */
export function toFeaturesYaml(state: GenState): StateText[] {
  const dump = (doc: unknown) =>
    jsYaml.dump(doc, { flowLevel: state.style.flowLevel, quotingType: state.style.quotingType, forceQuotes: state.style.forceQuotes, lineWidth: -1, noRefs: true });
  switch (state.layout) {
    case 'one-file':
      return [{ path: 'features.yml', text: state.namespaces.map((ns) => dump(namespaceDocument(ns))).join('---\n') }];
    case 'file-per-namespace':
      return state.namespaces.map((ns) => ({ path: ns.key === 'default' ? 'features.yml' : `${ns.key}/features.yml`, text: dump(namespaceDocument(ns)) }));
    case 'split-documents':
      return state.namespaces.map((ns) => {
        const half = Math.ceil(ns.flags.length / 2);
        const first = namespaceDocument(ns, { flags: ns.flags.slice(0, half), withSegments: true });
        const second = namespaceDocument(ns, { flags: ns.flags.slice(half), withSegments: false });
        return { path: `${ns.key}.features.yml`, text: `${dump(first)}---\n${dump(second)}` };
      });
    case 'json':
      // Read by Flipt (and vexil) as a stream of JSON values when an index includes it.
      return state.namespaces.map((ns) => ({ path: `${ns.key}/features.json`, text: JSON.stringify(namespaceDocument(ns), null, 1) }));
  }
}

// ----- requests --------------------------------------------------------------------------------------

export interface GenRequest {
  readonly namespaceKey: string;
  readonly flagKey: string;
  /** The evaluation asked for: normally the flag's own type; sometimes the other one, or a missing flag. */
  readonly kind: 'variant' | 'boolean';
  readonly entityId: string;
  readonly context: Readonly<Record<string, string>>;
}

export function randomEntityId(rng: Rng): string {
  const r = rng();
  if (r < 0.6) return `user-${int(rng, 0, 999_999)}`;
  if (r < 0.9) return pick(rng, chance(rng, SPACED) ? ENTITIES_SPACED : ENTITIES);
  if (r < 0.97) return `${pick(rng, ['ü', 'ß', '日本', 'é'])}-${int(rng, 0, 99_999)}`; // hashed as UTF-8 bytes
  if (r < 0.99) return uuidFrom(rng);
  return '';
}

function uuidFrom(rng: Rng): string {
  const hex = () => Math.floor(rng() * 16).toString(16);
  const s = (n: number) => Array.from({ length: n }, hex).join('');
  return `${s(8)}-${s(4)}-4${s(3)}-a${s(3)}-${s(12)}`;
}

export function randomContext(rng: Rng): Record<string, string> {
  const ctx: Record<string, string> = {};
  for (const p of PROPERTY_NAMES) {
    const r = rng();
    if (r < 0.2) continue; // absent reads as ""
    if (r < 0.24) {
      ctx[p] = '';
      continue;
    }
    const type = chance(rng, 0.88) ? PROPERTIES[p] : pick(rng, TYPES);
    ctx[p] = drawContextValue(rng, type);
  }
  if (chance(rng, 0.1)) ctx.unrelated = 'x';
  return ctx;
}

export function randomRequest(rng: Rng, state: GenState): GenRequest {
  const ns = pick(rng, state.namespaces);
  const entityId = randomEntityId(rng);
  const context = randomContext(rng);
  if (ns.flags.length === 0 || chance(rng, 0.01)) return { namespaceKey: ns.key, flagKey: 'missing-flag', kind: chance(rng, 0.5) ? 'variant' : 'boolean', entityId, context };
  const flag = pick(rng, ns.flags);
  let kind: 'variant' | 'boolean' = flag.type === 'VARIANT_FLAG_TYPE' ? 'variant' : 'boolean';
  if (chance(rng, 0.01)) kind = kind === 'variant' ? 'boolean' : 'variant'; // a type error on both sides
  return { namespaceKey: ns.key, flagKey: flag.key, kind, entityId, context };
}
