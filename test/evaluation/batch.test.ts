/** Batch evaluation (§2.8) and the "unknown constraint type" error path. */
import t from 'tap';
import { evaluateBatch, evaluateVariant } from '../../src/evaluation/index.js';
import { goQuote } from '../../src/evaluation/lookup.js';
import { booleanFlag, req, segment, snapshot, variantFlag } from './fixture.js';

const s = snapshot({
  default: {
    segments: [segment('everyone', 'ALL_MATCH_TYPE')],
    flags: [
      variantFlag({ key: 'v', variants: ['a'], rules: [{ segment: 'everyone', distributions: [['a', 100]] }] }),
      booleanFlag({ key: 'b', enabled: true }),
    ],
  },
  team: { flags: [booleanFlag({ key: 'b', rollouts: [{ threshold: 100, value: true }] }, 'team')] },
});

t.test('dispatches by flag type, keeps request order, turns not-found into error items', async (t) => {
  const out = evaluateBatch(s, [
    req('b', 'x'),
    req('missing', 'x'),
    req('v', 'x'),
    req('b', 'x', {}, 'nope'),
    req('b', 'x', {}, 'team'),
    req('', 'x', {}, ''),
    req('missing', 'x', {}, 'default'),
  ]);
  t.same(out, [
    { type: 'BOOLEAN_EVALUATION_RESPONSE_TYPE', boolean: { flagKey: 'b', enabled: true, reason: 'DEFAULT_EVALUATION_REASON', segmentKeys: [] } },
    { type: 'ERROR_EVALUATION_RESPONSE_TYPE', error: { flagKey: 'missing', namespaceKey: '', reason: 'NOT_FOUND_ERROR_EVALUATION_REASON' } },
    {
      type: 'VARIANT_EVALUATION_RESPONSE_TYPE',
      variant: { flagKey: 'v', match: true, segmentKeys: ['everyone'], reason: 'MATCH_EVALUATION_REASON', variantKey: 'a', variantAttachment: 'null' },
    },
    // A missing namespace is a not-found item too, carrying the namespace as sent.
    { type: 'ERROR_EVALUATION_RESPONSE_TYPE', error: { flagKey: 'b', namespaceKey: 'nope', reason: 'NOT_FOUND_ERROR_EVALUATION_REASON' } },
    { type: 'BOOLEAN_EVALUATION_RESPONSE_TYPE', boolean: { flagKey: 'b', enabled: true, reason: 'MATCH_EVALUATION_REASON', segmentKeys: [] } },
    { type: 'ERROR_EVALUATION_RESPONSE_TYPE', error: { flagKey: '', namespaceKey: '', reason: 'NOT_FOUND_ERROR_EVALUATION_REASON' } },
    { type: 'ERROR_EVALUATION_RESPONSE_TYPE', error: { flagKey: 'missing', namespaceKey: 'default', reason: 'NOT_FOUND_ERROR_EVALUATION_REASON' } },
  ]);
  t.same(evaluateBatch(s, []), []);
});

t.test('an unknown constraint type fails the request (and aborts a batch) when its rule is reached', async (t) => {
  const broken = snapshot({
    default: {
      segments: [segment('odd', 'ANY_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'p', 'eq', 'x'], ['UNKNOWN_COMPARISON_TYPE', 'p', 'eq', 'x']]), segment('everyone', 'ALL_MATCH_TYPE')],
      flags: [
        variantFlag({ key: 'late', variants: ['a'], rules: [{ segment: 'everyone', distributions: [['a', 100]] }, { segment: 'odd' }] }),
        variantFlag({ key: 'early', variants: ['a'], rules: [{ segment: { keys: ['everyone', 'odd'] }, distributions: [['a', 100]] }] }),
        booleanFlag({ key: 'bool', rollouts: [{ segment: 'odd', value: true }] }),
      ],
    },
  });
  // Never reached: an earlier rule decides.
  t.equal(evaluateVariant(broken, req('late', 'x')).variantKey, 'a');
  // Reached: Flipt evaluates every segment of the rule, so even a first segment that matched does not save it.
  t.throws(() => evaluateVariant(broken, req('early', 'x', { p: 'x' })), { code: 3, message: 'unknown constraint type' });
  t.throws(() => evaluateBatch(broken, [req('late', 'x'), req('missing', 'x'), req('bool', 'x')]), { code: 3, message: 'unknown constraint type' });
});

t.test('goQuote renders names like Go %q', async (t) => {
  t.equal(goQuote('default'), '"default"');
  t.equal(goQuote(''), '""');
  t.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
  t.equal(goQuote('a\tb\n\x00\x7f'), '"a\\tb\\n\\x00\\x7f"');
  t.equal(goQuote('café 日本'), '"café 日本"');
  t.equal(goQuote('\u0085\u200b'), '"\\u0085\\u200b"');
  t.equal(goQuote('\u{e0001}'), '"\\U000e0001"');
  t.equal(goQuote('x\ud800'), '"x\ufffd"');
});
