/**
 * Registry notification envelopes (src/server/hooks/registry-events.ts) as CNCF distribution
 * sends them (the shape seen from Debian's docker-registry 2.8 in webhooks-registry.test.ts):
 * only a push of the served tag of the served repository asks for a refresh; the bearer token is
 * checked before the body is parsed. And the recent delivery ids (deliveries.ts) stay bounded.
 */
import tap from 'tap';
import { createRecentDeliveries } from '../../../src/server/hooks/deliveries.js';
import { registryDelivery } from '../../../src/server/hooks/registry-events.js';

const TOKEN = Buffer.from('reg-token');
const auth = { authorization: 'Bearer reg-token' };
const served = { repository: 'team/flags', tag: 'v1' };
const event = (id: string, action: string, target: Record<string, unknown>) => ({
  id,
  timestamp: '2026-11-27T05:00:00Z',
  action,
  target: { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: `sha256:${'a'.repeat(64)}`, size: 500, ...target },
  request: { id: 'r', addr: '127.0.0.1:1', host: '127.0.0.1:5000', method: 'PUT', useragent: 'test' },
  actor: {},
  source: { addr: 'host:5000', instanceID: 'i' },
});
const envelope = (...events: unknown[]) => Buffer.from(JSON.stringify({ events }));

tap.test('a push of the served tag asks for a refresh; its event id is the delivery id', async (t) => {
  const d = registryDelivery(TOKEN, auth, envelope(event('e-blob', 'push', { repository: 'team/flags', mediaType: 'application/octet-stream' }), event('e-1', 'push', { repository: 'team/flags', tag: 'v1' })), served);
  t.same(d, { id: 'e-1', event: { kind: 'push' } });
});

tap.test('everything else is acknowledged and ignored', async (t) => {
  const cases: Array<[string, Buffer]> = [
    ['another repository', envelope(event('e', 'push', { repository: 'team/other', tag: 'v1' }))],
    ['another tag', envelope(event('e', 'push', { repository: 'team/flags', tag: 'v2' }))],
    ['a blob or a manifest pushed by digest (no tag)', envelope(event('e', 'push', { repository: 'team/flags' }))],
    ['a pull', envelope(event('e', 'pull', { repository: 'team/flags', tag: 'v1' }))],
    ['no event', envelope()],
  ];
  for (const [what, body] of cases) t.equal(registryDelivery(TOKEN, auth, body, served).event.kind, 'ignored', what);
  const pinned = registryDelivery(TOKEN, auth, envelope(event('e', 'push', { repository: 'team/flags', tag: 'v1' })), { repository: 'team/flags' });
  t.same(pinned.event, { kind: 'ignored', reason: 'no push of team/flags in the notification' }, 'a reference pinned to a digest never moves');
});

tap.test('the token first (401), then the envelope (400)', async (t) => {
  t.throws(() => registryDelivery(TOKEN, {}, Buffer.from('not json'), served), { code: 16, message: 'missing or invalid Authorization' });
  t.throws(() => registryDelivery(TOKEN, { authorization: 'Bearer reg-tokeN' }, envelope(), served), { code: 16 });
  t.throws(() => registryDelivery(TOKEN, { authorization: 'Basic cmVnLXRva2Vu' }, envelope(), served), { code: 16 }, 'Basic is not Bearer');
  t.ok(registryDelivery(TOKEN, { authorization: 'bearer reg-token' }, envelope(), served), 'the scheme is case-insensitive');
  t.throws(() => registryDelivery(TOKEN, auth, Buffer.from('not json'), served), { code: 3 });
  t.throws(() => registryDelivery(TOKEN, auth, Buffer.from('{"events": {}}'), served), { code: 3, message: 'invalid notification: "events" must be an array' });
  t.throws(() => registryDelivery(TOKEN, auth, Buffer.from('{"events": [1]}'), served), { code: 3, message: /events\[0\]/ });
});

tap.test('recent delivery ids: first time true, again false, the oldest forgotten past the capacity', async (t) => {
  const recent = createRecentDeliveries(3);
  t.ok(recent.first('github', 'a'));
  t.notOk(recent.first('github', 'a'));
  t.ok(recent.first('gitlab', 'a'), 'per sender');
  for (const id of ['b', 'c', 'd']) t.ok(recent.first('github', id));
  t.ok(recent.first('github', 'a'), 'a was the oldest of four: forgotten');
  t.notOk(recent.first('github', 'd'));
});
