/**
 * The oracle itself: that the bucketing rewrite makes Flipt's WASM engine answer exactly like
 * Flipt v1 (bucket by bucket, and on Flipt's own worked examples, flipt-semantics.md §2.10), and
 * that each divergence of the engine listed in quirks.ts is real (so the excuses in the
 * differential test are needed; if an engine upgrade fixes one, this test says so) while vexil
 * gives the documented v1 answer (§2.6) on those very inputs.
 */
import t from 'tap';
import zlib from 'node:zlib';
import { compileConstraint } from '../../src/evaluation/compile-segments.js';
import { matchConstraint } from '../../src/evaluation/constraints.js';
import type { ComparisonType } from '../../src/model/enums.js';
import type { SnapshotDocument, SnapshotFlag, SnapshotSegment } from '../support/flipt-snapshot.js';
import { FliptEngineOracle, v1Width } from './flipt-engine.js';
import { constraintQuirk, type Quirk } from './quirks.js';

const crc = (s: string) => zlib.crc32(Buffer.from(s, 'utf8'));
const everyone: SnapshotSegment = { key: 'everyone', name: '', description: '', matchType: 'ALL_SEGMENT_MATCH_TYPE', constraints: [] };

function variantFlag(key: string, rollouts: readonly number[], extra: Partial<SnapshotFlag> = {}, variantKeys?: readonly string[]): SnapshotFlag {
  return {
    key,
    name: key,
    description: '',
    enabled: true,
    type: 'VARIANT_FLAG_TYPE',
    createdAt: '',
    updatedAt: '',
    rollouts: [],
    rules: [
      {
        id: `${key}-r1`,
        rank: 1,
        segmentOperator: 'OR_SEGMENT_OPERATOR',
        segments: [everyone],
        distributions: rollouts.map((rollout, i) => {
          const k = variantKeys?.[i] ?? `v${i}`;
          return { id: '', ruleId: '', variantId: k, variantKey: k, variantAttachment: 'null', rollout };
        }),
      },
    ],
    ...extra,
  };
}

const doc = (flags: SnapshotFlag[]): Map<string, SnapshotDocument> => new Map([['default', { namespace: { key: 'default' }, flags }]]);

/** One entity id per bucket 0..999 for a flag key (variant hashing: crc32(flagKey + entityId) % 1000). */
function idsPerBucket(flagKey: string): string[] {
  const ids: string[] = new Array(1000);
  let found = 0;
  for (let i = 0; found < 1000; i++) {
    const b = crc(`${flagKey}u${i}`) % 1000;
    if (ids[b] === undefined) {
      ids[b] = `u${i}`;
      found++;
    }
  }
  return ids;
}

/** Flipt v1's pick for a bucket, straight from §2.3: the first valid distribution whose cumulative width exceeds it. */
function v1Pick(rollouts: readonly number[], bucket: number): string | undefined {
  let upper = 0;
  for (let i = 0; i < rollouts.length; i++) {
    if (!(Math.fround(rollouts[i]) > 0)) continue;
    upper += v1Width(rollouts[i]);
    if (bucket < upper) return `v${i}`;
  }
  return undefined;
}

t.test('with the rewrite, the engine buckets exactly like Flipt v1', async (t) => {
  const oracle = await FliptEngineOracle.create(['default']);
  const layouts = [
    [50, 50],
    [33.33, 33.33, 33.34],
    [33.33, 33.33, 33.33],
    [33.3, 33.3, 33.3],
    [10],
    [0.05, 50],
    [0.05],
    [0, 30, 0, 30],
    [12.5, 87.5],
    [0.15, 0.1, 99.75],
    [66.67, 33.33],
    [20, 20, 20, 20, 19.9],
    [1.11, 2.22, 3.33, 4.44],
  ];
  oracle.load(doc(layouts.map((r, i) => variantFlag(`L${i}`, r))));
  for (let i = 0; i < layouts.length; i++) {
    const ids = idsPerBucket(`L${i}`);
    const wrong: string[] = [];
    for (let b = 0; b < 1000; b++) {
      const r = oracle.variant('default', `L${i}`, ids[b], {});
      const want = v1Pick(layouts[i], b);
      const got = r.kind === 'variant' && r.match ? r.variantKey : undefined;
      if (got !== want) wrong.push(`bucket ${b}: want ${want}, got ${got}`);
    }
    t.same(wrong.slice(0, 5), [], `${JSON.stringify(layouts[i])}: all 1000 buckets`);
  }
});

t.test('without the rewrite, the engine normalizes widths (Flipt v2 bucketing), which is why the rewrite exists', async (t) => {
  const oracle = await FliptEngineOracle.create(['default']);
  // §2.10 #3: flag foo, entity 123, bucket 253, a single 10% distribution: v1 gives no variant.
  oracle.load(doc([variantFlag('foo', [10], {}, ['boz'])]), { raw: true });
  const raw = oracle.variant('default', 'foo', '123', {});
  t.match(raw, { kind: 'variant', match: true, variantKey: 'boz' }, 'raw engine: the 10% distribution is stretched over every bucket');
  oracle.load(doc([variantFlag('foo', [10], {}, ['boz'])]));
  t.match(oracle.variant('default', 'foo', '123', {}), { kind: 'variant', match: false, reason: 'UNKNOWN_EVALUATION_REASON', variantKey: '' }, 'rewritten: v1 result');
});

t.test("through the rewrite, the engine reproduces Flipt's own worked examples (§2.10)", async (t) => {
  const oracle = await FliptEngineOracle.create(['default']);
  const bar = { id: 'bar', key: 'bar', attachment: 'null' };
  oracle.load(doc([variantFlag('foo', [50, 50], {}, ['boz', 'booz'])]));
  t.match(oracle.variant('default', 'foo', '1', {}), { match: true, variantKey: 'boz' }, '#1 foo1 -> bucket 244 -> boz');
  t.match(oracle.variant('default', 'foo', '2', {}), { match: true, variantKey: 'booz' }, '#2 foo2 -> bucket 934 -> booz');

  oracle.load(doc([variantFlag('foo', [10], { defaultVariant: bar }, ['boz'])]));
  t.match(oracle.variant('default', 'foo', '123', {}), { match: false, reason: 'DEFAULT_EVALUATION_REASON', variantKey: 'bar', segmentKeys: ['everyone'] }, '#4 bucket 253 outside 10% -> default variant, segment keys kept');

  oracle.load(doc([variantFlag('foo', [0, 100], {}, ['boz', 'booz'])]));
  t.match(oracle.variant('default', 'foo', '1', {}), { match: true, variantKey: 'booz' }, '#5 first distribution 0% -> booz');

  oracle.load(doc([variantFlag('foo', [0, 0, 50, 0, 0, 50], {}, ['1', '2', '3', '4', '5', '6'])]));
  t.match(oracle.variant('default', 'foo', '1', {}), { match: true, variantKey: '3' }, '#6 zeros skipped -> "3"');

  oracle.load(doc([variantFlag('foo', [50, 50], {}, ['boz', 'moz'])]));
  t.match(oracle.variant('default', 'foo', '10', {}), { match: true, variantKey: 'boz' }, '#10a zero-constraint segment -> boz');
  t.match(oracle.variant('default', 'foo', '01', {}), { match: true, variantKey: 'moz' }, '#10b -> moz');

  const threshold = (percentage: number, value: boolean): SnapshotFlag => ({
    key: 'test-flag',
    name: 'test-flag',
    description: '',
    enabled: true,
    type: 'BOOLEAN_FLAG_TYPE',
    createdAt: '',
    updatedAt: '',
    rules: [],
    rollouts: [{ type: 'THRESHOLD_ROLLOUT_TYPE', rank: 1, threshold: { percentage, value } }],
  });
  oracle.load(doc([threshold(70, false)]));
  t.match(oracle.boolean('default', 'test-flag', 'test-entity', {}), { enabled: false, reason: 'MATCH_EVALUATION_REASON', segmentKeys: [] }, '#11 n=65 < 70 -> false, MATCH');
  oracle.load(doc([threshold(5, false)]));
  t.match(oracle.boolean('default', 'test-flag', 'test-entity', {}), { enabled: true, reason: 'DEFAULT_EVALUATION_REASON' }, '#12 n=65 >= 5 -> flag.enabled, DEFAULT');
});

t.test('boolean responses of the engine carry the matched segment keys of a segment rollout, none for thresholds', async (t) => {
  const oracle = await FliptEngineOracle.create(['default']);
  const seg = (key: string, value: string): SnapshotSegment => ({
    key,
    name: '',
    description: '',
    matchType: 'ALL_SEGMENT_MATCH_TYPE',
    constraints: [{ id: key, type: 'STRING_CONSTRAINT_COMPARISON_TYPE', property: 'plan', operator: 'eq', value }],
  });
  oracle.load(
    doc([
      {
        key: 'b',
        name: 'b',
        description: '',
        enabled: false,
        type: 'BOOLEAN_FLAG_TYPE',
        createdAt: '',
        updatedAt: '',
        rules: [],
        rollouts: [
          { type: 'SEGMENT_ROLLOUT_TYPE', rank: 1, segment: { value: true, segmentOperator: 'OR_SEGMENT_OPERATOR', segments: [seg('pro', 'pro'), everyone, seg('free', 'free')] } },
        ],
      },
    ]),
  );
  const r = oracle.boolean('default', 'b', 'u1', { plan: 'pro' });
  t.equal(r.kind, 'boolean');
  if (r.kind === 'boolean') t.same([...r.segmentKeys].sort(), ['everyone', 'pro'], 'every matched segment of the OR rollout, in no particular order');
});

interface QuirkExample {
  readonly quirk: Quirk;
  readonly type: ComparisonType;
  readonly op: string;
  readonly value: string;
  readonly v: string;
  /** Flipt v1's verdict (flipt-semantics.md §2.6). */
  readonly v1: boolean;
}

const QUIRK_EXAMPLES: readonly QuirkExample[] = [
  { quirk: 'blank-not-trimmed', type: 'NUMBER_COMPARISON_TYPE', op: 'present', value: '', v: ' ', v1: false },
  { quirk: 'blank-not-trimmed', type: 'STRING_COMPARISON_TYPE', op: 'empty', value: '', v: ' ', v1: true },
  { quirk: 'blank-not-trimmed', type: 'BOOLEAN_COMPARISON_TYPE', op: 'notpresent', value: '', v: '\t', v1: true },
  { quirk: 'prefix-suffix-not-trimmed', type: 'STRING_COMPARISON_TYPE', op: 'prefix', value: 'ab', v: ' abc', v1: true },
  { quirk: 'prefix-suffix-not-trimmed', type: 'ENTITY_ID_COMPARISON_TYPE', op: 'suffix', value: 'bc', v: 'abc ', v1: true },
  { quirk: 'number-not-i32', type: 'NUMBER_COMPARISON_TYPE', op: 'lt', value: '5', v: '3.5', v1: true },
  { quirk: 'number-not-i32', type: 'NUMBER_COMPARISON_TYPE', op: 'eq', value: '3.5', v: '3.5', v1: true },
  { quirk: 'number-not-i32', type: 'NUMBER_COMPARISON_TYPE', op: 'gt', value: '3', v: '2147483648', v1: true },
  { quirk: 'number-not-i32', type: 'NUMBER_COMPARISON_TYPE', op: 'isoneof', value: '[1, 3.5]', v: '1', v1: true },
  { quirk: 'number-not-i32', type: 'NUMBER_COMPARISON_TYPE', op: 'eq', value: '100', v: '1e2', v1: true },
  { quirk: 'bool-syntax', type: 'BOOLEAN_COMPARISON_TYPE', op: 'true', value: '', v: 'T', v1: true },
  { quirk: 'bool-syntax', type: 'BOOLEAN_COMPARISON_TYPE', op: 'false', value: '', v: '0', v1: true },
  { quirk: 'datetime-syntax', type: 'DATETIME_COMPARISON_TYPE', op: 'eq', value: '2024-01-02', v: '2024-01-02T00:00:00Z', v1: true },
  { quirk: 'datetime-syntax', type: 'DATETIME_COMPARISON_TYPE', op: 'lt', value: '2024-01-02T00:00:00.5Z', v: '2024-01-02T00:00:00.1Z', v1: true },
  { quirk: 'datetime-syntax', type: 'DATETIME_COMPARISON_TYPE', op: 'eq', value: '2024-01-02T00:00:00Z', v: '2024-01-02t00:00:00z', v1: false },
  { quirk: 'json-escape', type: 'STRING_COMPARISON_TYPE', op: 'isoneof', value: '["a\\"b", "c"]', v: 'a"b', v1: true },
];

/** Inputs outside every quirk class, on which the engine and v1 agree (so the quirk classes are not wider than needed). */
const PLAIN_EXAMPLES: ReadonlyArray<Omit<QuirkExample, 'quirk'>> = [
  { type: 'NUMBER_COMPARISON_TYPE', op: 'lt', value: '5', v: '3', v1: true },
  { type: 'NUMBER_COMPARISON_TYPE', op: 'eq', value: '+3', v: '003', v1: true },
  { type: 'NUMBER_COMPARISON_TYPE', op: 'isnotoneof', value: '[1, 3]', v: '-7', v1: true },
  { type: 'NUMBER_COMPARISON_TYPE', op: 'neq', value: '3', v: 'abc', v1: false },
  { type: 'NUMBER_COMPARISON_TYPE', op: 'notpresent', value: '', v: '', v1: true },
  { type: 'BOOLEAN_COMPARISON_TYPE', op: 'true', value: '', v: 'true', v1: true },
  { type: 'BOOLEAN_COMPARISON_TYPE', op: 'false', value: '', v: 'yes', v1: false },
  { type: 'DATETIME_COMPARISON_TYPE', op: 'eq', value: '2024-01-02T01:00:00+01:00', v: '2024-01-02T00:00:00Z', v1: true },
  { type: 'DATETIME_COMPARISON_TYPE', op: 'gte', value: '2024-01-02T00:00:00Z', v: '2023-12-31T23:59:59Z', v1: false },
  { type: 'STRING_COMPARISON_TYPE', op: 'neq', value: 'a', v: '', v1: false },
  { type: 'STRING_COMPARISON_TYPE', op: 'isnotoneof', value: '["a","b"]', v: 'c', v1: true },
  { type: 'STRING_COMPARISON_TYPE', op: 'notcontains', value: 'x', v: 'abc', v1: true },
  { type: 'ENTITY_ID_COMPARISON_TYPE', op: 'prefix', value: 'user-', v: 'user-7', v1: true },
];

const ENGINE_TYPE: Record<ComparisonType, string> = {
  STRING_COMPARISON_TYPE: 'STRING_CONSTRAINT_COMPARISON_TYPE',
  NUMBER_COMPARISON_TYPE: 'NUMBER_CONSTRAINT_COMPARISON_TYPE',
  BOOLEAN_COMPARISON_TYPE: 'BOOLEAN_CONSTRAINT_COMPARISON_TYPE',
  DATETIME_COMPARISON_TYPE: 'DATETIME_CONSTRAINT_COMPARISON_TYPE',
  ENTITY_ID_COMPARISON_TYPE: 'ENTITY_ID_CONSTRAINT_COMPARISON_TYPE',
};

async function engineVerdicts(examples: ReadonlyArray<Omit<QuirkExample, 'quirk'>>): Promise<boolean[]> {
  const oracle = await FliptEngineOracle.create(['default']);
  oracle.load(
    doc(
      examples.map((e, i) => ({
        ...variantFlag(`q${i}`, []),
        rules: [
          {
            id: `q${i}`,
            rank: 1,
            segmentOperator: 'OR_SEGMENT_OPERATOR' as const,
            distributions: [],
            segments: [{ key: 's', name: '', description: '', matchType: 'ALL_SEGMENT_MATCH_TYPE' as const, constraints: [{ id: 'c', type: ENGINE_TYPE[e.type], property: 'p', operator: e.op, value: e.value }] }],
          },
        ],
      })),
    ),
  );
  return examples.map((e, i) => {
    const entity = e.type === 'ENTITY_ID_COMPARISON_TYPE' ? e.v : 'someone';
    const r = oracle.variant('default', `q${i}`, entity, { p: e.v });
    return r.kind === 'variant' && r.match;
  });
}

const vexilVerdict = (e: Omit<QuirkExample, 'quirk'>) => matchConstraint(compileConstraint(e.type, e.op, 'p', e.value)!, e.v, { p: e.v });

t.test('each documented quirk of the engine is real, and vexil gives the v1 answer there', async (t) => {
  const engine = await engineVerdicts(QUIRK_EXAMPLES);
  QUIRK_EXAMPLES.forEach((e, i) => {
    const what = `${e.type} ${e.op} ${JSON.stringify(e.value)} on ${JSON.stringify(e.v)}`;
    t.equal(constraintQuirk({ type: e.type, property: 'p', operator: e.op, value: e.value }, e.v), e.quirk, `${what} is classified ${e.quirk}`);
    t.equal(engine[i], !e.v1, `${what}: the engine says ${!e.v1}, Flipt v1 says ${e.v1}`);
    t.equal(vexilVerdict(e), e.v1, `${what}: vexil says ${e.v1}`);
  });
});

t.test('outside the quirk classes the engine, v1 and vexil agree', async (t) => {
  const engine = await engineVerdicts(PLAIN_EXAMPLES);
  PLAIN_EXAMPLES.forEach((e, i) => {
    const what = `${e.type} ${e.op} ${JSON.stringify(e.value)} on ${JSON.stringify(e.v)}`;
    t.equal(constraintQuirk({ type: e.type, property: 'p', operator: e.op, value: e.value }, e.v), undefined, `${what} is no quirk`);
    t.equal(engine[i], e.v1, `${what}: engine`);
    t.equal(vexilVerdict(e), e.v1, `${what}: vexil`);
  });
});
