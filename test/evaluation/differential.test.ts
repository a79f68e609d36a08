/**
 * The compiled evaluators against a naive interpreter written straight from the pseudo-code of
 * §2.2 / §2.4 (string concatenation, Buffer + zlib CRC, no precomputation), over random flags,
 * segments, contexts and entity ids. Guards the shortcuts: precomputed frozen results, partial
 * OR matches, float32 bounds, lazy hashing. Constraints are kept to string `eq` here; operators are
 * covered one by one in operators.test.ts.
 */
import t from 'tap';
import fc from 'fast-check';
import zlib from 'node:zlib';
import { evaluateBoolean, evaluateVariant } from '../../src/evaluation/index.js';
import type { BooleanResult, VariantResult } from '../../src/model/evaluation-result.js';
import type { FlagDefinition, Segment } from '../../src/model/snapshot.js';
import { booleanFlag, req, segment, snapshot, variantFlag, type ConstraintSpec, type RolloutSpec, type RuleSpec, type SegmentRef } from './fixture.js';

const crc = (s: string) => zlib.crc32(Buffer.from(s, 'utf8'));
const SEGMENT_KEYS = ['s0', 's1', 's2', 's3'];
const PROPS = ['p0', 'p1', 'p2'];
const VARIANTS = ['v0', 'v1', 'v2'];

function segMatches(seg: Segment, ctx: Record<string, string>): boolean {
  const hits = seg.constraints.map((c) => (ctx[c.property] ?? '') !== '' && ctx[c.property] === c.value);
  return seg.matchType === 'ALL_MATCH_TYPE' ? hits.every(Boolean) : hits.length === 0 || hits.some(Boolean);
}

function matchedKeys(keys: readonly string[], and: boolean, segs: Map<string, Segment>, ctx: Record<string, string>): string[] | null {
  const unique = [...new Set(keys)];
  const matched = unique.filter((k) => segMatches(segs.get(k)!, ctx));
  if (and ? matched.length !== unique.length : matched.length === 0) return null;
  return matched;
}

function naiveVariant(flag: FlagDefinition, segs: Map<string, Segment>, entityId: string, ctx: Record<string, string>): VariantResult {
  const dv = flag.defaultVariant;
  const res = {
    flagKey: flag.key,
    match: false,
    segmentKeys: [] as string[],
    reason: (dv ? 'DEFAULT_EVALUATION_REASON' : 'UNKNOWN_EVALUATION_REASON') as VariantResult['reason'],
    variantKey: dv?.key ?? '',
    variantAttachment: dv?.attachment ?? '',
  };
  if (!flag.enabled) return { ...res, reason: 'FLAG_DISABLED_EVALUATION_REASON' };
  for (const rule of flag.rules) {
    const keys = rule.segmentKey ? [rule.segmentKey] : rule.segmentKeys;
    const matched = matchedKeys(keys, rule.segmentOperator === 'AND_SEGMENT_OPERATOR', segs, ctx);
    if (matched === null) continue;
    if (matched.length > 0) res.segmentKeys = matched;
    const valid = rule.distributions.filter((d) => Math.fround(d.rollout) > 0);
    if (valid.length === 0) return { ...res, match: true, reason: 'MATCH_EVALUATION_REASON' };
    const bucket = crc(flag.key + entityId) % 1000;
    let upper = 0;
    for (const d of valid) {
      upper += Math.trunc(Math.fround(Math.fround(d.rollout) * 10));
      if (bucket < upper) {
        const v = flag.variants.find((x) => x.key === d.variantKey)!;
        return { ...res, match: true, reason: 'MATCH_EVALUATION_REASON', variantKey: v.key, variantAttachment: v.attachment };
      }
    }
    return res;
  }
  return res;
}

function naiveBoolean(flag: FlagDefinition, segs: Map<string, Segment>, entityId: string, ctx: Record<string, string>): BooleanResult {
  for (const r of flag.rollouts) {
    if (r.threshold) {
      if (Math.fround(crc(entityId + flag.key) % 100) < Math.fround(r.threshold.percentage)) {
        return { flagKey: flag.key, enabled: r.threshold.value, reason: 'MATCH_EVALUATION_REASON', segmentKeys: [] };
      }
    } else if (r.segment) {
      const keys = r.segment.segmentKey ? [r.segment.segmentKey] : r.segment.segmentKeys;
      const matched = matchedKeys(keys, r.segment.segmentOperator === 'AND_SEGMENT_OPERATOR', segs, ctx);
      if (matched !== null) return { flagKey: flag.key, enabled: r.segment.value, reason: 'MATCH_EVALUATION_REASON', segmentKeys: matched };
    }
  }
  return { flagKey: flag.key, enabled: flag.enabled, reason: 'DEFAULT_EVALUATION_REASON', segmentKeys: [] };
}

// ----- generators -----------------------------------------------------------------------------

const constraintArb = fc.tuple(fc.constantFrom(...PROPS), fc.constantFrom('a', 'b'));
const segmentsArb = fc.tuple(
  ...SEGMENT_KEYS.map((key) =>
    fc
      .record({ all: fc.boolean(), cs: fc.array(constraintArb, { maxLength: 2 }) })
      .map(({ all, cs }) =>
        segment(key, all ? 'ALL_MATCH_TYPE' : 'ANY_MATCH_TYPE', cs.map(([p, v]): ConstraintSpec => ['STRING_COMPARISON_TYPE', p, 'eq', v])),
      ),
  ),
);
const segmentRefArb: fc.Arbitrary<SegmentRef> = fc.oneof(
  fc.constantFrom(...SEGMENT_KEYS),
  fc.record({ keys: fc.array(fc.constantFrom(...SEGMENT_KEYS), { maxLength: 4 }), op: fc.constantFrom('OR_SEGMENT_OPERATOR', 'AND_SEGMENT_OPERATOR') as fc.Arbitrary<'OR_SEGMENT_OPERATOR' | 'AND_SEGMENT_OPERATOR'> }),
);
const rolloutPctArb = fc.oneof(fc.constantFrom(0, 0.05, 0.7, 10, 33.33, 33.34, 50, 100), fc.double({ min: 0, max: 100, noNaN: true }));
const ruleArb: fc.Arbitrary<RuleSpec> = fc.record({
  segment: segmentRefArb,
  distributions: fc.array(fc.tuple(fc.constantFrom(...VARIANTS), rolloutPctArb), { maxLength: 3 }),
});
const variantFlagArb = fc.record({
  enabled: fc.boolean(),
  defaultVariant: fc.option(fc.constantFrom(...VARIANTS), { nil: undefined }),
  rules: fc.array(ruleArb, { maxLength: 3 }),
});
const rolloutArb: fc.Arbitrary<RolloutSpec> = fc.oneof(
  fc.record({ threshold: fc.oneof(fc.constantFrom(-1, 0, 33.3, 50, 100, 150), fc.double({ min: -10, max: 110, noNaN: true })), value: fc.boolean() }),
  fc.record({ segment: segmentRefArb, value: fc.boolean() }),
  fc.constant({}),
);
const contextArb = fc.dictionary(fc.constantFrom(...PROPS), fc.constantFrom('a', 'b', ''));
const entityArb = fc.string({ maxLength: 12 });

t.test('variant: compiled evaluator == naive interpreter', async (t) => {
  fc.assert(
    fc.property(segmentsArb, variantFlagArb, fc.array(fc.tuple(entityArb, contextArb), { minLength: 1, maxLength: 8 }), (segs, spec, calls) => {
      const def = variantFlag({ key: 'flag', variants: [['v0', '{"n":0}'], 'v1', ['v2', '[2]']], ...spec });
      const s = snapshot({ default: { segments: segs, flags: [def] } });
      const segMap = new Map(segs.map((x) => [x.key, x]));
      for (const [entityId, ctx] of calls) {
        const got = evaluateVariant(s, req('flag', entityId, ctx));
        const want = naiveVariant(def, segMap, entityId, ctx);
        if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`got ${JSON.stringify(got)} want ${JSON.stringify(want)}`);
      }
    }),
    { numRuns: 400 },
  );
  t.pass('400 random flags agree');
});

t.test('boolean: compiled evaluator == naive interpreter', async (t) => {
  fc.assert(
    fc.property(segmentsArb, fc.boolean(), fc.array(rolloutArb, { maxLength: 4 }), fc.array(fc.tuple(entityArb, contextArb), { minLength: 1, maxLength: 8 }), (segs, enabled, rollouts, calls) => {
      const def = booleanFlag({ key: 'flag', enabled, rollouts });
      const s = snapshot({ default: { segments: segs, flags: [def] } });
      const segMap = new Map(segs.map((x) => [x.key, x]));
      for (const [entityId, ctx] of calls) {
        const got = evaluateBoolean(s, req('flag', entityId, ctx));
        const want = naiveBoolean(def, segMap, entityId, ctx);
        if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`got ${JSON.stringify(got)} want ${JSON.stringify(want)}`);
      }
    }),
    { numRuns: 400 },
  );
  t.pass('400 random flags agree');
});
