/**
 * OFREP over plain HTTP through the real server (fixture `ofrep`): the configuration, single and
 * bulk evaluation shapes, typed context values against number and boolean constraints (each
 * answer also compared with `/evaluate/v1` given the same values as strings), the namespace
 * headers, the bulk ETag and 304, per-flag failures in bulk, the OFREP error schema, the context
 * limits, and the evaluation counter.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { MAX_BODY_BYTES, MAX_BULK_FLAGS, MAX_CONTEXT_KEYS, MAX_CONTEXT_VALUE_BYTES } from '../../src/http/limits.js';
import { call, get, parseRawResponse, post, rawExchange, startTestServer, type JsonResponse } from './support.js';

const SINGLE = '/ofrep/v1/evaluate/flags/';
const BULK = '/ofrep/v1/evaluate/flags';

type Json = Record<string, unknown>;

async function ofrep(url: string, key: string, context: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return post(`${url}${SINGLE}${key}`, context === undefined ? {} : { context }, headers);
}

async function bulk(url: string, context: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return post(`${url}${BULK}`, { context }, headers);
}

async function variant(url: string, flagKey: string, entityId: string | undefined, context: Record<string, string | null>, namespaceKey = 'default'): Promise<Json> {
  const res = await post(`${url}/evaluate/v1/variant`, { namespaceKey, flagKey, context, ...(entityId !== undefined ? { entityId } : {}) });
  return res.body as Json;
}

/** The OFREP error schema: errorCode and errorDetails, `key` when given, nothing else. */
function isOfrepError(body: unknown, errorCode: string, key?: string): boolean {
  if (body === null || typeof body !== 'object') return false;
  const b = body as Json;
  const fields = Object.keys(b).sort().join(',');
  return b.errorCode === errorCode && typeof b.errorDetails === 'string' && fields === (key === undefined ? 'errorCode,errorDetails' : 'errorCode,errorDetails,key') && (key === undefined || b.key === key);
}

/** The flag-set fields every answer's metadata ends with: the served revision and the namespace. */
function setOf(s: { store: { get(): { revision: string } | undefined } }, flagSetId = 'default'): { version: string; flagSetId: string } {
  return { version: s.store.get()!.revision, flagSetId };
}

async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

t.test('configuration: vexil, polling enabled, string and boolean flags', async (t) => {
  const s = await startTestServer(t, { fixture: 'ofrep' });
  const res = await get(`${s.url}/ofrep/v1/configuration`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  t.same(res.body, {
    name: 'vexil',
    capabilities: {
      cacheInvalidation: { polling: { enabled: true, minPollingIntervalMs: 0 } },
      flagEvaluation: { supportedTypes: ['string', 'boolean'] },
    },
  }, 'the local backend is watched: no minimum polling interval');
});

t.test('single flag: shapes, reasons and metadata', async (t) => {
  const s = await startTestServer(t, { fixture: 'ofrep' });
  const dark = await ofrep(s.url, 'theme', { targetingKey: 'u1', employee: 'true' });
  t.equal(dark.status, 200);
  t.equal(dark.text, JSON.stringify({ key: 'theme', reason: 'TARGETING_MATCH', variant: 'dark', metadata: { segments: 'employees', attachment: '{"contrast":"high"}', ...setOf(s) }, value: 'dark' }), 'field order and values');
  const light = await ofrep(s.url, 'theme', { targetingKey: 'u1', age: '30' });
  t.same(light.body, { key: 'theme', reason: 'TARGETING_MATCH', variant: 'light', metadata: { segments: 'adults', ...setOf(s) }, value: 'light' }, 'a variant without an attachment: no attachment key');
  const none = await ofrep(s.url, 'theme', { targetingKey: 'u1' });
  t.same(none.body, { key: 'theme', reason: 'UNKNOWN', variant: '', metadata: setOf(s), value: '' }, 'no rule matched, no default variant');
  const byDefault = await ofrep(s.url, 'split', { targetingKey: 'u1', nickname: 'x' });
  t.match(byDefault.body, { key: 'split', reason: 'TARGETING_MATCH', metadata: { segments: 'everyone' } });
  const retired = await ofrep(s.url, 'retired', { targetingKey: 'u1' });
  t.same(retired.body, { key: 'retired', reason: 'DISABLED', variant: '', metadata: setOf(s), value: '' });

  const beta = await ofrep(s.url, 'beta', { targetingKey: 'u1', employee: 'true' });
  t.equal(beta.text, JSON.stringify({ key: 'beta', reason: 'TARGETING_MATCH', variant: 'true', metadata: { segments: 'employees', ...setOf(s) }, value: true }), 'boolean flag: a JSON boolean value');
  // A disabled boolean flag falls through to its `enabled` value (Flipt: boolean answers never say disabled).
  const off = await ofrep(s.url, 'killswitch', { targetingKey: 'u1' });
  t.same(off.body, { key: 'killswitch', reason: 'DEFAULT', variant: 'false', metadata: setOf(s), value: false });
  const threshold = await ofrep(s.url, 'beta', { targetingKey: 'u1' });
  t.match(threshold.body, { key: 'beta', metadata: {} });
  t.ok(['TARGETING_MATCH', 'DEFAULT'].includes((threshold.body as Json).reason as string), 'threshold rollout or default');

  t.equal((await ofrep(s.url, 'theme', undefined)).status, 200, 'no context at all: an empty one');
  t.equal((await post(`${s.url}${SINGLE}theme`, '')).status, 200, 'an empty body too');
});

t.test('typed context values: numbers and booleans compare as Flipt constraints read them', async (t) => {
  const s = await startTestServer(t, { fixture: 'ofrep' });
  const cases: Array<[string, Json, Record<string, string>, string, string]> = [
    ['boolean true', { employee: true }, { employee: 'true' }, 'dark', 'employees'],
    ['boolean false', { employee: false, age: 18 }, { employee: 'false', age: '18' }, 'light', 'adults'],
    ['integer', { age: 21 }, { age: '21' }, 'light', 'adults'],
    ['integer below', { age: 17 }, { age: '17' }, '', ''],
    ['fraction', { ratio: 0.1 }, { ratio: '0.1' }, 'tiny', 'precise'],
    ['a sum that is not 0.1', { ratio: 0.1 + 0.2 - 0.2 }, { ratio: String(0.1 + 0.2 - 0.2) }, '', ''],
    ['exponent form', { big: 1e21 }, { big: '1e+21' }, 'huge', 'enormous'],
    ['beyond 2^53', { long: 12345678901234567890 }, { long: '12345678901234567000' }, 'huge', 'enormous'],
    ['negative zero and 18.0', { age: 18.0, ratio: -0 }, { age: '18', ratio: '0' }, 'light', 'adults'],
  ];
  for (const [name, typed, strings, expected, segments] of cases) {
    const res = await ofrep(s.url, 'theme', { targetingKey: 'u1', ...typed });
    t.equal(res.status, 200, name);
    const body = res.body as Json;
    t.equal(body.variant, expected, `${name}: variant`);
    t.same(body.metadata, { ...(segments === '' ? {} : { segments, ...(expected === 'dark' ? { attachment: '{"contrast":"high"}' } : {}) }), ...setOf(s) }, `${name}: matched segments`);
    const reference = await variant(s.url, 'theme', 'u1', strings);
    t.equal(reference.variantKey, body.variant, `${name}: the same as /evaluate/v1 with ${JSON.stringify(strings)}`);
  }
  // The JSON text of a number, not a rounding of ours: 0.1 + 0.2 is 0.30000000000000004.
  t.equal((await ofrep(s.url, 'theme', { ratio: 0.1 + 0.2 })).body.variant, '', '0.30000000000000004 is not 0.1');

  // null = absent: the `empty` constraint on nickname matches, as when it is left out.
  const absent = await ofrep(s.url, 'split', { targetingKey: 'u1' });
  const nulled = await ofrep(s.url, 'split', { targetingKey: 'u1', nickname: null });
  const given = await ofrep(s.url, 'split', { targetingKey: 'u1', nickname: 'x' });
  t.same(nulled.body, absent.body, 'null reads as absent');
  t.equal((nulled.body as Json).metadata && ((nulled.body as Json).metadata as Json).segments, 'unknowns');
  t.equal(((given.body as Json).metadata as Json).segments, 'everyone');
  // ... which evaluates as /evaluate/v1 evaluates a null value (""), so both APIs agree.
  const v1Null = await variant(s.url, 'split', 'u1', { targetingKey: 'u1', nickname: null });
  t.equal(v1Null.variantKey, (nulled.body as Json).variant, '/evaluate/v1 with nickname: null answers the same variant');
  t.same(v1Null.segmentKeys, ['unknowns'], '... through the same segment');

  for (const [name, value] of [['object', { a: 1 }], ['array', [1, 2]], ['nested empty', {}]] as const) {
    const res = await ofrep(s.url, 'theme', { targetingKey: 'u1', plan: value });
    t.equal(res.status, 400, `${name}: refused`);
    t.ok(isOfrepError(res.body, 'INVALID_CONTEXT', 'theme'), `${name}: OFREP error schema`);
    t.equal((res.body as Json).errorDetails, 'invalid field context.plan: must be a string, number, boolean or null', `${name}: names the key`);
    const inBulk = await bulk(s.url, { plan: value });
    t.equal(inBulk.status, 400);
    t.ok(isOfrepError(inBulk.body, 'INVALID_CONTEXT'), `${name} in bulk: the bulk failure schema (no key)`);
  }
  const notObject = await post(`${s.url}${SINGLE}theme`, { context: 'x' });
  t.equal(notObject.status, 400);
  t.equal((notObject.body as Json).errorDetails, 'invalid field context: must be an object');
});

t.test('targetingKey: the entity id; absent = "" (reproducible), as /evaluate/v1 without entityId', async (t) => {
  const s = await startTestServer(t, { fixture: 'ofrep' });
  const seen = new Set<string>();
  for (let i = 0; i < 40; i++) {
    const res = await ofrep(s.url, 'split', { targetingKey: `user-${i}`, nickname: 'x' });
    const reference = await variant(s.url, 'split', `user-${i}`, { nickname: 'x' });
    t.equal((res.body as Json).variant, reference.variantKey, `user-${i}`);
    seen.add(String((res.body as Json).variant));
  }
  t.same([...seen].sort(), ['a', 'b'], 'the ids reach both halves of the split');
  const answers = new Set<string>();
  for (let i = 0; i < 10; i++) answers.add((await ofrep(s.url, 'split', { nickname: 'x' })).text);
  t.equal(answers.size, 1, 'no targetingKey: the same answer every time');
  t.equal(JSON.parse([...answers][0]!).variant, (await variant(s.url, 'split', undefined, { nickname: 'x' })).variantKey, 'entity id ""');
  const numeric = await ofrep(s.url, 'split', { targetingKey: 7, nickname: 'x' });
  t.equal((numeric.body as Json).variant, (await variant(s.url, 'split', '7', { nickname: 'x' })).variantKey, 'a number targetingKey is its text');
});

t.test('namespace headers: X-Svc-Namespace, X-Flipt-Namespace, default', async (t) => {
  const s = await startTestServer(t, { fixture: 'ofrep' });
  t.equal((await ofrep(s.url, 'theme', {}, { 'X-Svc-Namespace': 'other' })).body.variant, 'sepia');
  t.equal((await ofrep(s.url, 'theme', {}, { 'X-Flipt-Namespace': 'other' })).body.variant, 'sepia');
  t.equal((await ofrep(s.url, 'theme', {}, { 'X-Flipt-Namespace': 'other', 'X-Svc-Namespace': 'other' })).body.variant, 'sepia', 'both, agreeing');
  t.equal((await ofrep(s.url, 'theme', {})).body.variant, '', 'no header: default');
  const disagree = await ofrep(s.url, 'theme', {}, { 'X-Flipt-Namespace': 'other', 'X-Svc-Namespace': 'default' });
  t.equal(disagree.status, 400);
  t.ok(isOfrepError(disagree.body, 'INVALID_CONTEXT', 'theme'));
  const missingNs = await ofrep(s.url, 'theme', {}, { 'X-Svc-Namespace': 'nope' });
  t.equal(missingNs.status, 404);
  t.ok(isOfrepError(missingNs.body, 'FLAG_NOT_FOUND', 'theme'));
  t.equal(missingNs.body.errorDetails, 'namespace "nope" not found');
  const other = await bulk(s.url, {}, { 'X-Flipt-Namespace': 'other' });
  t.same(other.body.flags, [{ key: 'theme', reason: 'DEFAULT', variant: 'sepia', metadata: setOf(s, 'other'), value: 'sepia' }]);
  t.same(other.body.metadata, setOf(s, 'other'), 'the flag set: revision and namespace');
  // The reference: the X-Svc-Reference / X-Flipt-Reference header, ?reference=, the environment header.
  // A local folder has one reference, `local`. An unknown one is no missing flag: OFREP's 404 is
  // FLAG_NOT_FOUND only, and its bulk answer has no 404 at all (200/304/400/401/403/429/500), so
  // both answer 400 GENERAL, with the same message.
  for (const [name, headers, query] of [
    ['X-Svc-Reference', { 'X-Svc-Reference': 'nope' }, ''],
    ['X-Flipt-Reference', { 'X-Flipt-Reference': 'nope' }, ''],
    ['?reference=', {}, '?reference=nope'],
  ] as Array<[string, Record<string, string>, string]>) {
    const res = await post(`${s.url}${SINGLE}theme${query}`, { context: {} }, headers);
    t.equal(res.status, 400, name);
    t.same(res.body, { key: 'theme', errorCode: 'GENERAL', errorDetails: 'reference "nope" not found' }, `${name}: GENERAL, not FLAG_NOT_FOUND`);
    t.equal((await post(`${s.url}${SINGLE}theme${query.replace('nope', 'local')}`, { context: {} }, Object.fromEntries(Object.entries(headers).map(([k]) => [k, 'local'])))).status, 200, `${name}: local`);
    const inBulk = await post(`${s.url}${BULK}${query}`, { context: {} }, headers);
    t.equal(inBulk.status, 400, `${name}, bulk`);
    t.same(inBulk.body, { errorCode: 'GENERAL', errorDetails: 'reference "nope" not found' }, `${name}, bulk: GENERAL`);
  }
  const environment = await ofrep(s.url, 'theme', {}, { 'X-Flipt-Environment': 'staging' });
  t.equal(environment.status, 400);
  t.match(environment.body, { key: 'theme', errorCode: 'GENERAL', errorDetails: /^environment "staging" not found/ }, 'an unmapped environment');
  const bulkEnvironment = await bulk(s.url, {}, { 'X-Flipt-Environment': 'staging' });
  t.equal(bulkEnvironment.status, 400);
  t.same(bulkEnvironment.body, { errorCode: 'GENERAL', errorDetails: environment.body.errorDetails }, 'bulk, an unmapped environment: the same message');
  t.equal((await ofrep(s.url, 'theme', {}, { 'X-Svc-Environment': 'default' })).status, 200, 'environment default');
  const bulkMissing = await bulk(s.url, {}, { 'X-Svc-Namespace': 'nope' });
  t.equal(bulkMissing.status, 400, 'bulk, an unknown namespace: 400');
  t.same(bulkMissing.body, { errorCode: 'GENERAL', errorDetails: 'namespace "nope" not found' }, 'bulk, an unknown namespace: GENERAL, the same message');
  t.equal(missingNs.status, 404, 'single flag, an unknown namespace: still 404 FLAG_NOT_FOUND (the flag is not found)');
});

t.test('bulk: the default set, named flags (array or string), per-flag not found', async (t) => {
  const s = await startTestServer(t, { fixture: 'ofrep' });
  const all = await bulk(s.url, { targetingKey: 'u1', employee: true });
  t.equal(all.status, 200);
  const keys = (all.body.flags as Json[]).map((f) => f.key);
  t.same(keys, ['beta', 'killswitch', 'split', 'theme'], 'boolean flags and enabled variant flags, by key; not the disabled variant flag');
  t.same((all.body.flags as Json[]).find((f) => f.key === 'theme'), (await ofrep(s.url, 'theme', { targetingKey: 'u1', employee: true })).body, 'items are the single-flag answers');

  const named = await bulk(s.url, { targetingKey: 'u1', flags: ['theme', 'nope', 'retired', 'theme'] });
  t.equal(named.status, 200);
  t.same(named.body.flags, [
    { key: 'theme', reason: 'UNKNOWN', variant: '', metadata: setOf(s), value: '' },
    { key: 'nope', errorCode: 'FLAG_NOT_FOUND', errorDetails: 'flag "default/nope" not found', metadata: setOf(s) },
    { key: 'retired', reason: 'DISABLED', variant: '', metadata: setOf(s), value: '' },
  ], 'in the order named, a missing flag in its place, a repeated one once');
  const asString = await bulk(s.url, { targetingKey: 'u1', flags: ' theme ,nope,, retired' });
  t.same(asString.body, named.body, "Flipt's comma-separated form: trimmed, empty keys dropped");
  t.same((await bulk(s.url, { flags: [] })).body.flags, [], 'an empty list: no flags');
  t.same((await bulk(s.url, { flags: null })).body.flags.length, 4, 'null: as absent');

  // `flags` is an option of the request, not a context value a constraint could read.
  const withFlags = await bulk(s.url, { targetingKey: 'u1', flags: 'split', nickname: 'x' });
  t.same(withFlags.body.flags, [(await ofrep(s.url, 'split', { targetingKey: 'u1', nickname: 'x' })).body]);

  for (const bad of [5, { a: 'b' }, true]) {
    const res = await bulk(s.url, { flags: bad });
    t.equal(res.status, 400, `flags ${JSON.stringify(bad)}`);
    t.equal(res.body.errorDetails, 'invalid field context.flags: must be a comma-separated string or an array of strings');
  }
  const badItem = await bulk(s.url, { flags: ['theme', 3] });
  t.equal(badItem.body.errorDetails, 'invalid field context.flags[1]: must be a string');
});

t.test('bulk ETag: 304 while nothing the answer depends on changed', async (t) => {
  const s = await startTestServer(t, { fixture: 'ofrep' });
  const context = { targetingKey: 'u1', age: 30, employee: false };
  const first = await bulk(s.url, context);
  const etag = first.headers.get('etag')!;
  t.match(etag, /^"[0-9a-f]{40}"$/, 'a quoted strong ETag');
  const again = await call(`${s.url}${BULK}`, { method: 'POST', body: JSON.stringify({ context: { employee: false, targetingKey: 'u1', age: 30 } }), headers: { 'If-None-Match': etag } });
  t.equal(again.status, 304, 'the same request (keys in another order): 304');
  t.equal(again.text, '', 'with an empty body');
  t.equal(again.headers.get('etag'), etag, 'and the ETag');
  for (const form of [`W/${etag}`, `"x", ${etag}`, '*']) {
    const res = await call(`${s.url}${BULK}`, { method: 'POST', body: JSON.stringify({ context }), headers: { 'If-None-Match': form } });
    t.equal(res.status, 304, `If-None-Match: ${form}`);
  }

  const differs = async (name: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await call(`${s.url}${BULK}`, { method: 'POST', body: JSON.stringify(body), headers: { 'If-None-Match': etag, ...headers } });
    t.equal(res.status, 200, `${name}: 200`);
    t.not(res.headers.get('etag'), etag, `${name}: another ETag`);
  };
  await differs('another context value', { context: { ...context, age: 31 } });
  await differs('another entity', { context: { ...context, targetingKey: 'u2' } });
  await differs('a flag list', { context: { ...context, flags: 'theme' } });
  await differs('another namespace', { context }, { 'X-Svc-Namespace': 'other' });

  // Editing another namespace leaves this one's ETag; editing this one changes it.
  const revision = async () => (await get(`${s.url}/api/v1/namespaces`)).headers.get('x-vexil-revision');
  let before = await revision();
  appendFileSync(join(s.dir, 'other.features.yml'), '    description: edited\n');
  await waitFor('the reload', async () => (await revision()) !== before);
  const afterOther = await call(`${s.url}${BULK}`, { method: 'POST', body: JSON.stringify({ context }), headers: { 'If-None-Match': etag } });
  t.equal(afterOther.status, 304, 'another namespace changed: still 304');
  before = await revision();
  const file = join(s.dir, 'features.yml');
  writeFileSync(file, readFileSync(file, 'utf8').replace('operator: gte\n        value: "18"', 'operator: gte\n        value: "40"'));
  await waitFor('the reload', async () => (await revision()) !== before);
  const changed = await call(`${s.url}${BULK}`, { method: 'POST', body: JSON.stringify({ context }), headers: { 'If-None-Match': etag } });
  t.equal(changed.status, 200, 'this namespace changed: 200');
  t.not(changed.headers.get('etag'), etag);
  t.equal((JSON.parse(changed.text).flags as Json[]).find((f) => f.key === 'theme')!.variant, '', 'the new state: age 30 is no adult at 40');
});

t.test('errors in the OFREP schema, with the status the same failure has elsewhere', async (t) => {
  const s = await startTestServer(t, { fixture: 'ofrep' });
  const missing = await ofrep(s.url, 'nope', {});
  t.equal(missing.status, 404);
  t.same(missing.body, { key: 'nope', errorCode: 'FLAG_NOT_FOUND', errorDetails: 'flag "default/nope" not found' });
  const encoded = await ofrep(s.url, 'a%20b', {});
  t.equal(encoded.body.key, 'a b', 'the key as the router decodes it');

  const malformed = await post(`${s.url}${SINGLE}theme`, '{"context":');
  t.equal(malformed.status, 400);
  t.ok(isOfrepError(malformed.body, 'INVALID_CONTEXT', 'theme'), 'malformed JSON');
  const array = await post(`${s.url}${BULK}`, '[]');
  t.equal(array.status, 400);
  t.ok(isOfrepError(array.body, 'INVALID_CONTEXT'), 'a body that is not an object');
  t.equal(array.body.errorDetails, 'request body must be a JSON object');

  const wrongMethod = await get(`${s.url}${SINGLE}theme`);
  t.equal(wrongMethod.status, 405);
  t.equal(wrongMethod.headers.get('allow'), 'POST');
  t.ok(isOfrepError(wrongMethod.body, 'GENERAL', 'theme'));
  const unknown = await get(`${s.url}/ofrep/v2/evaluate`);
  t.equal(unknown.status, 404);
  t.ok(isOfrepError(unknown.body, 'GENERAL'), 'an unknown OFREP path is no missing flag');

  const huge = await post(`${s.url}${BULK}`, JSON.stringify({ context: { a: 'x'.repeat(MAX_BODY_BYTES) } }));
  t.equal(huge.status, 413);
  t.ok(isOfrepError(huge.body, 'GENERAL'));
  t.ok(isErrorShapeElsewhere(await post(`${s.url}/evaluate/v1/variant`, '{"flagKey":')), 'other paths keep vexil\'s own schema');
});

function isErrorShapeElsewhere(res: JsonResponse): boolean {
  return res.status === 400 && Object.keys(res.body as Json).sort().join(',') === 'code,details,message';
}

t.test('limits: the context limits of /evaluate/v1; hostile inputs of ~1 MB complete', async (t) => {
  const s = await startTestServer(t, { fixture: 'ofrep' });
  const many: Json = {};
  for (let i = 0; i <= MAX_CONTEXT_KEYS; i++) many[`k${i}`] = i;
  const tooMany = await ofrep(s.url, 'theme', many);
  t.equal(tooMany.status, 400);
  t.equal(tooMany.body.errorDetails, `invalid field context: must have at most ${MAX_CONTEXT_KEYS} keys`);
  const longValue = await ofrep(s.url, 'theme', { plan: 'x'.repeat(MAX_CONTEXT_VALUE_BYTES + 1) });
  t.equal(longValue.body.errorDetails, `invalid field context.plan: must be at most ${MAX_CONTEXT_VALUE_BYTES} bytes`);
  const longKey = await ofrep(s.url, 'theme', { ['k'.repeat(2000)]: 1 });
  t.match(longKey.body.errorDetails, /^invalid field context\.k{64}\.\.\.: key must be at most 1024 bytes$/);

  // ~1 MB of one key repeated: answered once.
  const repeated = await bulk(s.url, { flags: 'theme,'.repeat(170_000) });
  t.equal(repeated.status, 200);
  t.equal(repeated.body.flags.length, 1);
  // ~1 MB of distinct keys: beyond the bound, refused.
  const distinct = Array.from({ length: 90_000 }, (_, i) => `f${i}`).join(',');
  const tooManyFlags = await bulk(s.url, { flags: distinct });
  t.equal(tooManyFlags.status, 400);
  t.equal(tooManyFlags.body.errorDetails, `invalid field context.flags: must name at most ${MAX_BULK_FLAGS} flags`);
  // At the bound: every missing flag answered in its place.
  const atBound = await bulk(s.url, { flags: Array.from({ length: MAX_BULK_FLAGS }, (_, i) => `f${i}`) });
  t.equal(atBound.status, 200);
  t.equal(atBound.body.flags.length, MAX_BULK_FLAGS);
  // If-None-Match: the longest list node:http accepts is scanned to its end; ~1 MB is refused
  // (431) before any route.
  const etag = (await bulk(s.url, {})).headers.get('etag')!;
  const longList = await call(`${s.url}${BULK}`, { method: 'POST', body: '{"context":{}}', headers: { 'If-None-Match': `${'"a",'.repeat(3_900)}${etag}` } });
  t.equal(longList.status, 304, 'the ETag at the end of a 15 KB list');
  const raw = await rawExchange(s.url, `POST ${BULK} HTTP/1.1\r\nHost: x\r\nIf-None-Match: ${'"a",'.repeat(250_000)}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
  t.equal(parseRawResponse(raw).status, 431, '1 MB of If-None-Match');
});

t.test('evaluations are counted as /evaluate/v1 counts them', async (t) => {
  const s = await startTestServer(t, { fixture: 'ofrep' });
  const count = async (labels: string) => {
    const text = (await get(`${s.url}/metrics`)).text;
    const line = text.split('\n').find((l) => l.startsWith(`vexil_evaluations_total{${labels}}`));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };
  const variantMatch = 'namespace="default",flag="theme",type="variant",reason="MATCH_EVALUATION_REASON"';
  const booleanDisabled = 'namespace="default",flag="killswitch",type="boolean",reason="DEFAULT_EVALUATION_REASON"';
  const notFound = 'namespace="default",flag="",type="error",reason="NOT_FOUND_ERROR_EVALUATION_REASON"';
  await ofrep(s.url, 'theme', { employee: true });
  await ofrep(s.url, 'killswitch', {});
  await ofrep(s.url, 'nope', {});
  await bulk(s.url, { employee: true, flags: ['theme', 'killswitch', 'nope'] });
  t.equal(await count(variantMatch), 2);
  t.equal(await count(booleanDisabled), 2);
  t.equal(await count(notFound), 2);
});
