/**
 * Raw client tokens never reach the log (trace level, every line captured), except the bootstrap
 * token, written once as `client_token`.
 */
import t from 'tap';
import { bootstrapTokenFrom, createToken, request, startAuthServer } from './support.js';

t.test('a full session at trace level: no created token in any log line', async (t) => {
  const s = await startAuthServer(t, {
    yaml: `
log:
  level: trace
authentication:
  required: true
  methods:
    token:
      enabled: true
`,
  });
  const boot = bootstrapTokenFrom(s.logs)!;
  const tokens: string[] = [];
  for (const body of [{ name: 'a' }, { name: 'b', namespaceKey: 'production' }, { name: 'c', expiresAt: '2030-01-01T00:10:00Z' }]) {
    tokens.push((await createToken(s.url, boot, body)).clientToken);
  }
  const [a, scoped, short] = tokens as [string, string, string];
  await request(`${s.url}/api/v1/namespaces`, { token: a });
  await request(`${s.url}/api/v1/namespaces`, { cookie: a });
  await request(`${s.url}/api/v1/namespaces/default/flags`, { token: scoped });
  await request(`${s.url}/evaluate/v1/variant`, { token: scoped, body: { namespaceKey: 'default', flagKey: 'color', entityId: 'e' } });
  await request(`${s.url}/evaluate/v1/variant`, { token: scoped, body: '{"namespaceKey": broken' });
  await request(`${s.url}/auth/v1/self`, { cookie: scoped });
  s.clock.advance(11 * 60_000);
  await request(`${s.url}/auth/v1/self`, { token: short });
  await request(`${s.url}/auth/v1/self/expire`, { token: a, method: 'PUT' });
  await request(`${s.url}/auth/v1/self`, { token: a });
  await request(`${s.url}/auth/v1/method/token`, { token: scoped, body: { name: 'nope' } });
  await request(`${s.url}/auth/v1/method/token`, { token: boot, body: { name: 'bad', expiresAt: 'soon' } });
  const list = await request(`${s.url}/auth/v1/tokens`, { token: boot });
  for (const rec of list.body.authentications as Array<{ id: string }>) {
    await request(`${s.url}/auth/v1/tokens/${rec.id}`, { token: boot });
  }
  await request(`${s.url}/auth/v1/tokens/${(list.body.authentications as Array<{ id: string }>)[1]!.id}`, { token: boot, method: 'DELETE' });
  await s.stop();

  const text = s.logs.text();
  t.ok(s.logs.lines.length > 20, `captured ${s.logs.lines.length} lines`);
  t.ok(text.includes('"level":"trace"') || text.includes('"level":"debug"') || text.includes('"msg":"request"'), 'request lines were logged');
  for (const [i, token] of tokens.entries()) t.notOk(text.includes(token), `token ${i} is not in the log`);
  t.equal(text.split(boot).length - 1, 1, 'the bootstrap token: exactly once');
  t.ok(
    s.logs.entries().some((e) => e.msg === 'request was not authenticated' && e.reason === 'authorization expired'),
    'refusals are logged with their reason',
  );
});
