/**
 * The bounds on an evaluation context (src/http/limits.ts), on the fast path and on the Koa
 * path alike: a value over MAX_CONTEXT_VALUE_BYTES (UTF-8), a key over MAX_CONTEXT_KEY_BYTES, or
 * more than MAX_CONTEXT_KEYS keys is a 400 naming the field; values at the limit are evaluated.
 * A value of about 1 MB (the body limit) is refused before any constraint reads it.
 */
import { pino } from 'pino';
import t from 'tap';
import { startHttpServer } from '../../src/server/listen.js';
import { MAX_BODY_BYTES, MAX_CONTEXT_KEYS, MAX_CONTEXT_KEY_BYTES, MAX_CONTEXT_VALUE_BYTES } from '../../src/http/limits.js';
import { startTestStore } from './support.js';

t.test('context limits: 400 naming the field, on both paths', async (t) => {
  const { store, config } = await startTestStore(t);
  const common = { store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0 };
  const fast = await startHttpServer({ ...common });
  t.teardown(() => fast.close());
  const koa = await startHttpServer({ ...common, fastPath: false });
  t.teardown(() => koa.close());

  const post = async (base: string, path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const both = async (path: string, body: unknown) => {
    const answers = [await post(fast.url, path, body), await post(koa.url, path, body)];
    t.equal(answers[0]!.status, answers[1]!.status, `${path}: same status on both paths`);
    return answers;
  };
  const refused = async (name: string, path: string, body: unknown, message: string) => {
    for (const answer of await both(path, body)) t.same(answer, { status: 400, body: { code: 3, message, details: [] } }, name);
  };
  const accepted = async (name: string, path: string, body: unknown) => {
    for (const answer of await both(path, body)) t.equal(answer.status, 200, name);
  };
  const variant = (context: Record<string, string>) => ({ flagKey: 'color', entityId: 'u', context });
  const V = '/evaluate/v1/variant';

  await accepted('value at the limit', V, variant({ plan: 'x'.repeat(MAX_CONTEXT_VALUE_BYTES) }));
  await refused('value one byte over', V, variant({ plan: 'x'.repeat(MAX_CONTEXT_VALUE_BYTES + 1) }), `invalid field context.plan: must be at most ${MAX_CONTEXT_VALUE_BYTES} bytes`);
  // 'é' is 2 bytes in UTF-8: the limit counts bytes, not characters.
  await accepted('2-byte characters at the limit', V, variant({ plan: 'é'.repeat(MAX_CONTEXT_VALUE_BYTES / 2) }));
  await refused('2-byte characters over the limit', V, variant({ plan: 'é'.repeat(MAX_CONTEXT_VALUE_BYTES / 2 + 1) }), `invalid field context.plan: must be at most ${MAX_CONTEXT_VALUE_BYTES} bytes`);
  await refused(
    'boolean route',
    '/evaluate/v1/boolean',
    { flagKey: 'new-checkout', context: { plan: 'x'.repeat(MAX_CONTEXT_VALUE_BYTES + 1) } },
    `invalid field context.plan: must be at most ${MAX_CONTEXT_VALUE_BYTES} bytes`,
  );
  await refused(
    'batch item',
    '/evaluate/v1/batch',
    { requests: [variant({ plan: 'beta' }), variant({ big: 'x'.repeat(MAX_CONTEXT_VALUE_BYTES + 1) })] },
    `invalid field requests[1].context.big: must be at most ${MAX_CONTEXT_VALUE_BYTES} bytes`,
  );

  const longKey = 'k'.repeat(MAX_CONTEXT_KEY_BYTES);
  await accepted('key at the limit', V, variant({ [longKey]: 'v' }));
  await refused('key one byte over', V, variant({ [`${longKey}k`]: 'v' }), `invalid field context.${'k'.repeat(64)}...: key must be at most ${MAX_CONTEXT_KEY_BYTES} bytes`);
  await refused(
    'namespaced alias, key over',
    '/evaluate/v1/namespaces/default/variant',
    variant({ [`${longKey}k`]: 'v' }),
    `invalid field context.${'k'.repeat(64)}...: key must be at most ${MAX_CONTEXT_KEY_BYTES} bytes`,
  );

  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
  await accepted('keys at the limit', V, variant(keys(MAX_CONTEXT_KEYS)));
  await refused('one key too many', V, variant(keys(MAX_CONTEXT_KEYS + 1)), `invalid field context: must have at most ${MAX_CONTEXT_KEYS} keys`);
  await refused(
    'batch item, one key too many',
    '/evaluate/v1/batch',
    { requests: [variant(keys(MAX_CONTEXT_KEYS + 1))] },
    `invalid field requests[0].context: must have at most ${MAX_CONTEXT_KEYS} keys`,
  );

  // About 1 MB of digits that fail a number constraint (segment `internal`: age gte 18, after
  // an email that matches): refused here, before any constraint parses it.
  const digits = '1'.repeat(MAX_BODY_BYTES - 200) + 'x';
  await refused('~1 MB value', V, variant({ email: 'a@example.com', age: digits }), `invalid field context.age: must be at most ${MAX_CONTEXT_VALUE_BYTES} bytes`);
  t.equal((await fetch(`${fast.url}/health`)).status, 200, 'still answering');
});
