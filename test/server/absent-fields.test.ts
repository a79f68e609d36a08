/**
 * Fields left out of an evaluation request are their protobuf defaults, as Flipt reads them
 * (Flipt's clients encode with protojson, which leaves out `""` and `{}`): an absent `entityId` is
 * `""`, an absent `context` is `{}`, an absent batch `requests` is `[]`, and JSON `null` reads as
 * absent. On the fast path and on the Koa path alike, a request with the fields left out gets
 * the same answer as the same request with `""`/`{}`, and that answer is what Flipt computes
 * for the empty entity id (its hash). A `null` context value is the empty string, as Flipt's
 * gateway reads it (its older protobuf JSON decoder, kept on purpose since Flipt 1.5.1:
 * flipt-io/flipt#664, #665), so it matches as an absent key does. `flagKey` stays required, and a
 * field present with the wrong type stays a 400 naming it.
 */
import { crc32 } from 'node:zlib';
import { pino } from 'pino';
import t from 'tap';
import { startHttpServer } from '../../src/server/listen.js';
import { startTestStore } from './support.js';

const VOLATILE = new Set(['requestId', 'timestamp', 'requestDurationMillis']);
function scrub(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(scrub);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).filter(([k]) => !VOLATILE.has(k)).map(([k, x]) => [k, scrub(x)]));
  }
  return v;
}

/** Flipt's hashes of the empty entity id (flipt-semantics §2.3, §2.4). */
const GREETING_BUCKET = crc32('greeting' + '') % 1000;
const EARLY_ACCESS_BUCKET = crc32('' + 'early-access') % 100;

t.test('fields left out = their empty values, on the fast path and the Koa path', async (t) => {
  const { store, config } = await startTestStore(t, { fixture: 'absent-fields' });
  const common = { store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0 };
  const fast = await startHttpServer({ ...common });
  t.teardown(() => fast.close());
  const koa = await startHttpServer({ ...common, fastPath: false });
  t.teardown(() => koa.close());
  t.ok(fast.fastPath && !koa.fastPath);

  const send = async (base: string, path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', body: JSON.stringify(body) });
    const json = (await res.json()) as unknown;
    return { status: res.status, body: scrub(json) };
  };

  /** Every body of a group answers alike, on both servers; returns that answer. */
  const alike = async (name: string, path: string, bodies: readonly unknown[]) => {
    const first = await send(fast.url, path, bodies[0]);
    for (const [i, body] of bodies.entries()) {
      for (const [server, base] of [['fast', fast.url], ['koa', koa.url]] as const) {
        t.same(await send(base, path, body), first, `${name}: ${JSON.stringify(body)} on ${server}`);
      }
      if (i === 0) t.equal(first.status, 200, `${name}: answered`);
    }
    return first.body as Record<string, unknown>;
  };

  // Left out, empty, null: the spellings of "no entity id, no context" (a null context value is
  // "", which every operator reads as it reads an absent key).
  const spellings = (base: Record<string, unknown>) => [
    base,
    { ...base, entityId: '', context: {} },
    { ...base, entityId: null, context: null },
    { ...base, entity_id: '' },
    { ...base, context: { plan: null } },
    { ...base, context: { plan: '' } },
  ];

  const variant = await alike('variant', '/evaluate/v1/variant', spellings({ namespaceKey: 'default', flagKey: 'greeting' }));
  t.match(variant, { match: true, reason: 'MATCH_EVALUATION_REASON', variantKey: GREETING_BUCKET < 500 ? 'hello' : 'welcome', flagKey: 'greeting' });
  t.equal(variant.variantKey, 'welcome', 'the bucket of the empty entity id (947)');

  const anonymous = await alike('variant, entity-id and context constraints', '/evaluate/v1/variant', spellings({ flagKey: 'anonymous' }));
  t.match(anonymous, { match: true, segmentKeys: ['no-entity'], variantKey: 'nobody' }, 'empty entity id and absent `plan` match');

  const alias = await alike('namespaced alias', '/evaluate/v1/namespaces/default/variant', spellings({ flagKey: 'greeting' }));
  t.same(alias, variant, 'the alias answers as the plain route');

  const boolean = await alike('boolean', '/evaluate/v1/boolean', spellings({ namespaceKey: 'default', flagKey: 'early-access' }));
  t.match(boolean, { enabled: EARLY_ACCESS_BUCKET < 45, reason: EARLY_ACCESS_BUCKET < 45 ? 'MATCH_EVALUATION_REASON' : 'DEFAULT_EVALUATION_REASON' });
  t.equal(boolean.enabled, true, 'the threshold bucket of the empty entity id (42 < 45)');

  const items = (extra: Record<string, unknown>) => [
    { flagKey: 'greeting', ...extra },
    { flagKey: 'early-access', ...extra },
    { flagKey: 'anonymous', ...extra },
  ];
  const batch = await alike('batch items', '/evaluate/v1/batch', [
    { requests: items({}) },
    { requests: items({ entityId: '', context: {} }) },
    { requests: items({ entityId: null, context: null }) },
    { requests: items({ context: { plan: null } }) },
  ]);
  t.match(batch.responses, [
    { type: 'VARIANT_EVALUATION_RESPONSE_TYPE', variantResponse: { variantKey: variant.variantKey } },
    { type: 'BOOLEAN_EVALUATION_RESPONSE_TYPE', booleanResponse: { enabled: boolean.enabled } },
    { type: 'VARIANT_EVALUATION_RESPONSE_TYPE', variantResponse: { variantKey: 'nobody' } },
  ]);
  const empty = await alike('empty batch', '/evaluate/v1/batch', [{}, { requests: [] }, { requests: null }]);
  t.same(empty, { responses: [] });

  // What stays refused: no flagKey, and a field present with the wrong type.
  const refused: Array<[string, unknown, string]> = [
    ['/evaluate/v1/variant', {}, 'invalid field flagKey: is required'],
    ['/evaluate/v1/variant', { flagKey: null, entityId: 'u' }, 'invalid field flagKey: is required'],
    ['/evaluate/v1/variant', { flagKey: 'greeting', entityId: 7 }, 'invalid field entityId: must be a string'],
    ['/evaluate/v1/variant', { flagKey: 'greeting', entity_id: false }, 'invalid field entityId: must be a string'],
    ['/evaluate/v1/variant', { flagKey: 'greeting', context: 'plan=beta' }, 'invalid field context: must be an object of string values'],
    ['/evaluate/v1/variant', { flagKey: 'greeting', context: [] }, 'invalid field context: must be an object of string values'],
    ['/evaluate/v1/variant', { flagKey: 'greeting', context: { plan: 1 } }, 'invalid field context.plan: must be a string'],
    ['/evaluate/v1/batch', { requests: [{ flagKey: 'greeting', context: { plan: null, tier: false } }] }, 'invalid field requests[0].context.tier: must be a string'],
    ['/evaluate/v1/boolean', { flagKey: 'early-access', entityId: {} }, 'invalid field entityId: must be a string'],
    ['/evaluate/v1/boolean', { entityId: 'u' }, 'invalid field flagKey: is required'],
    ['/evaluate/v1/namespaces/default/variant', { flagKey: 'greeting', entityId: ['u'] }, 'invalid field entityId: must be a string'],
    ['/evaluate/v1/namespaces/default/variant', { context: {} }, 'invalid field flagKey: is required'],
    ['/evaluate/v1/batch', { requests: [{ flagKey: 'greeting' }, {}] }, 'invalid field requests[1].flagKey: is required'],
    ['/evaluate/v1/batch', { requests: [{ flagKey: 'greeting', entityId: 1 }] }, 'invalid field requests[0].entityId: must be a string'],
    ['/evaluate/v1/batch', { requests: [{ flagKey: 'greeting' }, { flagKey: 'greeting', context: 1 }] }, 'invalid field requests[1].context: must be an object of string values'],
    ['/evaluate/v1/batch', { requests: {} }, 'invalid field requests: must be an array'],
  ];
  for (const [path, body, message] of refused) {
    for (const base of [fast.url, koa.url]) {
      t.same(await send(base, path, body), { status: 400, body: { code: 3, message, details: [] } }, `${path} ${JSON.stringify(body)}`);
    }
  }
});
