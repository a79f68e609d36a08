/**
 * The node:http evaluation fast path answers exactly as the Koa routes do: the same requests
 * (valid and invalid) against two servers over one store, one with the fast path and one
 * without, give the same status, headers and body (request ids, timestamps and durations aside)
 * and count the same metrics. The requests: hand-written cases, then the 1,000 malformed
 * requests of the HTTP fuzz corpus (test/support/http-fuzz-corpus.ts), sent byte for byte.
 */
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { startHttpServer, type RunningHttpServer } from '../../src/server/http.js';
import { httpFuzzCorpus } from '../support/http-fuzz-corpus.js';
import { rawRequest, startTestStore } from './support.js';

interface Case {
  name: string;
  path: string;
  method?: string;
  body?: string;
  headers?: Record<string, string>;
}

const json = (v: unknown) => JSON.stringify(v);
const CASES: Case[] = [
  { name: 'variant', path: '/evaluate/v1/variant', body: json({ namespaceKey: 'default', flagKey: 'color', entityId: 'u1', context: {} }) },
  { name: 'variant with context and request id', path: '/evaluate/v1/variant', body: json({ flagKey: 'color', entityId: 'u2', context: { plan: 'pro' }, requestId: 'r-1' }) },
  { name: 'variant pretty', path: '/evaluate/v1/variant?pretty', body: json({ flagKey: 'color', entityId: 'u1' }) },
  { name: 'namespaced alias', path: '/evaluate/v1/namespaces/default/variant', body: json({ flagKey: 'color', entityId: 'u1' }) },
  { name: 'namespaced alias, other namespace in body', path: '/evaluate/v1/namespaces/default/variant', body: json({ namespaceKey: 'production', flagKey: 'color', entityId: 'u1' }) },
  { name: 'namespaced alias, unknown namespace', path: '/evaluate/v1/namespaces/nope/variant', body: json({ flagKey: 'color', entityId: 'u1' }) },
  { name: 'namespaced alias, encoded segment (Koa)', path: '/evaluate/v1/namespaces/def%61ult/variant', body: json({ flagKey: 'color', entityId: 'u1' }) },
  { name: 'boolean', path: '/evaluate/v1/boolean', body: json({ flagKey: 'new-checkout', entityId: 'u1', context: {} }) },
  { name: 'boolean on a variant flag', path: '/evaluate/v1/boolean', body: json({ flagKey: 'color', entityId: 'u1' }) },
  {
    name: 'batch',
    path: '/evaluate/v1/batch',
    body: json({ requests: [{ flagKey: 'color', entityId: 'u1', requestId: 'a' }, { flagKey: 'new-checkout', entityId: 'u1' }, { flagKey: 'missing', entityId: 'u1' }] }),
  },
  { name: 'batch without requests', path: '/evaluate/v1/batch', body: json({}) },
  { name: 'unknown flag', path: '/evaluate/v1/variant', body: json({ flagKey: 'missing', entityId: 'u1' }) },
  { name: 'unknown reference', path: '/evaluate/v1/variant', body: json({ flagKey: 'color', entityId: 'u1', reference: 'nope' }) },
  { name: 'entityId and context left out', path: '/evaluate/v1/variant', body: json({ flagKey: 'color' }) },
  { name: 'missing flagKey', path: '/evaluate/v1/variant', body: json({ entityId: 'u1' }) },
  { name: 'wrong type', path: '/evaluate/v1/variant', body: json({ flagKey: 7, entityId: 'u1' }) },
  { name: 'array body', path: '/evaluate/v1/variant', body: '[]' },
  { name: 'empty body', path: '/evaluate/v1/variant', body: '' },
  { name: 'malformed JSON, pretty', path: '/evaluate/v1/variant?pretty', body: '{"flagKey":' },
  { name: 'too deep', path: '/evaluate/v1/variant', body: `${'['.repeat(70)}${']'.repeat(70)}` },
  { name: 'form content type', path: '/evaluate/v1/variant', body: json({ flagKey: 'color', entityId: 'u1' }), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
  { name: 'latin-1 charset', path: '/evaluate/v1/variant', body: json({ flagKey: 'color', entityId: 'u1' }), headers: { 'Content-Type': 'application/json; charset=latin1' } },
  { name: 'gzip encoding', path: '/evaluate/v1/variant', body: json({ flagKey: 'color', entityId: 'u1' }), headers: { 'Content-Encoding': 'gzip' } },
  { name: 'bad query encoding', path: '/evaluate/v1/variant?x=%zz', body: json({ flagKey: 'color', entityId: 'u1' }) },
  { name: 'too large', path: '/evaluate/v1/variant', body: json({ flagKey: 'color', entityId: 'x'.repeat(1024 * 1024 + 10) }) },
  { name: 'GET (Koa: 405)', path: '/evaluate/v1/variant', method: 'GET' },
  { name: 'trailing slash (Koa)', path: '/evaluate/v1/variant/', body: json({ flagKey: 'color', entityId: 'u1' }) },
  { name: 'sane incoming request id', path: '/evaluate/v1/boolean', body: json({ flagKey: 'new-checkout', entityId: 'u1' }), headers: { 'X-Request-Id': 'abc-123' } },
];

const VOLATILE = new Set(['requestId', 'timestamp', 'requestDurationMillis']);
function scrub(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(scrub);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).filter(([k]) => !VOLATILE.has(k)).map(([k, x]) => [k, scrub(x)]));
  }
  return v;
}

const COMPARED_HEADERS = ['content-type', 'x-vexil-revision', 'connection', 'www-authenticate', 'allow', 'retry-after'];

/** What is compared of an answer: status, the meaningful headers, the body without volatile fields. */
function answerOf(status: number, header: (name: string) => string | null, text: string) {
  let body: unknown = text;
  try {
    body = scrub(JSON.parse(text));
  } catch {
    // compared as text
  }
  const headers = Object.fromEntries(COMPARED_HEADERS.map((h) => [h, header(h)]));
  return { status, headers, body, requestId: header('x-request-id'), pretty: text.includes('\n') };
}

/** Both servers count into their own registries; the same requests must count the same series. */
async function compareMetrics(t: Test, fast: RunningHttpServer, koa: RunningHttpServer): Promise<void> {
  const fastMetrics = await fast.app.vexil.metrics.registry.getSingleMetricAsString('vexil_evaluations_total');
  const koaMetrics = await koa.app.vexil.metrics.registry.getSingleMetricAsString('vexil_evaluations_total');
  t.equal(fastMetrics, koaMetrics, 'same evaluation counters');
  const routes = (s: string) =>
    s
      .split('\n')
      .filter((l) => l.startsWith('vexil_http_request_duration_seconds_count'))
      .sort()
      .join('\n');
  const fastReq = routes(await fast.app.vexil.metrics.registry.getSingleMetricAsString('vexil_http_request_duration_seconds'));
  const koaReq = routes(await koa.app.vexil.metrics.registry.getSingleMetricAsString('vexil_http_request_duration_seconds'));
  t.equal(fastReq, koaReq, 'same request histogram series and counts');
}

/** A URL the fast path takes (the others go to Koa on both servers): its exact routes, no fragment. */
const FAST_PATH_URL = /^\/evaluate\/v1\/(variant|boolean|batch|namespaces\/[A-Za-z0-9_.~-]+\/variant)(\?[^#]*)?$/;

/** Two servers over one store: the default one (fast path on) and one with the fast path off. */
async function startPair(t: Test) {
  const { store, config } = await startTestStore(t);
  const common = { store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0 };
  const fast = await startHttpServer({ ...common });
  t.teardown(() => fast.close());
  const koa = await startHttpServer({ ...common, fastPath: false });
  t.teardown(() => koa.close());
  t.equal(fast.fastPath, true, 'fast path on by default');
  t.equal(koa.fastPath, false, 'fast path off on request');
  return { fast, koa };
}

t.test('the fast path and the Koa path answer alike', async (t) => {
  const { fast, koa } = await startPair(t);

  const send = async (base: string, c: Case) => {
    const res = await fetch(`${base}${c.path}`, {
      method: c.method ?? 'POST',
      headers: c.headers ?? {},
      ...(c.body !== undefined ? { body: c.body } : {}),
    });
    return answerOf(res.status, (h) => res.headers.get(h), await res.text());
  };

  for (const c of CASES) {
    const a = await send(fast.url, c);
    const b = await send(koa.url, c);
    t.same(a, { ...b, requestId: a.requestId }, c.name);
    t.ok(a.requestId !== null && a.requestId !== '', `${c.name}: X-Request-Id`);
    if (c.headers?.['X-Request-Id'] !== undefined) t.equal(a.requestId, c.headers['X-Request-Id'], `${c.name}: incoming id echoed`);
  }

  await compareMetrics(t, fast, koa);
  const fastReq = await fast.app.vexil.metrics.registry.getSingleMetricAsString('vexil_http_request_duration_seconds');
  t.match(fastReq, /route="\/evaluate\/v1\/namespaces\/:namespaceKey\/variant"/);
});

t.test('the fast path and the Koa path answer the 1,000-request HTTP fuzz corpus alike', async (t) => {
  const { fast, koa } = await startPair(t);
  const corpus = httpFuzzCorpus();
  const send = async (base: string, c: (typeof corpus)[number]) => {
    const res = await rawRequest(base, { method: c.method, path: c.path, ...(c.body !== undefined ? { body: c.body } : {}) });
    const header = (h: string) => {
      const v = res.headers[h];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    };
    return answerOf(res.status, header, res.text);
  };

  let differences = 0;
  let fastPathCases = 0;
  for (const [i, c] of corpus.entries()) {
    const a = await send(fast.url, c);
    const b = await send(koa.url, c);
    if (c.method === 'POST' && FAST_PATH_URL.test(c.path)) fastPathCases++;
    const same = t.same(a, { ...b, requestId: a.requestId }, `case ${i}: ${c.method} ${c.path.slice(0, 80)}`);
    const ids = a.requestId !== null && a.requestId !== '' && b.requestId !== null && b.requestId !== '';
    if (!ids) t.fail(`case ${i}: X-Request-Id on both`);
    // A handful of differences says what is wrong; a thousand would bury it.
    if ((!same || !ids) && ++differences >= 5) break;
  }
  t.equal(differences, 0, `all ${corpus.length} answers alike`);
  t.ok(fastPathCases >= 200, `${fastPathCases} of them on the fast path's routes`);
  await compareMetrics(t, fast, koa);
});

t.test('two fast-path servers in one process count into their own metrics', async (t) => {
  const { store, config } = await startTestStore(t);
  const common = { store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0 };
  const a = await startHttpServer({ ...common });
  t.teardown(() => a.close());
  const b = await startHttpServer({ ...common });
  t.teardown(() => b.close());
  const body = JSON.stringify({ flagKey: 'color', entityId: 'u1' });
  for (const [server, n] of [[a, 2], [b, 3]] as const) {
    for (let i = 0; i < n; i++) t.equal((await fetch(`${server.url}/evaluate/v1/variant`, { method: 'POST', body })).status, 200);
  }
  for (const [server, n] of [[a, 2], [b, 3]] as const) {
    const req = await server.app.vexil.metrics.registry.getSingleMetricAsString('vexil_http_request_duration_seconds');
    t.match(req, new RegExp(`vexil_http_request_duration_seconds_count\\{[^}]*route="/evaluate/v1/variant"[^}]*\\} ${n}(\\n|$)`));
    const evals = await server.app.vexil.metrics.registry.getSingleMetricAsString('vexil_evaluations_total');
    t.match(evals, new RegExp(`flag="color"[^}]*\\} ${n}(\\n|$)`));
  }
});
