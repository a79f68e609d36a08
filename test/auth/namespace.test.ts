/**
 * Namespace-scoped tokens (interface §5.3, reference §2.13): they reach only requests confined
 * to their namespace; elsewhere the answer is 403 {"code":7,"message":"permission denied: token
 * is scoped to namespace \"<ns>\""} (Flipt answers 401 for both; see the README).
 */
import t from 'tap';
import { bootstrapTokenFrom, createToken, denied, request, REQUIRED, startAuthServer } from './support.js';

const ev = (namespaceKey: string | undefined, flagKey = 'color') => ({
  ...(namespaceKey !== undefined ? { namespaceKey } : {}),
  flagKey,
  entityId: 'e1',
  context: {},
});

t.test('a token scoped to "production"', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const boot = bootstrapTokenFrom(s.logs)!;
  const prod = (await createToken(s.url, boot, { name: 'prod', namespaceKey: 'production' })).clientToken;
  const call = (path: string, opts: { method?: string; body?: unknown } = {}) => request(`${s.url}${path}`, { token: prod, ...opts });

  t.test('reaches management and evaluation of its namespace', async (t) => {
    for (const path of [
      '/api/v1/namespaces/production',
      '/api/v1/namespaces/production/flags',
      '/api/v1/namespaces/production/flags/color',
      '/api/v1/namespaces/production/segments',
      '/api/v1/namespaces/production/flags/',
    ]) {
      t.equal((await call(path)).status, 200, path);
    }
    const miss = await call('/api/v1/namespaces/production/flags/nope');
    t.equal(miss.status, 404, 'in scope, then the route answers');
    const v = await call('/evaluate/v1/variant', { body: ev('production') });
    t.equal(v.status, 200);
    t.equal(v.body.flagKey, 'color');
    t.equal((await call('/evaluate/v1/variant', { body: { namespace_key: 'production', flagKey: 'color', entityId: 'e' } })).status, 200, 'snake_case');
    t.equal((await call('/evaluate/v1/namespaces/production/variant', { body: ev('production') })).status, 200);
    t.equal((await call('/evaluate/v1/namespaces/production/variant', { body: ev(undefined) })).status, 200, 'the path names it');
    t.equal((await call('/evaluate/v1/batch', { body: { requests: [ev('production'), ev('production', 'other')] } })).status, 200);
    const write = await call('/api/v1/namespaces/production/flags', { method: 'POST', body: { key: 'k', name: 'n', type: 'VARIANT_FLAG_TYPE' } });
    t.equal(write.status, 400, 'a write in scope reaches the (read-only) route');
    t.equal(write.body.code, 9);
  });

  t.test('is refused (403) elsewhere', async (t) => {
    const refused: Array<[string, { method?: string; body?: unknown }]> = [
      ['/api/v1/namespaces', {}],
      ['/api/v1/namespaces/default/flags', {}],
      ['/api/v1/namespaces/default', {}],
      ['/api/v1/flags', {}],
      ['/api/v1/flags/color', {}],
      ['/api/v1/namespaces', { method: 'POST', body: { key: 'production', name: 'x' } }],
      ['/evaluate/v1/variant', { body: ev('default') }],
      ['/evaluate/v1/variant', { body: ev(undefined) }],
      ['/evaluate/v1/variant', { body: ev('') }],
      ['/evaluate/v1/boolean', { body: ev('default', 'new-checkout') }],
      ['/evaluate/v1/namespaces/default/variant', { body: ev(undefined) }],
      ['/evaluate/v1/namespaces/production/variant', { body: ev('default') }],
      ['/evaluate/v1/batch', { body: { requests: [ev('production'), ev('default')] } }],
      ['/evaluate/v1/batch', { body: { requests: [ev('production'), ev(undefined)] } }],
      ['/evaluate/v1/batch', { body: { requests: 'x' } }],
      ['/evaluate/v1/variant', { body: { namespaceKey: 5, flagKey: 'color', entityId: 'e' } }],
      ['/meta/info', {}],
      ['/meta/snapshots', {}],
      ['/auth/v1/tokens', {}],
      ['/auth/v1/tokens/some-id', {}],
      ['/auth/v1/tokens/some-id', { method: 'DELETE' }],
      ['/auth/v1/self', {}],
      ['/auth/v1/self/expire', { method: 'PUT' }],
      ['/no/such/path', {}],
    ];
    for (const [path, opts] of refused) {
      const res = await call(path, opts);
      t.equal(res.status, 403, `${opts.method ?? (opts.body ? 'POST' : 'GET')} ${path} ${JSON.stringify(opts.body ?? '')}`);
      t.same(res.body, denied('production'));
    }
  });

  t.test('cannot create tokens', async (t) => {
    const res = await call('/auth/v1/method/token', { body: { name: 'escalate' } });
    t.equal(res.status, 403);
    t.same(res.body, denied('production'));
    const scoped = await call('/auth/v1/method/token', { body: { name: 'same ns', namespaceKey: 'production' } });
    t.equal(scoped.status, 403, 'not even for its own namespace');
    const list = await request(`${s.url}/auth/v1/tokens`, { token: boot });
    t.equal(list.body.authentications.length, 2, 'nothing was created');
  });

  t.test('evaluation bodies still validate after the scope check read them', async (t) => {
    const bad = await call('/evaluate/v1/variant', { body: { namespaceKey: 'production', entityId: 'e' } });
    t.equal(bad.status, 400);
    t.equal(bad.body.message, 'invalid field flagKey: is required');
    const malformed = await call('/evaluate/v1/variant', { body: '{"namespaceKey":' });
    t.equal(malformed.status, 400);
    t.match(malformed.body.message, /^malformed JSON body/);
    // Keep-alive connections survive the replayed body: several requests in a row answer.
    for (let i = 0; i < 5; i++) t.equal((await call('/evaluate/v1/boolean', { body: ev('production', 'new-checkout') })).status, 404);
  });
});

t.test('a token scoped to "default" reaches the legacy unnamespaced forms', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const boot = bootstrapTokenFrom(s.logs)!;
  const def = (await createToken(s.url, boot, { name: 'def', namespaceKey: 'default' })).clientToken;
  for (const path of ['/api/v1/flags', '/api/v1/flags/color', '/api/v1/segments', '/api/v1/namespaces/default/flags']) {
    t.equal((await request(`${s.url}${path}`, { token: def })).status, 200, path);
  }
  t.equal((await request(`${s.url}/evaluate/v1/variant`, { token: def, body: ev(undefined) })).status, 200, 'absent = default');
  t.equal((await request(`${s.url}/evaluate/v1/variant`, { token: def, body: ev('') })).status, 200, 'empty = default');
  t.equal((await request(`${s.url}/evaluate/v1/batch`, { token: def, body: { requests: [ev(''), ev('default')] } })).status, 200);
  t.equal((await request(`${s.url}/api/v1/namespaces/production/flags`, { token: def })).status, 403);
});

t.test('a blank namespace is no scope; exclusions apply to scoped tokens too', async (t) => {
  const s = await startAuthServer(t, { yaml: `${REQUIRED}  exclude:\n    evaluation: true\n` });
  const boot = bootstrapTokenFrom(s.logs)!;
  const blank = (await createToken(s.url, boot, { name: 'blank', namespaceKey: '   ' })).clientToken;
  t.equal((await request(`${s.url}/api/v1/namespaces`, { token: blank })).status, 200, 'whitespace-only namespace: unscoped');
  const prod = (await createToken(s.url, boot, { name: 'prod', namespaceKey: 'production' })).clientToken;
  t.equal((await request(`${s.url}/evaluate/v1/variant`, { token: prod, body: ev('default') })).status, 200, 'excluded section: token not looked at');
  t.equal((await request(`${s.url}/api/v1/namespaces/default/flags`, { token: prod })).status, 403);
  // Namespace given through metadata instead of namespaceKey: same scope.
  const viaMetadata = (await createToken(s.url, boot, { name: 'm', metadata: { 'io.svc.auth.token.namespace': 'production' } })).clientToken;
  t.equal((await request(`${s.url}/api/v1/namespaces/default/flags`, { token: viaMetadata })).status, 403);
});

t.test('required: false: scoped tokens change nothing on open routes', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  methods:\n    token:\n      enabled: true\n' });
  const prod = (await createToken(s.url, undefined, { name: 'prod', namespaceKey: 'production' })).clientToken;
  t.equal((await request(`${s.url}/api/v1/namespaces/default/flags`, { token: prod })).status, 200);
  const self = await request(`${s.url}/auth/v1/self`, { token: prod });
  t.equal(self.status, 403, '/auth/v1/self is never in a namespace');
  t.same(self.body, denied('production'));
});
