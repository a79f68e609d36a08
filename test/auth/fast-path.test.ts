/**
 * Authentication on the node:http evaluation fast path (src/server/fast-path/): the credential
 * forms and refusals the Koa middleware handles, on the evaluation endpoints the fast path serves.
 */
import t from 'tap';
import { bootstrapTokenFrom, createToken, denied, request, REQUIRED, startAuthServer, UNAUTHENTICATED } from './support.js';

const EVAL = { namespaceKey: 'default', flagKey: 'color', entityId: 'e1', context: {} };

t.test('evaluation on the fast path: bearer, cookie, refusals, namespace-scoped tokens', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  t.equal(s.http.fastPath, true, 'the auth middleware exposes its gate, so the fast path is on');
  const token = bootstrapTokenFrom(s.logs)!;
  const url = `${s.url}/evaluate/v1/variant`;

  const none = await request(url, { body: EVAL });
  t.equal(none.status, 401);
  t.same(none.body, UNAUTHENTICATED);
  t.equal(none.headers.get('www-authenticate'), 'Bearer realm="vexil"');
  t.equal((await request(url, { body: EVAL, token })).status, 200, 'bearer');
  t.equal((await request(url, { body: EVAL, cookie: token })).status, 200, 'cookie alone');
  t.equal((await request(url, { body: EVAL, cookie: 'garbage' })).status, 401, 'bad cookie alone');
  t.equal((await request(url, { body: EVAL, cookie: token, token: 'garbage' })).status, 401, 'the header decides');
  t.equal((await request(url, { body: EVAL, authorization: 'Basic Zm9vOmJhcg==' })).status, 401, 'unsupported scheme');

  const scoped = await createToken(s.url, token, { name: 'prod', namespaceKey: 'production' });
  const prod = { ...EVAL, namespaceKey: 'production' };
  t.equal((await request(url, { body: prod, token: scoped.clientToken })).status, 200, 'scoped token, its namespace in the body');
  const out = await request(url, { body: EVAL, token: scoped.clientToken });
  t.equal(out.status, 403);
  t.same(out.body, denied('production'));
  t.equal(
    (await request(`${s.url}/evaluate/v1/namespaces/production/variant`, { body: { flagKey: 'color', entityId: 'e1' }, token: scoped.clientToken })).status,
    200,
    'scoped token, namespace from the path',
  );
  const batch = await request(`${s.url}/evaluate/v1/batch`, { body: { requests: [prod, EVAL] }, token: scoped.clientToken });
  t.equal(batch.status, 403, 'a batch leaving the namespace');
  const bad = await request(url, { body: '{"namespaceKey":', token: scoped.clientToken });
  t.equal(bad.status, 400, 'the body read for the scope check refuses malformed JSON');
});
