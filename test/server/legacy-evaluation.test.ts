/**
 * Flipt's legacy evaluation API through the real server (flipt-semantics.md §2.9), field by field:
 * `/api/v1/evaluate`, `/api/v1/batch-evaluate` and their namespaced forms. Flipt's server SDK
 * (@flipt-io/flipt 1.5.0) calls none of these paths, so plain HTTP stands in for the older SDKs.
 * Every answer's evaluation is checked against `/evaluate/v1/variant` for the same request: one
 * evaluation core serves both.
 */
import t, { type Test } from 'tap';
import { READ_ONLY_MESSAGE } from '../../src/server/management/write-routes.js';
import { call, get, isErrorBody, post, startTestServer, type JsonResponse } from './support.js';

type Json = Record<string, unknown>;

const FIELDS = [
  'requestId',
  'entityId',
  'requestContext',
  'match',
  'flagKey',
  'segmentKey',
  'timestamp',
  'value',
  'requestDurationMillis',
  'attachment',
  'reason',
  'namespaceKey',
  'segmentKeys',
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

async function variantOf(url: string, req: Json): Promise<Json> {
  const res = await post(`${url}/evaluate/v1/variant`, req);
  return res.body as Json;
}

/** The legacy answer's evaluation agrees with /evaluate/v1's for the same request. */
async function agrees(t: Test, url: string, answer: Json, req: Json): Promise<void> {
  const v = await variantOf(url, req);
  t.same(
    { match: answer.match, value: answer.value, attachment: answer.attachment, reason: answer.reason, segmentKeys: answer.segmentKeys, segmentKey: answer.segmentKey },
    { match: v.match, value: v.variantKey, attachment: v.variantAttachment, reason: v.reason, segmentKeys: v.segmentKeys, segmentKey: (v.segmentKeys as string[])[0] ?? '' },
    `agrees with /evaluate/v1/variant for ${JSON.stringify(req)}`,
  );
}

function expectError(t: Test, res: JsonResponse, status: number, message: string): void {
  t.equal(res.status, status, message);
  t.ok(isErrorBody(res.body), 'the catalogue error body');
  t.equal((res.body as Json).message, message);
}

t.test('POST /api/v1/evaluate: every field, in order', async (t) => {
  const s = await startTestServer(t);
  const req = { requestId: 'r-1', flagKey: 'color', entityId: 'e1', context: { plan: 'beta' } };
  const res = await post(`${s.url}/api/v1/evaluate`, req);
  t.equal(res.status, 200);
  const body = res.body as Json;
  t.same(Object.keys(body), FIELDS, 'the fields of EvaluationResponse, in its order');
  t.equal(body.requestId, 'r-1', 'requestId echoed');
  t.equal(body.entityId, 'e1');
  t.same(body.requestContext, { plan: 'beta' }, 'the context as sent');
  t.equal(body.match, true);
  t.equal(body.flagKey, 'color');
  t.equal(body.segmentKey, 'beta-users', 'the first matched segment');
  t.match(body.timestamp, RFC3339);
  t.equal(body.value, 'red', 'the variant key');
  t.type(body.requestDurationMillis, 'number');
  t.equal(body.reason, 'MATCH_EVALUATION_REASON');
  t.equal(body.namespaceKey, '', 'the namespace as sent (none)');
  t.same(body.segmentKeys, ['beta-users']);
  await agrees(t, s.url, body, req);

  const generated = await post(`${s.url}/api/v1/evaluate`, { flagKey: 'color', entityId: 'e2' });
  t.match((generated.body as Json).requestId, UUID, 'no requestId: a fresh UUID');
  t.same((generated.body as Json).requestContext, {}, 'no context: {}');
  await agrees(t, s.url, generated.body as Json, { flagKey: 'color', entityId: 'e2' });

  // Two segments (AND) and a 50/50 split: segmentKey is the first, segmentKeys all of them.
  const two = { flagKey: 'color', entityId: 'e3', context: { email: 'a@example.com', age: '40', employee: 'true', joined: '2020-01-01' } };
  const both = (await post(`${s.url}/api/v1/evaluate`, two)).body as Json;
  t.same(both.segmentKeys, ['everyone', 'internal']);
  t.equal(both.segmentKey, 'everyone');
  await agrees(t, s.url, both, two);
  const disabled = (await post(`${s.url}/api/v1/evaluate`, { flagKey: 'plain', entityId: 'e' })).body as Json;
  t.match(disabled, { match: false, value: '', reason: 'FLAG_DISABLED_EVALUATION_REASON', segmentKey: '', segmentKeys: [] });
  await agrees(t, s.url, disabled, { flagKey: 'plain', entityId: 'e' });
  const snake = await post(`${s.url}/api/v1/evaluate`, { flag_key: 'color', entity_id: 'e1', request_id: 'r-2', namespace_key: 'default' });
  t.match(snake.body, { requestId: 'r-2', flagKey: 'color', entityId: 'e1', namespaceKey: 'default' }, 'snake_case names');
});

t.test('a null context value is "" (Flipt since 1.5.1: flipt-io/flipt#664, #665)', async (t) => {
  const s = await startTestServer(t);
  // The request of flipt-io/flipt#664, which Flipt 1.5.0 refused with 400 and 1.5.1 answers.
  const req = { flag_key: 'color', entity_id: 'ccf4c0a9-fc44-4478-a790-a01762efff01', context: { cohort: null, plan: 'beta' } };
  const res = await post(`${s.url}/api/v1/evaluate`, req);
  t.equal(res.status, 200);
  const body = res.body as Json;
  t.same(body.requestContext, { cohort: '', plan: 'beta' }, 'echoed as the string map Flipt decoded: cohort is ""');
  const asEmpty = (await post(`${s.url}/api/v1/evaluate`, { ...req, context: { cohort: '', plan: 'beta' } })).body as Json;
  t.same({ ...body, requestId: '', timestamp: '', requestDurationMillis: 0 }, { ...asEmpty, requestId: '', timestamp: '', requestDurationMillis: 0 }, 'evaluated as ""');
  await agrees(t, s.url, body, { flagKey: 'color', entityId: req.entity_id, context: { cohort: null, plan: 'beta' } });
  const batch = await post(`${s.url}/api/v1/batch-evaluate`, { requests: [req, { ...req, context: { cohort: null } }] });
  t.equal(batch.status, 200, 'batch items too');
  t.same((batch.body.responses as Json[]).map((r) => r.requestContext), [{ cohort: '', plan: 'beta' }, { cohort: '' }]);
  expectError(t, await post(`${s.url}/api/v1/evaluate`, { ...req, context: { cohort: 0 } }), 400, 'invalid field context.cohort: must be a string');
});

t.test('namespaces: the body, or the path; a path and a body disagreeing is refused', async (t) => {
  const s = await startTestServer(t);
  const inBody = (await post(`${s.url}/api/v1/evaluate`, { namespaceKey: 'production', flagKey: 'color', entityId: 'e1' })).body as Json;
  t.equal(inBody.namespaceKey, 'production');
  await agrees(t, s.url, inBody, { namespaceKey: 'production', flagKey: 'color', entityId: 'e1' });
  const inPath = (await post(`${s.url}/api/v1/namespaces/production/evaluate`, { flagKey: 'color', entityId: 'e1' })).body as Json;
  t.same({ ...inPath, requestId: '', timestamp: '', requestDurationMillis: 0 }, { ...inBody, requestId: '', timestamp: '', requestDurationMillis: 0 }, 'the path names the same namespace');
  const same = await post(`${s.url}/api/v1/namespaces/production/evaluate`, { namespaceKey: 'production', flagKey: 'color', entityId: 'e1' });
  t.equal(same.status, 200, 'the body may repeat the path');
  expectError(
    t,
    await post(`${s.url}/api/v1/namespaces/production/evaluate`, { namespaceKey: 'default', flagKey: 'color', entityId: 'e1' }),
    400,
    'invalid field namespaceKey: "default" does not match the path\'s namespace "production"',
  );
});

t.test('errors are HTTP errors: not found, boolean flag, empty fields, reference', async (t) => {
  const s = await startTestServer(t);
  const ev = (body: unknown) => post(`${s.url}/api/v1/evaluate`, body);
  expectError(t, await ev({ flagKey: 'nope', entityId: 'e' }), 404, 'flag "default/nope" not found');
  expectError(t, await ev({ namespaceKey: 'nope', flagKey: 'color', entityId: 'e' }), 404, 'namespace "nope" not found');
  expectError(t, await post(`${s.url}/api/v1/namespaces/nope/evaluate`, { flagKey: 'color', entityId: 'e' }), 404, 'namespace "nope" not found');
  expectError(t, await ev({ flagKey: 'new-checkout', entityId: 'e' }), 400, 'flag type BOOLEAN_FLAG_TYPE invalid');
  expectError(t, await ev({ entityId: 'e' }), 400, 'invalid field flagKey: must not be empty');
  expectError(t, await ev({ flagKey: '', entityId: 'e' }), 400, 'invalid field flagKey: must not be empty');
  expectError(t, await ev({ flagKey: 'color' }), 400, 'invalid field entityId: must not be empty');
  expectError(t, await ev({ flagKey: 'color', entityId: '' }), 400, 'invalid field entityId: must not be empty');
  expectError(t, await ev({ flagKey: 'color', entityId: 'e', context: { n: 1 } }), 400, 'invalid field context.n: must be a string');
  expectError(
    t,
    await ev({ flagKey: 'color', entityId: 'e', reference: 'main' }),
    400,
    'invalid field reference: the legacy evaluation API reads the default reference; use /evaluate/v1 to name a reference',
  );
  expectError(t, await ev([]), 400, 'request body must be a JSON object');
  const wrongMethod = await get(`${s.url}/api/v1/evaluate`);
  t.equal(wrongMethod.status, 405);
  t.equal(wrongMethod.headers.get('allow'), 'POST');
});

t.test('POST /api/v1/batch-evaluate: shapes, namespaces, excludeNotFound', async (t) => {
  const s = await startTestServer(t);
  const requests = [
    { requestId: 'inner-1', flagKey: 'color', entityId: 'e1', context: { plan: 'beta' } },
    { flagKey: 'color', entityId: 'e2', namespaceKey: 'default' },
    { flagKey: 'plain', entityId: 'e3' },
  ];
  const res = await post(`${s.url}/api/v1/batch-evaluate`, { requestId: 'batch-1', requests });
  t.equal(res.status, 200);
  const body = res.body as Json;
  t.same(Object.keys(body), ['requestId', 'responses', 'requestDurationMillis']);
  t.equal(body.requestId, 'batch-1');
  t.type(body.requestDurationMillis, 'number');
  const items = body.responses as Json[];
  t.equal(items.length, 3, 'one answer per request, in order');
  for (const [i, item] of items.entries()) {
    t.same(Object.keys(item), FIELDS, `item ${i}: the fields of EvaluationResponse`);
    t.equal(item.requestId, '', `item ${i}: requestId blanked`);
    t.equal(item.requestDurationMillis, 0, `item ${i}: the batch is timed, not its items`);
    t.equal(item.timestamp, items[0]!.timestamp, `item ${i}: the batch's timestamp`);
    t.equal(item.namespaceKey, 'default', `item ${i}: the batch's namespace`);
    t.equal(item.flagKey, requests[i]!.flagKey);
    t.equal(item.entityId, requests[i]!.entityId);
    await agrees(t, s.url, item, requests[i]!);
  }
  t.match(items[0]!.timestamp, RFC3339);
  t.same(items[0]!.requestContext, { plan: 'beta' });
  t.match((await post(`${s.url}/api/v1/batch-evaluate`, { requests })).body, { requestId: UUID }, 'no requestId: generated');
  t.same((await post(`${s.url}/api/v1/batch-evaluate`, {})).body.responses, [], 'no requests: an empty batch');

  const withMissing = [...requests, { flagKey: 'nope', entityId: 'e4' }];
  expectError(t, await post(`${s.url}/api/v1/batch-evaluate`, { requests: withMissing }), 404, 'flag "default/nope" not found');
  const excluded = await post(`${s.url}/api/v1/batch-evaluate`, { requests: withMissing, excludeNotFound: true });
  t.equal(excluded.status, 200);
  t.same((excluded.body.responses as Json[]).map((r) => r.flagKey), ['color', 'color', 'plain'], 'excludeNotFound: the missing flag left out');
  const snake = await post(`${s.url}/api/v1/batch-evaluate`, { requests: withMissing, exclude_not_found: true });
  t.equal(snake.body.responses.length, 3, 'exclude_not_found');
  const noNamespace = await post(`${s.url}/api/v1/batch-evaluate`, { namespaceKey: 'nope', requests: [requests[0], requests[2]], excludeNotFound: true });
  t.same(noNamespace.body.responses, [], 'a missing namespace is not found too');
  expectError(t, await post(`${s.url}/api/v1/batch-evaluate`, { requests: [{ flagKey: 'new-checkout', entityId: 'e' }], excludeNotFound: true }), 400, 'flag type BOOLEAN_FLAG_TYPE invalid');
  expectError(t, await post(`${s.url}/api/v1/batch-evaluate`, { requests, excludeNotFound: 'yes' }), 400, 'invalid field excludeNotFound: must be a boolean');

  const production = await post(`${s.url}/api/v1/batch-evaluate`, { namespaceKey: 'production', requests: [{ flagKey: 'color', entityId: 'e1' }, { flagKey: 'color', entityId: 'e1', namespaceKey: 'production' }] });
  t.same((production.body.responses as Json[]).map((r) => r.namespaceKey), ['production', 'production']);
  await agrees(t, s.url, production.body.responses[0], { namespaceKey: 'production', flagKey: 'color', entityId: 'e1' });
  const inPath = await post(`${s.url}/api/v1/namespaces/production/batch-evaluate`, { requests: [{ flagKey: 'color', entityId: 'e1' }] });
  t.equal(inPath.body.responses[0].namespaceKey, 'production');
  expectError(
    t,
    await post(`${s.url}/api/v1/batch-evaluate`, { namespaceKey: 'production', requests: [{ flagKey: 'color', entityId: 'e1', namespaceKey: 'default' }] }),
    400,
    'invalid field namespace_key: must be the same for all requests if specified',
  );
  expectError(
    t,
    await post(`${s.url}/api/v1/batch-evaluate`, { requests: [{ flagKey: 'color', entityId: 'e1', namespaceKey: 'production' }] }),
    400,
    'invalid field namespace_key: must be the same for all requests if specified',
  );
  expectError(t, await post(`${s.url}/api/v1/batch-evaluate`, { requests: [{ flagKey: 'color' }] }), 400, 'invalid field requests[0].entityId: must not be empty');
  expectError(t, await post(`${s.url}/api/v1/batch-evaluate`, { requests, reference: 'main' }), 400, 'invalid field reference: the legacy evaluation API reads the default reference; use /evaluate/v1 to name a reference');
});

t.test('the read-only refusal still answers real writes under /api/v1', async (t) => {
  const s = await startTestServer(t);
  for (const [method, path] of [
    ['POST', '/api/v1/flags'],
    ['POST', '/api/v1/namespaces/default/flags'],
    ['POST', '/api/v1/namespaces'],
    ['PUT', '/api/v1/namespaces/default/flags/color'],
  ] as const) {
    const res = await call(`${s.url}${path}`, { method, body: JSON.stringify({ key: 'x', name: 'x' }) });
    t.equal(res.status, 400, `${method} ${path}`);
    t.equal((res.body as Json).message, READ_ONLY_MESSAGE);
  }
});

t.test('legacy evaluations are counted as variant evaluations', async (t) => {
  const s = await startTestServer(t);
  const count = async (labels: string) => {
    const line = (await get(`${s.url}/metrics`)).text.split('\n').find((l) => l.startsWith(`vexil_evaluations_total{${labels}}`));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };
  await post(`${s.url}/api/v1/evaluate`, { flagKey: 'color', entityId: 'e1', context: { plan: 'beta' } });
  await post(`${s.url}/api/v1/batch-evaluate`, { requests: [{ flagKey: 'color', entityId: 'e1', context: { plan: 'beta' } }, { flagKey: 'nope', entityId: 'e' }], excludeNotFound: true });
  t.equal(await count('namespace="default",flag="color",type="variant",reason="MATCH_EVALUATION_REASON"'), 2);
  t.equal(await count('namespace="default",flag="",type="error",reason="NOT_FOUND_ERROR_EVALUATION_REASON"'), 1);
});
