/**
 * Every worked example of flipt-semantics.md §2.10, evaluated end to end through the public
 * evaluators (hash values themselves are pinned in hash.test.ts).
 */
import t from 'tap';
import { evaluateBatch, evaluateBoolean, evaluateVariant } from '../../src/evaluation/index.js';
import { booleanFlag, req, segment, snapshot, variantFlag } from './fixture.js';

const barBaz = segment('bar', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'bar', 'eq', 'baz']]);
const ctx = { bar: 'baz' };

t.test('#1 #2 50/50 split: foo1 → bucket 244 → boz, foo2 → bucket 934 → booz', async (t) => {
  const s = snapshot({
    default: {
      segments: [barBaz],
      flags: [variantFlag({ key: 'foo', variants: ['boz', 'booz'], rules: [{ segment: 'bar', distributions: [['boz', 50], ['booz', 50]] }] })],
    },
  });
  t.same(evaluateVariant(s, req('foo', '1', ctx)), {
    flagKey: 'foo', match: true, segmentKeys: ['bar'], reason: 'MATCH_EVALUATION_REASON', variantKey: 'boz', variantAttachment: 'null',
  });
  t.same(evaluateVariant(s, req('foo', '2', ctx)), {
    flagKey: 'foo', match: true, segmentKeys: ['bar'], reason: 'MATCH_EVALUATION_REASON', variantKey: 'booz', variantAttachment: 'null',
  });
});

t.test('#3 single 10% distribution, bucket 253 outside → match=false UNKNOWN, segmentKeys still set', async (t) => {
  const s = snapshot({
    default: {
      segments: [barBaz],
      flags: [variantFlag({ key: 'foo', variants: ['bar'], rules: [{ segment: 'bar', distributions: [['bar', 10]] }] })],
    },
  });
  t.same(evaluateVariant(s, req('foo', '123', ctx)), {
    flagKey: 'foo', match: false, segmentKeys: ['bar'], reason: 'UNKNOWN_EVALUATION_REASON', variantKey: '', variantAttachment: '',
  });
});

t.test('#4 as #3 with default variant → match=false DEFAULT, default value', async (t) => {
  const s = snapshot({
    default: {
      segments: [barBaz],
      flags: [
        variantFlag({ key: 'foo', variants: [['bar', '{"x":1}']], defaultVariant: 'bar', rules: [{ segment: 'bar', distributions: [['bar', 10]] }] }),
      ],
    },
  });
  t.same(evaluateVariant(s, req('foo', '123', ctx)), {
    flagKey: 'foo', match: false, segmentKeys: ['bar'], reason: 'DEFAULT_EVALUATION_REASON', variantKey: 'bar', variantAttachment: '{"x":1}',
  });
});

t.test('#5 first distribution 0% is skipped: 0 boz / 100 booz → booz', async (t) => {
  const s = snapshot({
    default: {
      segments: [barBaz],
      flags: [variantFlag({ key: 'foo', variants: ['boz', 'booz'], rules: [{ segment: 'bar', distributions: [['boz', 0], ['booz', 100]] }] })],
    },
  });
  const r = evaluateVariant(s, req('foo', '1', ctx));
  t.equal(r.match, true);
  t.equal(r.variantKey, 'booz');
});

t.test('#6 zero distributions interleaved: 0,0,50(3),0,0,50(6) → bounds 500,1000 → "3"', async (t) => {
  const s = snapshot({
    default: {
      segments: [barBaz],
      flags: [
        variantFlag({
          key: 'foo',
          variants: ['1', '2', '3', '4', '5', '6'],
          rules: [{ segment: 'bar', distributions: [['1', 0], ['2', 0], ['3', 50], ['4', 0], ['5', 0], ['6', 50]] }],
        }),
      ],
    },
  });
  const r = evaluateVariant(s, req('foo', '1', ctx));
  t.equal(r.match, true);
  t.equal(r.variantKey, '3');
});

t.test('#7 #8 readonly flag_001 / flag_002: 50/50 on one segment', async (t) => {
  const s = snapshot({
    default: {
      segments: [
        segment('segment_005', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'in_segment', 'eq', 'segment_005']]),
        segment('segment_006', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'in_segment', 'eq', 'segment_006']]),
      ],
      flags: [
        variantFlag({ key: 'flag_001', variants: ['variant_001', 'variant_002'], rules: [{ segment: 'segment_005', distributions: [['variant_001', 50], ['variant_002', 50]] }] }),
        variantFlag({ key: 'flag_002', variants: ['variant_001', 'variant_002'], rules: [{ segment: 'segment_006', distributions: [['variant_001', 50], ['variant_002', 50]] }] }),
      ],
    },
  });
  const r7 = evaluateVariant(s, req('flag_001', 'some-fixed-entity-id', { in_segment: 'segment_005' }));
  t.same([r7.match, r7.variantKey, r7.segmentKeys, r7.reason], [true, 'variant_002', ['segment_005'], 'MATCH_EVALUATION_REASON']);
  const r8 = evaluateVariant(s, req('flag_002', 'some-fixed-entity-id', { in_segment: 'segment_006' }));
  t.same([r8.match, r8.variantKey, r8.segmentKeys], [true, 'variant_001', ['segment_006']]);
});

t.test('#9 AND of two segments, 50/50 → bucket 531 → variant_002', async (t) => {
  const s = snapshot({
    default: {
      segments: [
        segment('segment_001', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'in_segment', 'eq', 'segment_001']]),
        segment('segment_anding', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'anding', 'eq', 'segment']]),
      ],
      flags: [
        variantFlag({
          key: 'flag_variant_and_segments',
          variants: ['variant_001', 'variant_002'],
          rules: [{ segment: { keys: ['segment_001', 'segment_anding'], op: 'AND_SEGMENT_OPERATOR' }, distributions: [['variant_001', 50], ['variant_002', 50]] }],
        }),
      ],
    },
  });
  const r = evaluateVariant(s, req('flag_variant_and_segments', 'some-fixed-entity-id', { in_segment: 'segment_001', anding: 'segment' }));
  t.same([r.match, r.variantKey, r.segmentKeys], [true, 'variant_002', ['segment_001', 'segment_anding']]);
  // Only one of the two: the AND rule is skipped.
  const miss = evaluateVariant(s, req('flag_variant_and_segments', 'some-fixed-entity-id', { in_segment: 'segment_001' }));
  t.same([miss.match, miss.reason, miss.segmentKeys], [false, 'UNKNOWN_EVALUATION_REASON', []]);
});

t.test('#10 entity id matching: ENTITY_ID eq user@flipt.io, 100% → variant_001', async (t) => {
  const s = snapshot({
    default: {
      segments: [segment('segment_entity_id', 'ALL_MATCH_TYPE', [['ENTITY_ID_COMPARISON_TYPE', 'entityId', 'eq', 'user@flipt.io']])],
      flags: [variantFlag({ key: 'flag_using_entity_id', variants: ['variant_001'], rules: [{ segment: 'segment_entity_id', distributions: [['variant_001', 100]] }] })],
    },
  });
  const r = evaluateVariant(s, req('flag_using_entity_id', 'user@flipt.io'));
  t.same([r.match, r.variantKey, r.reason], [true, 'variant_001', 'MATCH_EVALUATION_REASON']);
  t.equal(evaluateVariant(s, req('flag_using_entity_id', 'other@flipt.io')).match, false);
});

t.test('#10a #10b zero-constraint segment (ALL and ANY): foo10 → boz, foo01 → moz', async (t) => {
  for (const matchType of ['ALL_MATCH_TYPE', 'ANY_MATCH_TYPE'] as const) {
    const s = snapshot({
      default: {
        segments: [segment('bar', matchType)],
        flags: [variantFlag({ key: 'foo', variants: ['boz', 'moz'], rules: [{ segment: 'bar', distributions: [['boz', 50], ['moz', 50]] }] })],
      },
    });
    t.equal(evaluateVariant(s, req('foo', '10')).variantKey, 'boz', matchType);
    t.equal(evaluateVariant(s, req('foo', '01')).variantKey, 'moz', matchType);
  }
});

t.test('#11 #12 #13 thresholds on test-entity/test-flag (n = 65)', async (t) => {
  const s = snapshot({
    default: {
      flags: [
        booleanFlag({ key: 'test-flag', enabled: true, rollouts: [{ threshold: 70, value: false }] }),
        booleanFlag({ key: 'five', enabled: true, rollouts: [] }),
      ],
    },
  });
  t.same(evaluateBoolean(s, req('test-flag', 'test-entity')), {
    flagKey: 'test-flag', enabled: false, reason: 'MATCH_EVALUATION_REASON', segmentKeys: [],
  });
  const s12 = snapshot({ default: { flags: [booleanFlag({ key: 'test-flag', enabled: true, rollouts: [{ threshold: 5, value: false }] })] } });
  t.same(evaluateBoolean(s12, req('test-flag', 'test-entity')), {
    flagKey: 'test-flag', enabled: true, reason: 'DEFAULT_EVALUATION_REASON', segmentKeys: [],
  });
  const s13 = snapshot({ default: { flags: [booleanFlag({ key: 'test-flag', enabled: false, rollouts: [{ threshold: 80, value: true }] })] } });
  const [item] = evaluateBatch(s13, [req('test-flag', 'test-entity')]);
  t.same(item, {
    type: 'BOOLEAN_EVALUATION_RESPONSE_TYPE',
    boolean: { flagKey: 'test-flag', enabled: true, reason: 'MATCH_EVALUATION_REASON', segmentKeys: [] },
  });
});

t.test('#14 #15 readonly flag_boolean: disabled flag, 4 non-matching segment rollouts, then 50% → true', async (t) => {
  const segs = ['segment_001', 'segment_002', 'segment_003', 'segment_004'].map((k) =>
    segment(k, 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'in_segment', 'eq', k]]),
  );
  const s = snapshot({
    default: {
      segments: segs,
      flags: [
        booleanFlag({
          key: 'flag_boolean',
          enabled: false,
          rollouts: [
            { segment: 'segment_001', value: true },
            { segment: 'segment_002', value: true },
            { segment: 'segment_003', value: true },
            { segment: 'segment_004', value: true },
            { threshold: 50, value: true },
          ],
        }),
      ],
    },
  });
  t.same(evaluateBoolean(s, req('flag_boolean', 'fixed')), {
    flagKey: 'flag_boolean', enabled: true, reason: 'MATCH_EVALUATION_REASON', segmentKeys: [],
  }, '#14 n=9 < 50');
  t.same(evaluateBoolean(s, req('flag_boolean', 'hello')), {
    flagKey: 'flag_boolean', enabled: false, reason: 'DEFAULT_EVALUATION_REASON', segmentKeys: [],
  }, '#15 n=96 falls through to flag.enabled');
});

t.test('#16 #17 api boolean_disabled: final threshold 50 value false', async (t) => {
  const s = snapshot({ default: { flags: [booleanFlag({ key: 'boolean_disabled', enabled: false, rollouts: [{ threshold: 50, value: false }] })] } });
  t.same(evaluateBoolean(s, req('boolean_disabled', 'beover50')), {
    flagKey: 'boolean_disabled', enabled: false, reason: 'DEFAULT_EVALUATION_REASON', segmentKeys: [],
  }, '#16 n=99');
  t.same(evaluateBoolean(s, req('boolean_disabled', 'fixed')), {
    flagKey: 'boolean_disabled', enabled: false, reason: 'MATCH_EVALUATION_REASON', segmentKeys: [],
  }, '#17 n=38');
});
