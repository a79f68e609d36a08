/**
 * CORS (`cors.*`, src/server/pipeline/cors.ts) over plain HTTP on both server paths: the evaluation fast
 * path (src/server/fast-path/) and the Koa app (every other route, and evaluations with the fast path off).
 * Preflights answer 204 with the methods and the headers real clients send; actual answers,
 * errors included (JSON errors, the raw server's 417 and 431), carry the CORS headers for an
 * allowed origin; a disallowed origin gets none and is served as usual. With authentication
 * required, a preflight needs no token. The browser side: test/server/cors-browser.test.ts.
 */
import t, { type Test } from 'tap';
import type { CorsConfig } from '../../src/config/types.js';
import { CLIENT_REQUEST_HEADERS } from '../../src/server/pipeline/cors.js';
import { startHttpServer } from '../../src/server/listen.js';
import { pino } from 'pino';
import { startAuthServer } from '../auth/support.js';
import { call, parseRawResponse, rawExchange, rawRequest, startTestStore } from './support.js';

const PAGE = 'http://localhost:5173';
const OTHER = 'http://evil.example';
const EVALUATION = { namespaceKey: 'default', flagKey: 'color', entityId: 'u1', context: { plan: 'pro' } };

async function corsServer(t: Test, cors: Partial<CorsConfig> | undefined, fastPath: boolean): Promise<string> {
  const { config, store } = await startTestStore(t);
  if (cors !== undefined) config.cors = { enabled: true, allowed_origins: ['*'], allowed_headers: [], ...cors };
  const server = await startHttpServer({ store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0, fastPath });
  t.teardown(() => server.close());
  t.equal(server.fastPath, fastPath, fastPath ? 'evaluations on the fast path' : 'evaluations on the Koa path');
  return server.url;
}

const evaluate = (url: string, origin: string | undefined, body: unknown = EVALUATION) =>
  call(`${url}/evaluate/v1/variant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(origin !== undefined ? { origin } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const preflight = (url: string, path: string, origin: string, method = 'POST', headers = 'content-type, authorization') =>
  call(`${url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });

const listOf = (value: string | null) => (value ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');

for (const fastPath of [true, false]) {
  const where = fastPath ? 'fast path' : 'Koa path';

  t.test(`${where}: off by default: no CORS headers, OPTIONS not answered as a preflight`, async (t) => {
    const url = await corsServer(t, undefined, fastPath);
    const ok = await evaluate(url, PAGE);
    t.equal(ok.status, 200);
    t.equal(ok.headers.get('access-control-allow-origin'), null);
    t.equal(ok.headers.get('vary'), null);
    const pre = await preflight(url, '/evaluate/v1/variant', PAGE);
    t.not(pre.status, 204);
    t.equal(pre.headers.get('access-control-allow-origin'), null);
  });

  t.test(`${where}: "*": every origin, without credentials; errors carry the headers too`, async (t) => {
    const url = await corsServer(t, { allowed_origins: ['*'] }, fastPath);
    const ok = await evaluate(url, PAGE);
    t.equal(ok.status, 200);
    t.equal(ok.body.flagKey, 'color');
    t.equal(ok.headers.get('access-control-allow-origin'), '*');
    t.equal(ok.headers.get('access-control-allow-credentials'), null, 'never credentials with *');
    t.same(listOf(ok.headers.get('access-control-expose-headers')).sort(), ['etag', 'retry-after', 'x-request-id', 'x-vexil-revision']);
    t.equal(ok.headers.get('vary'), null, 'the answer does not depend on Origin');

    const noOrigin = await evaluate(url, undefined);
    t.equal(noOrigin.headers.get('access-control-allow-origin'), '*', 'the same answer without Origin, so a cache may share it');

    const badJson = await evaluate(url, PAGE, '{"flagKey":');
    t.equal(badJson.status, 400);
    t.equal(badJson.body.code, 3);
    t.equal(badJson.headers.get('access-control-allow-origin'), '*', '400 from the body reader');

    const missing = await evaluate(url, PAGE, { ...EVALUATION, flagKey: 'nope' });
    t.equal(missing.status, 404);
    t.equal(missing.headers.get('access-control-allow-origin'), '*', '404 from the evaluation');

    const badPath = await rawRequest(url, { method: 'POST', path: '/evaluate/v1/namespaces/%zz/variant', headers: { origin: PAGE } });
    t.equal(badPath.status, 400);
    t.equal(badPath.headers['access-control-allow-origin'], '*', '400 from the URL check');
  });

  t.test(`${where}: a list: the allowed origin echoed with credentials, Vary: Origin; others get no CORS headers and are served`, async (t) => {
    const url = await corsServer(t, { allowed_origins: [PAGE, 'https://*.example.test'] }, fastPath);
    const ok = await evaluate(url, PAGE);
    t.equal(ok.status, 200);
    t.equal(ok.headers.get('access-control-allow-origin'), PAGE);
    t.equal(ok.headers.get('access-control-allow-credentials'), 'true');
    t.match(ok.headers.get('access-control-expose-headers'), /ETag/);
    t.same(listOf(ok.headers.get('vary')), ['origin']);

    const pattern = await evaluate(url, 'https://app.eu.example.test');
    t.equal(pattern.headers.get('access-control-allow-origin'), 'https://app.eu.example.test', 'one * in an entry stands for any text');
    const bare = await evaluate(url, 'https://.example.test');
    t.equal(bare.headers.get('access-control-allow-origin'), null, 'the * stands for at least one character');

    const other = await evaluate(url, OTHER);
    t.equal(other.status, 200, 'served as usual: CORS is for browsers');
    t.equal(other.body.flagKey, 'color');
    t.equal(other.headers.get('access-control-allow-origin'), null);
    t.equal(other.headers.get('access-control-allow-credentials'), null);
    t.same(listOf(other.headers.get('vary')), ['origin'], 'Vary on every answer, so a cache keeps origins apart');

    const missing = await evaluate(url, PAGE, { ...EVALUATION, flagKey: 'nope' });
    t.equal(missing.status, 404);
    t.equal(missing.headers.get('access-control-allow-origin'), PAGE);
    t.equal(missing.headers.get('access-control-allow-credentials'), 'true');

    const upper = await evaluate(url, 'HTTP://LOCALHOST:5173');
    t.equal(upper.headers.get('access-control-allow-origin'), 'HTTP://LOCALHOST:5173', 'compared in lower case, echoed as sent');
  });
}

t.test('preflight: 204 before routing, every client header and method allowed, cached for 600 s', async (t) => {
  const url = await corsServer(t, { allowed_origins: ['*'], allowed_headers: ['X-Custom-Trace'] }, true);
  for (const path of ['/evaluate/v1/variant', '/internal/v1/evaluation/snapshot/namespace/default', '/api/v1/namespaces', '/no/such/path']) {
    const res = await preflight(url, path, PAGE, 'GET', CLIENT_REQUEST_HEADERS.join(', '));
    t.equal(res.status, 204, path);
    t.equal(res.text, '');
    t.equal(res.headers.get('access-control-allow-origin'), '*');
    t.equal(res.headers.get('access-control-allow-credentials'), null);
    t.equal(res.headers.get('access-control-max-age'), '600');
    t.same(listOf(res.headers.get('access-control-allow-methods')).sort(), ['delete', 'get', 'head', 'post', 'put']);
    const allowed = listOf(res.headers.get('access-control-allow-headers'));
    for (const h of [
      'authorization',
      'content-type',
      'if-none-match',
      'x-flipt-accept-server-version',
      'x-flipt-environment',
      'x-flipt-namespace',
      'x-svc-accept-server-version',
      'x-svc-environment',
      'x-svc-namespace',
      'x-svc-reference',
      'x-flipt-reference',
      'x-request-id',
      'accept',
      'x-custom-trace',
    ]) {
      t.ok(allowed.includes(h), `${path}: allows ${h}`);
    }
    t.ok(res.headers.get('x-request-id'), 'logged and identified like any request');
  }
  // OPTIONS without Access-Control-Request-Method is no preflight: the router answers it (not 204), with CORS headers.
  const plain = await call(`${url}/evaluate/v1/variant`, { method: 'OPTIONS', headers: { origin: PAGE } });
  t.not(plain.status, 204);
  t.equal(plain.headers.get('access-control-allow-origin'), '*');
});

t.test('preflight from a disallowed origin: 204 without CORS headers (the browser then refuses)', async (t) => {
  const url = await corsServer(t, { allowed_origins: [PAGE] }, true);
  const res = await preflight(url, '/evaluate/v1/variant', OTHER);
  t.equal(res.status, 204);
  t.equal(res.headers.get('access-control-allow-origin'), null);
  t.equal(res.headers.get('access-control-allow-methods'), null);
  t.same(listOf(res.headers.get('vary')), ['origin']);
  const allowed = await preflight(url, '/evaluate/v1/variant', PAGE);
  t.equal(allowed.headers.get('access-control-allow-origin'), PAGE);
  t.equal(allowed.headers.get('access-control-allow-credentials'), 'true');
});

t.test('raw server answers: 417 (Expect) echoes the origin; 431 (unparsable headers) carries * only', async (t) => {
  for (const origins of [['*'], [PAGE]]) {
    const url = await corsServer(t, { allowed_origins: origins }, true);
    const { port } = new URL(url);
    const expect = parseRawResponse(
      await rawExchange(url, `POST /evaluate/v1/variant HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: ${PAGE}\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n`),
    );
    t.equal(expect.status, 417);
    t.equal(expect.headers.get('access-control-allow-origin'), origins[0] === '*' ? '*' : PAGE, `417 with ${origins[0]}`);

    const huge = parseRawResponse(
      await rawExchange(url, `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: ${PAGE}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    t.equal(huge.status, 431);
    t.equal(huge.headers.get('access-control-allow-origin'), origins[0] === '*' ? '*' : undefined, `431 with ${origins[0]}`);
  }
});

t.test('authentication required: a preflight needs no token; 401 answers carry the CORS headers', async (t) => {
  const server = await startAuthServer(t, {
    yaml: [
      'authentication:',
      '  required: true',
      '  methods:',
      '    token:',
      '      enabled: true',
      '      bootstrap:',
      '        token: s3cret',
      'cors:',
      '  enabled: true',
      `  allowed_origins: ["${PAGE}"]`,
      '',
    ].join('\n'),
  });
  t.ok(server.http.fastPath, 'evaluations on the fast path, gated');
  for (const path of ['/evaluate/v1/variant', '/api/v1/namespaces', '/auth/v1/self']) {
    const pre = await preflight(server.url, path, PAGE, 'POST', 'authorization, content-type');
    t.equal(pre.status, 204, `${path}: preflight without a token`);
    t.equal(pre.headers.get('access-control-allow-origin'), PAGE);
    t.ok(listOf(pre.headers.get('access-control-allow-headers')).includes('authorization'));
  }
  const refused = await evaluate(server.url, PAGE);
  t.equal(refused.status, 401);
  t.equal(refused.headers.get('access-control-allow-origin'), PAGE, 'the page can read why it was refused');
  t.equal(refused.headers.get('access-control-allow-credentials'), 'true');
  const refusedKoa = await call(`${server.url}/api/v1/namespaces`, { headers: { origin: PAGE } });
  t.equal(refusedKoa.status, 401);
  t.equal(refusedKoa.headers.get('access-control-allow-origin'), PAGE);

  const ok = await call(`${server.url}/evaluate/v1/variant`, {
    method: 'POST',
    headers: { origin: PAGE, authorization: 'Bearer s3cret', 'content-type': 'application/json' },
    body: JSON.stringify(EVALUATION),
  });
  t.equal(ok.status, 200);
  t.equal(ok.headers.get('access-control-allow-origin'), PAGE);
  const notPreflight = await call(`${server.url}/evaluate/v1/variant`, { method: 'OPTIONS', headers: { origin: PAGE } });
  t.equal(notPreflight.status, 401, 'an OPTIONS that is no preflight still needs a token');
});
