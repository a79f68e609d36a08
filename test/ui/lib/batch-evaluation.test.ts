/** "What does this entity get": the batch body and its answer as rows (src/ui/lib/batch-evaluation.ts). */
import t from 'tap';
import { MAX_BODY_BYTES } from '../../../src/http/limits.js';
import { MAX_BODY_BYTES as UI_MAX_BODY_BYTES, batchBody, batchBodyProblem, entityRows, reasonWords, type BatchAnswer } from '../../../src/ui/lib/batch-evaluation.js';

t.test('one request per flag, the reference once for the batch', async (t) => {
  t.same(batchBody('default', ['a', 'b'], 'u1', { plan: 'pro' }, 'feature'), {
    requests: [
      { namespaceKey: 'default', flagKey: 'a', entityId: 'u1', context: { plan: 'pro' } },
      { namespaceKey: 'default', flagKey: 'b', entityId: 'u1', context: { plan: 'pro' } },
    ],
    reference: 'feature',
  });
  t.same(batchBody('ns', [], 'u1', {}), { requests: [] }, 'no reference: the server default');
});

t.test('a body over the server limit is refused before sending', async (t) => {
  t.equal(UI_MAX_BODY_BYTES, MAX_BODY_BYTES, "the UI's copy of the server's limit");
  t.equal(batchBodyProblem('{}', 1), undefined);
  t.equal(batchBodyProblem('x'.repeat(MAX_BODY_BYTES), 1), undefined);
  t.match(batchBodyProblem('é'.repeat(MAX_BODY_BYTES / 2 + 1), 3000), /^The batch for 3000 flags with this context is 1\.0 MiB, above the server's request limit of 1\.0 MiB/, 'counted in UTF-8 bytes');
});

t.test('rows in the order asked: variant, boolean, error', async (t) => {
  const common = { requestId: '', requestDurationMillis: 0.1, timestamp: '2026-11-28T00:00:00Z' };
  const answer: BatchAnswer = {
    requestId: 'r',
    requestDurationMillis: 0.2,
    responses: [
      { type: 'VARIANT_EVALUATION_RESPONSE_TYPE', variantResponse: { ...common, flagKey: 'pay', match: true, segmentKeys: ['eu', 'beta'], reason: 'MATCH_EVALUATION_REASON', variantKey: 'adyen', variantAttachment: '{"a":1}' } },
      { type: 'VARIANT_EVALUATION_RESPONSE_TYPE', variantResponse: { ...common, flagKey: 'off', match: false, segmentKeys: [], reason: 'FLAG_DISABLED_EVALUATION_REASON', variantKey: '', variantAttachment: '' } },
      { type: 'BOOLEAN_EVALUATION_RESPONSE_TYPE', booleanResponse: { ...common, flagKey: 'dark', enabled: false, segmentKeys: [], reason: 'DEFAULT_EVALUATION_REASON' } },
      { type: 'ERROR_EVALUATION_RESPONSE_TYPE', errorResponse: { flagKey: 'gone', namespaceKey: 'default', reason: 'NOT_FOUND_ERROR_EVALUATION_REASON' } },
    ],
  };
  t.same(entityRows(['pay', 'off', 'dark', 'gone', 'extra'], answer), [
    { flagKey: 'pay', type: 'variant', served: 'adyen', reason: 'match', segments: 'eu, beta', attachment: '{"a":1}' },
    { flagKey: 'off', type: 'variant', served: '(no variant)', reason: 'flag disabled', segments: '', attachment: '' },
    { flagKey: 'dark', type: 'boolean', served: 'false', reason: 'default', segments: '', attachment: '' },
    { flagKey: 'gone', type: 'error', served: 'error', reason: 'flag not found', segments: '', attachment: '' },
    { flagKey: 'extra', type: 'error', served: 'error', reason: 'no answer', segments: '', attachment: '' },
  ]);
  t.equal(reasonWords('SOMETHING_NEW'), 'SOMETHING_NEW', 'an unlisted reason as the API names it');
});
