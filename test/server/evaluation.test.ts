import t from 'tap';
import { post, rawRequest, startTestServer } from './support.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('evaluation API', async (t) => {
  const { url, store } = await startTestServer(t);
  const ev = `${url}/evaluate/v1`;

  t.test('variant: match, shape, requestId echoed', async (t) => {
    const r = await post(`${ev}/variant`, {
      namespaceKey: 'default',
      flagKey: 'color',
      entityId: 'user-1',
      context: { plan: 'beta' },
      requestId: 'req-42',
    });
    t.equal(r.status, 200);
    t.same(Object.keys(r.body), [
      'match', 'segmentKeys', 'reason', 'variantKey', 'variantAttachment', 'requestId', 'requestDurationMillis', 'timestamp', 'flagKey',
    ]);
    t.match(r.body, {
      match: true,
      segmentKeys: ['beta-users'],
      reason: 'MATCH_EVALUATION_REASON',
      variantKey: 'red',
      variantAttachment: 'null',
      requestId: 'req-42',
      flagKey: 'color',
    });
    t.equal(typeof r.body.requestDurationMillis, 'number');
    t.ok(r.body.requestDurationMillis >= 0);
    t.match(r.body.timestamp, RFC3339);
    t.equal(r.headers.get('x-vexil-revision'), store.get()!.revision);
  });

  t.test('variant: no rule matches → default variant, generated requestId', async (t) => {
    const r = await post(`${ev}/variant`, { namespaceKey: 'default', flagKey: 'color', entityId: 'user-1', context: {} });
    t.equal(r.status, 200);
    t.match(r.body, { match: false, reason: 'DEFAULT_EVALUATION_REASON', variantKey: 'blue', variantAttachment: '{"b":"x","size":2}', segmentKeys: [] });
    t.match(r.body.requestId, UUID);
  });

  t.test('variant: snake_case fields, no content type, no namespace, no context', async (t) => {
    const r = await rawRequest(url, {
      method: 'POST',
      path: '/evaluate/v1/variant',
      body: JSON.stringify({ flag_key: 'color', entity_id: 'u', request_id: 'snake' }),
    });
    t.equal(r.status, 200);
    const body = JSON.parse(r.text);
    t.equal(body.flagKey, 'color');
    t.equal(body.requestId, 'snake');
    t.equal(body.reason, 'DEFAULT_EVALUATION_REASON');
  });

  t.test('variant: namespaced alias', async (t) => {
    const r = await post(`${ev}/namespaces/production/variant`, { flagKey: 'color', entityId: 'u', context: {} });
    t.equal(r.status, 200);
    t.equal(r.body.flagKey, 'color');
    const same = await post(`${ev}/namespaces/production/variant`, { namespaceKey: 'production', flagKey: 'color', entityId: 'u' });
    t.equal(same.status, 200);
    const clash = await post(`${ev}/namespaces/production/variant`, { namespaceKey: 'default', flagKey: 'color', entityId: 'u' });
    t.equal(clash.status, 400);
    t.match(clash.body.message, /^invalid field namespaceKey: /);
  });

  t.test('variant: errors', async (t) => {
    const nf = await post(`${ev}/variant`, { namespaceKey: 'default', flagKey: 'nope', entityId: 'u' });
    t.equal(nf.status, 404);
    t.same(nf.body, { code: 5, message: 'flag "default/nope" not found', details: [] });
    const ns = await post(`${ev}/variant`, { namespaceKey: 'nope', flagKey: 'color', entityId: 'u' });
    t.equal(ns.status, 404);
    t.same(ns.body, { code: 5, message: 'namespace "nope" not found', details: [] });
    const wrongType = await post(`${ev}/variant`, { flagKey: 'new-checkout', entityId: 'u' });
    t.equal(wrongType.status, 400);
    t.same(wrongType.body, { code: 3, message: 'flag type BOOLEAN_FLAG_TYPE invalid', details: [] });
    const emptyKey = await post(`${ev}/variant`, { flagKey: '', entityId: '' });
    t.equal(emptyKey.status, 404, 'empty flagKey/entityId are accepted, as in Flipt');
    t.match(emptyKey.body.message, /^flag "default\/?" not found$/);
  });

  t.test('boolean', async (t) => {
    const r = await post(`${ev}/boolean`, { namespaceKey: 'default', flagKey: 'new-checkout', entityId: 'u', context: { plan: 'beta' }, requestId: 'b1' });
    t.equal(r.status, 200);
    t.same(Object.keys(r.body), ['enabled', 'reason', 'requestId', 'requestDurationMillis', 'timestamp', 'flagKey', 'segmentKeys']);
    t.match(r.body, { enabled: true, reason: 'MATCH_EVALUATION_REASON', requestId: 'b1', flagKey: 'new-checkout' });
    t.match(r.body.timestamp, RFC3339);
    const other = await post(`${ev}/boolean`, { flagKey: 'new-checkout', entityId: 'someone', context: { plan: 'free' } });
    t.equal(other.status, 200);
    t.ok(
      (other.body.enabled === true && other.body.reason === 'MATCH_EVALUATION_REASON') ||
        (other.body.enabled === false && other.body.reason === 'DEFAULT_EVALUATION_REASON'),
      'threshold rollout or the flag default',
    );
    const wrongType = await post(`${ev}/boolean`, { flagKey: 'color', entityId: 'u' });
    t.same(wrongType.body, { code: 3, message: 'flag type VARIANT_FLAG_TYPE invalid', details: [] });
  });

  t.test('batch', async (t) => {
    const r = await post(`${ev}/batch`, {
      requestId: 'batch-1',
      requests: [
        { namespaceKey: 'default', flagKey: 'color', entityId: 'u', context: { plan: 'beta' }, requestId: 'inner-1' },
        { namespaceKey: 'default', flagKey: 'new-checkout', entityId: 'u', context: { plan: 'beta' } },
        { namespaceKey: 'default', flagKey: 'missing', entityId: 'u' },
        { namespaceKey: 'nowhere', flagKey: 'color', entityId: 'u' },
      ],
    });
    t.equal(r.status, 200);
    t.same(Object.keys(r.body), ['requestId', 'responses', 'requestDurationMillis']);
    t.equal(r.body.requestId, 'batch-1');
    const [v, b, e1, e2] = r.body.responses;
    t.same(Object.keys(v), ['type', 'variantResponse']);
    t.equal(v.type, 'VARIANT_EVALUATION_RESPONSE_TYPE');
    t.match(v.variantResponse, { variantKey: 'red', requestId: 'inner-1', match: true });
    t.equal(b.type, 'BOOLEAN_EVALUATION_RESPONSE_TYPE');
    t.match(b.booleanResponse, { enabled: true, requestId: '' });
    t.equal(v.variantResponse.timestamp, b.booleanResponse.timestamp, 'items share the batch timestamp');
    t.equal(v.variantResponse.requestDurationMillis, r.body.requestDurationMillis);
    t.same(e1, {
      type: 'ERROR_EVALUATION_RESPONSE_TYPE',
      errorResponse: { flagKey: 'missing', namespaceKey: 'default', reason: 'NOT_FOUND_ERROR_EVALUATION_REASON' },
    });
    t.same(e2.errorResponse, { flagKey: 'color', namespaceKey: 'nowhere', reason: 'NOT_FOUND_ERROR_EVALUATION_REASON' });

    const generated = await post(`${ev}/batch`, { requests: [] });
    t.equal(generated.status, 200);
    t.same(generated.body.responses, []);
    t.match(generated.body.requestId, UUID);
  });

  t.test('reference', async (t) => {
    const def = store.defaultReference;
    const ok = await post(`${ev}/variant`, { flagKey: 'color', entityId: 'u', reference: def });
    t.equal(ok.status, 200);
    const unknown = await post(`${ev}/variant`, { flagKey: 'color', entityId: 'u', reference: 'feature-x' });
    t.equal(unknown.status, 404);
    t.same(unknown.body, { code: 5, message: 'reference "feature-x" not found', details: [] });
    const batch = await post(`${ev}/batch`, { reference: 'feature-x', requests: [{ flagKey: 'color', entityId: 'u' }] });
    t.equal(batch.status, 404);
    const innerOnly = await post(`${ev}/batch`, { requests: [{ flagKey: 'color', entityId: 'u', reference: 'feature-x' }] });
    t.equal(innerOnly.status, 404, 'a reference named only by the items applies to the batch');
    const mixed = await post(`${ev}/batch`, {
      reference: def,
      requests: [{ flagKey: 'color', entityId: 'u', reference: 'other' }],
    });
    t.equal(mixed.status, 400);
    t.match(mixed.body.message, /^invalid field requests\[0\]\.reference: /);
  });
});
