/**
 * The evaluation responses written from cached fragments (server/evaluation/evaluation-json.ts
 * variantJson, booleanJson) are exactly JSON.stringify of the response objects, for every
 * result shape: matched or not, any segment keys, attachments with quotes, controls, unicode and
 * lone surrogates, a request flag key that differs from the result's, frozen (cached) results
 * read twice and results made per call.
 */
import fc from 'fast-check';
import t from 'tap';
import type { BooleanResult, EvaluationReason, VariantResult } from '../../../src/model/evaluation-result.js';
import { booleanResult, variantResult } from '../../../src/evaluation/results.js';
import { booleanBody, variantBody, type Timing } from '../../../src/server/evaluation/evaluation-bodies.js';
import { booleanJson, variantJson } from '../../../src/server/evaluation/evaluation-json.js';

const REASONS: EvaluationReason[] = ['UNKNOWN_EVALUATION_REASON', 'FLAG_DISABLED_EVALUATION_REASON', 'MATCH_EVALUATION_REASON', 'DEFAULT_EVALUATION_REASON'];
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('', 'null', '{"a":"b\\"c","n":[1,2]}', '\u0000\u001f', '\u2028\u2029', '\ud800', '\udfff', 'caf\u00e9 \ud83d\ude00', '"\\'),
);
const timing = fc.record({
  // Whole nanoseconds as measured; fractional and huge values take decimalText's general road.
  durationNanos: fc.oneof(
    fc.integer({ min: 0, max: 2_000_000_000 }),
    fc.maxSafeInteger(),
    fc.double({ min: 0, max: 1e12, noNaN: true }),
    fc.constantFrom(0, 1, 1234, 1_793_622, 12_000_000, 999_999_999_999_999, 1e15),
  ),
  timestamp: fc.constantFrom('2026-11-26T05:17:24.849Z', '1970-01-01T00:00:00.000Z'),
});
const variant = fc
  .tuple(text, fc.boolean(), fc.array(text, { maxLength: 4 }), fc.constantFrom(...REASONS), text, text, fc.boolean())
  .map(([flagKey, match, keys, reason, variantKey, attachment, frozen]) => {
    const r = variantResult(flagKey, match, frozen ? Object.freeze(keys) : keys, reason, variantKey, attachment);
    return frozen ? Object.freeze(r) : r;
  });
const boolean = fc
  .tuple(text, fc.boolean(), fc.constantFrom(...REASONS), fc.array(text, { maxLength: 4 }), fc.boolean())
  .map(([flagKey, enabled, reason, keys, frozen]) => {
    const r = booleanResult(flagKey, enabled, reason, frozen ? Object.freeze(keys) : keys);
    return frozen ? Object.freeze(r) : r;
  });

t.test('variant responses: the text of JSON.stringify, first and cached reads alike', async (t) => {
  fc.assert(
    fc.property(variant, text, timing, fc.option(text, { nil: undefined }), (r: VariantResult, id: string, tm: Timing, otherKey) => {
      const flagKey = otherKey ?? r.flagKey;
      const expected = JSON.stringify(variantBody(r, id, tm, flagKey));
      return variantJson(r, id, tm, flagKey) === expected && variantJson(r, id, tm, flagKey) === expected;
    }),
    { numRuns: 3000, seed: 20261126 },
  );
  t.pass('3000 random variant results');
});

t.test('boolean responses: the text of JSON.stringify, first and cached reads alike', async (t) => {
  fc.assert(
    fc.property(boolean, text, timing, (r: BooleanResult, id: string, tm: Timing) => {
      const expected = JSON.stringify(booleanBody(r, id, tm));
      return booleanJson(r, id, tm) === expected && booleanJson(r, id, tm) === expected;
    }),
    { numRuns: 3000, seed: 20261126 },
  );
  t.pass('3000 random boolean results');
});

t.test('a cached result serves different request ids, durations and flag keys', async (t) => {
  const r = Object.freeze(variantResult('f', true, Object.freeze(['s1', 's2']), 'MATCH_EVALUATION_REASON', 'v', '{"x":"\u00e9"}'));
  const a = { durationNanos: 500_000, timestamp: '2026-01-01T00:00:00.000Z' };
  const b = { durationNanos: 2_000_000, timestamp: '2026-01-01T00:00:01.000Z' };
  t.equal(variantJson(r, 'one', a, 'f'), JSON.stringify(variantBody(r, 'one', a, 'f')));
  t.equal(variantJson(r, 'two', b, 'f'), JSON.stringify(variantBody(r, 'two', b, 'f')));
  t.equal(variantJson(r, 'two', b, 'other'), JSON.stringify(variantBody(r, 'two', b, 'other')));
  t.equal(variantJson(r, 'ignored', a, 'f', '"given"'), JSON.stringify(variantBody(r, 'given', a, 'f')), 'an id given as JSON text');
  t.same(Object.keys(JSON.parse(variantJson(r, 'x', a, 'f')) as object), ['match', 'segmentKeys', 'reason', 'variantKey', 'variantAttachment', 'requestId', 'requestDurationMillis', 'timestamp', 'flagKey']);
});
