/**
 * Authentication of OFREP and of the legacy evaluation API, through the real server:
 *
 * - OFREP follows the evaluation section (`exclude.evaluation` opens it); its 401 and 403 come in
 *   the OFREP error schema. A namespace-scoped token reaches OFREP when the namespace header names
 *   its namespace (Flipt refuses such tokens on OFREP altogether).
 * - The legacy paths live under /api/v1 and follow the management section (`exclude.management`),
 *   as in Flipt; a scoped token reaches them when the body's (or path's) namespace is its own, and
 *   for a batch when every item stays in it.
 */
import t from 'tap';
import { classifyRequest } from '../../src/auth/scope.js';
import { bootstrapTokenFrom, createToken, denied, request, REQUIRED, startAuthServer, UNAUTHENTICATED } from './support.js';

const OFREP_UNAUTHENTICATED = { errorCode: 'GENERAL', errorDetails: 'request was not authenticated' };
const ofrepDenied = (ns: string) => ({ errorCode: 'GENERAL', errorDetails: `permission denied: token is scoped to namespace "${ns}"` });

t.test('classification', async (t) => {
  const scope = (m: string, p: string) => classifyRequest(m, p);
  for (const path of ['/ofrep/v1/configuration', '/ofrep/v1/evaluate/flags', '/ofrep/v1/evaluate/flags/x', '/ofrep/v1/evaluate/flags/', '/ofrep/other']) {
    t.same(scope('POST', path), { public: false, section: 'evaluation', namespace: { from: 'header' }, self: false }, path);
  }
  t.same(scope('POST', '/api/v1/evaluate'), { public: false, section: 'management', namespace: { from: 'body', batch: false }, self: false });
  t.same(scope('POST', '/api/v1/evaluate/'), { public: false, section: 'management', namespace: { from: 'body', batch: false }, self: false });
  t.same(scope('POST', '/api/v1/batch-evaluate'), { public: false, section: 'management', namespace: { from: 'legacy-batch-body' }, self: false });
  t.same(scope('POST', '/api/v1/namespaces/prod/evaluate'), { public: false, section: 'management', namespace: { from: 'path', namespace: 'prod' }, self: false });
  t.same(scope('POST', '/api/v1/namespaces/prod/batch-evaluate'), { public: false, section: 'management', namespace: { from: 'path', namespace: 'prod' }, self: false });
});

t.test('OFREP: a token required; 401 and 403 in the OFREP schema; scoped tokens by the namespace header', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const boot = bootstrapTokenFrom(s.logs)!;
  const prod = (await createToken(s.url, boot, { name: 'prod', namespaceKey: 'production' })).clientToken;
  const single = `${s.url}/ofrep/v1/evaluate/flags/color`;
  const bulk = `${s.url}/ofrep/v1/evaluate/flags`;

  for (const [url, key] of [[single, { key: 'color' }], [bulk, {}]] as const) {
    const anonymous = await request(url, { body: {} });
    t.equal(anonymous.status, 401, `${url}: no token`);
    t.same(anonymous.body, { ...key, ...OFREP_UNAUTHENTICATED }, 'the flag named when the path names it');
    t.equal((await request(url, { body: {}, token: 'garbage' })).status, 401);
    t.equal((await request(url, { body: {}, token: boot })).status, 200, 'an unscoped token: default namespace');
  }
  const config = await request(`${s.url}/ofrep/v1/configuration`);
  t.equal(config.status, 401);
  t.same(config.body, OFREP_UNAUTHENTICATED);

  for (const header of ['X-Svc-Namespace', 'X-Flipt-Namespace']) {
    const ok = await request(single, { body: { context: {} }, token: prod, headers: { [header]: 'production' } });
    t.equal(ok.status, 200, `${header}: production, the token's namespace`);
    t.match(ok.body, { key: 'color', reason: 'UNKNOWN', value: '' }, 'evaluated in production (default would answer blue)');
    t.equal((await request(bulk, { body: {}, token: prod, headers: { [header]: 'production' } })).status, 200, `${header}: bulk too`);
  }
  t.equal((await request(`${s.url}/ofrep/v1/configuration`, { token: prod, headers: { 'X-Svc-Namespace': 'production' } })).status, 200, 'configuration, with the header');
  for (const headers of [{}, { 'X-Svc-Namespace': 'default' }, { 'X-Flipt-Namespace': 'paging' }] as Array<Record<string, string>>) {
    const res = await request(single, { body: {}, token: prod, headers });
    t.equal(res.status, 403, `scoped token, namespace ${JSON.stringify(headers)}`);
    t.same(res.body, { key: 'color', ...ofrepDenied('production') });
    const b = await request(bulk, { body: {}, token: prod, headers });
    t.equal(b.status, 403);
    t.same(b.body, ofrepDenied('production'));
  }
  const disagreeing = await request(single, { body: {}, token: prod, headers: { 'X-Svc-Namespace': 'production', 'X-Flipt-Namespace': 'default' } });
  t.equal(disagreeing.status, 400, 'two headers disagreeing: refused, never guessed');
  t.equal(disagreeing.body.errorCode, 'INVALID_CONTEXT');
});

t.test('exclude.evaluation opens OFREP and not the legacy paths; exclude.management the reverse', async (t) => {
  const evaluation = await startAuthServer(t, { yaml: `${REQUIRED}  exclude:\n    evaluation: true\n` });
  t.equal((await request(`${evaluation.url}/ofrep/v1/evaluate/flags/color`, { body: {} })).status, 200, 'OFREP open');
  t.equal((await request(`${evaluation.url}/ofrep/v1/evaluate/flags`, { body: {}, token: 'garbage' })).status, 200, 'a garbage token is not looked at');
  const legacyClosed = await request(`${evaluation.url}/api/v1/evaluate`, { body: { flagKey: 'color', entityId: 'e' } });
  t.equal(legacyClosed.status, 401, 'legacy evaluation is management: closed');
  t.same(legacyClosed.body, UNAUTHENTICATED);

  const management = await startAuthServer(t, { yaml: `${REQUIRED}  exclude:\n    management: true\n` });
  t.equal((await request(`${management.url}/api/v1/evaluate`, { body: { flagKey: 'color', entityId: 'e' } })).status, 200, 'legacy open');
  t.equal((await request(`${management.url}/api/v1/batch-evaluate`, { body: { requests: [] } })).status, 200);
  const ofrepClosed = await request(`${management.url}/ofrep/v1/evaluate/flags/color`, { body: {} });
  t.equal(ofrepClosed.status, 401, 'OFREP is evaluation: closed');
  t.same(ofrepClosed.body, { key: 'color', ...OFREP_UNAUTHENTICATED });
});

t.test('legacy paths: a scoped token reaches its own namespace only', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const boot = bootstrapTokenFrom(s.logs)!;
  const prod = (await createToken(s.url, boot, { name: 'prod', namespaceKey: 'production' })).clientToken;
  const req = { flagKey: 'color', entityId: 'e' };
  t.equal((await request(`${s.url}/api/v1/evaluate`, { body: req })).status, 401, 'no token');
  t.equal((await request(`${s.url}/api/v1/evaluate`, { body: req, token: boot })).status, 200, 'an unscoped token');

  const allowed: Array<[string, unknown]> = [
    ['/api/v1/evaluate', { ...req, namespaceKey: 'production' }],
    ['/api/v1/namespaces/production/evaluate', req],
    ['/api/v1/batch-evaluate', { namespaceKey: 'production', requests: [req, { ...req, namespaceKey: 'production' }] }],
    ['/api/v1/namespaces/production/batch-evaluate', { requests: [req] }],
  ];
  for (const [path, body] of allowed) {
    const res = await request(`${s.url}${path}`, { body, token: prod });
    t.equal(res.status, 200, `${path} ${JSON.stringify(body)}`);
  }
  const refused: Array<[string, unknown]> = [
    ['/api/v1/evaluate', req],
    ['/api/v1/evaluate', { ...req, namespaceKey: 'default' }],
    ['/api/v1/namespaces/default/evaluate', { ...req, namespaceKey: 'production' }],
    ['/api/v1/batch-evaluate', { requests: [{ ...req, namespaceKey: 'production' }] }],
    ['/api/v1/batch-evaluate', { namespaceKey: 'production', requests: [{ ...req, namespaceKey: 'default' }] }],
    ['/api/v1/namespaces/default/batch-evaluate', { requests: [req] }],
  ];
  for (const [path, body] of refused) {
    const res = await request(`${s.url}${path}`, { body, token: prod });
    t.equal(res.status, 403, `${path} ${JSON.stringify(body)}`);
    t.same(res.body, denied('production'));
  }
});
