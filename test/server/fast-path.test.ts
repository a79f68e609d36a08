/**
 * The node:http fast path answers exactly as the Koa routes do: the same requests (valid and
 * invalid) against two servers over one store, one with the fast path and one without, give the
 * same status line, the same headers in the same order with the same values, and the same body
 * (request ids, Date, timestamps and durations aside), and count the same metrics. The routes:
 * every row of the hot-route table (src/server/hot-routes.ts: evaluation, OFREP single flag, the
 * client snapshot's v1 and v2 paths). Each row needs a hand-written case it answers with success
 * (the test fails for a row without one), and from that case each row gets the same set of
 * variations (pretty, a bad query, a trailing slash, an encoded segment, another method, broken
 * bodies, HEAD, If-None-Match), so a new row is covered as soon as it has one case. Then the
 * 1,000 malformed requests of the HTTP fuzz corpus and 1,000 of its client-route corpus
 * (test/support/http-fuzz-corpus.ts), sent byte for byte; with CORS on; with authentication
 * required (tokens, namespace-scoped tokens).
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { startAuthentication } from '../../src/auth/setup.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config, CorsConfig } from '../../src/config/types.js';
import { createFastPath } from '../../src/server/fast-path/serve.js';
import { hotRouteMatcher } from '../../src/server/fast-path/match.js';
import { hotRoutes } from '../../src/server/hot-routes.js';
import type { AnyHotRoute } from '../../src/server/pipeline/hot-route.js';
import { createHealth } from '../../src/server/pipeline/health.js';
import { startHttpServer, type RunningHttpServer } from '../../src/server/listen.js';
import { createServerMetrics } from '../../src/server/pipeline/metrics.js';
import { createLocalSource } from '../../src/sources/local.js';
import { createSnapshotStore } from '../../src/store/snapshot-store.js';
import type { SnapshotStore } from '../../src/store/types.js';
import { createToken } from '../auth/support.js';
import { httpFuzzCorpus } from '../support/http-fuzz-corpus.js';
import { FIXTURES, startTestStore } from './support.js';

interface Case {
  name: string;
  path: string;
  method?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

const json = (v: unknown) => JSON.stringify(v);
const EVALUATION_CASES: Case[] = [
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
  { name: 'null context value (as "")', path: '/evaluate/v1/variant', body: json({ flagKey: 'color', entityId: 'u1', context: { plan: null } }) },
  { name: 'null context value in a batch item', path: '/evaluate/v1/batch', body: json({ requests: [{ flagKey: 'new-checkout', entityId: 'u1', context: { plan: null } }] }) },
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

const OFREP = '/ofrep/v1/evaluate/flags';
const ofrepBody = (context: Record<string, unknown>) => json({ context });
const OFREP_CASES: Case[] = [
  { name: 'OFREP variant flag', path: `${OFREP}/color`, body: ofrepBody({ targetingKey: 'u1', plan: 'pro' }) },
  { name: 'OFREP boolean flag', path: `${OFREP}/new-checkout`, body: ofrepBody({ targetingKey: 'u1' }) },
  { name: 'OFREP typed context values', path: `${OFREP}/color`, body: ofrepBody({ targetingKey: 'u2', age: 42, beta: true, gone: null }) },
  { name: 'OFREP without targetingKey', path: `${OFREP}/color`, body: ofrepBody({}) },
  { name: 'OFREP empty body', path: `${OFREP}/color`, body: '' },
  { name: 'OFREP pretty', path: `${OFREP}/color?pretty`, body: ofrepBody({ targetingKey: 'u1' }) },
  { name: 'OFREP unknown flag', path: `${OFREP}/missing`, body: ofrepBody({ targetingKey: 'u1' }) },
  { name: 'OFREP namespace header', path: `${OFREP}/color`, body: ofrepBody({ targetingKey: 'u1' }), headers: { 'X-Flipt-Namespace': 'production' } },
  { name: 'OFREP unknown namespace', path: `${OFREP}/color`, body: ofrepBody({ targetingKey: 'u1' }), headers: { 'X-Svc-Namespace': 'nope' } },
  { name: 'OFREP namespace twins disagree', path: `${OFREP}/color`, body: ofrepBody({}), headers: { 'X-Svc-Namespace': 'default', 'X-Flipt-Namespace': 'production' } },
  { name: 'OFREP reference header', path: `${OFREP}/color`, body: ofrepBody({}), headers: { 'X-Svc-Reference': 'local' } },
  { name: 'OFREP unknown reference header', path: `${OFREP}/color`, body: ofrepBody({}), headers: { 'X-Flipt-Reference': 'nope' } },
  { name: 'OFREP unknown ?reference=', path: `${OFREP}/color?reference=nope`, body: ofrepBody({}) },
  { name: 'OFREP environment header', path: `${OFREP}/color`, body: ofrepBody({}), headers: { 'X-Flipt-Environment': 'staging' } },
  { name: 'OFREP unknown environment', path: `${OFREP}/color`, body: ofrepBody({}), headers: { 'X-Svc-Environment': 'nope' } },
  { name: 'OFREP environment of an unknown reference', path: `${OFREP}/color`, body: ofrepBody({}), headers: { 'X-Svc-Environment': 'broken' } },
  { name: 'OFREP object in the context', path: `${OFREP}/color`, body: ofrepBody({ targetingKey: 'u1', nested: { a: 1 } }) },
  { name: 'OFREP context not an object', path: `${OFREP}/color`, body: json({ context: [1] }) },
  { name: 'OFREP array body', path: `${OFREP}/color`, body: '[]' },
  { name: 'OFREP malformed JSON', path: `${OFREP}/color?pretty`, body: '{"context":' },
  { name: 'OFREP too large', path: `${OFREP}/color`, body: ofrepBody({ targetingKey: 'x'.repeat(1024 * 1024 + 10) }) },
  { name: 'OFREP bad query encoding', path: `${OFREP}/color?reference=%zz`, body: ofrepBody({}) },
  { name: 'OFREP encoded key (Koa)', path: `${OFREP}/c%6Flor`, body: ofrepBody({}) },
  { name: 'OFREP trailing slash (Koa)', path: `${OFREP}/color/`, body: ofrepBody({}) },
  { name: 'OFREP GET (Koa: 405)', path: `${OFREP}/color`, method: 'GET' },
];

const V1 = '/internal/v1/evaluation/snapshot/namespace';
const V2 = '/client/v2/environments';
/** The client snapshot cases; `etag` is the default namespace's, `prodEtag` production's. */
function snapshotCases(etag: string, prodEtag: string): Case[] {
  const cases: Case[] = [
    { name: 'snapshot v1', path: `${V1}/default` },
    { name: 'snapshot v1, other namespace', path: `${V1}/production` },
    { name: 'snapshot v1 pretty', path: `${V1}/default?pretty` },
    { name: 'snapshot v1 304', path: `${V1}/default`, headers: { 'If-None-Match': etag } },
    { name: 'snapshot v1 304, quoted and weak', path: `${V1}/default`, headers: { 'If-None-Match': `W/"${etag}"` } },
    { name: 'snapshot v1 304, in a list', path: `${V1}/default`, headers: { 'If-None-Match': `"x", ${etag}` } },
    { name: 'snapshot v1 304, *', path: `${V1}/default`, headers: { 'If-None-Match': '*' } },
    { name: 'snapshot v1, another namespace ETag', path: `${V1}/default`, headers: { 'If-None-Match': prodEtag } },
    { name: 'snapshot v1 HEAD', path: `${V1}/default`, method: 'HEAD' },
    { name: 'snapshot v1 HEAD 304', path: `${V1}/default`, method: 'HEAD', headers: { 'If-None-Match': etag } },
    { name: 'snapshot v1 HEAD, unknown namespace', path: `${V1}/nope`, method: 'HEAD' },
    { name: 'snapshot v1, unknown namespace', path: `${V1}/nope` },
    { name: 'snapshot v1, unknown namespace, pretty', path: `${V1}/nope?pretty` },
    { name: 'snapshot v1 ?reference=', path: `${V1}/default?reference=local`, headers: { 'If-None-Match': etag } },
    { name: 'snapshot v1 empty ?reference=', path: `${V1}/default?reference=` },
    { name: 'snapshot v1 unknown ?reference=', path: `${V1}/default?reference=nope` },
    { name: 'snapshot v1 environment header', path: `${V1}/default`, headers: { 'X-Flipt-Environment': 'staging', 'If-None-Match': etag } },
    { name: 'snapshot v1 environment twin', path: `${V1}/default`, headers: { 'X-Svc-Environment': 'default' } },
    { name: 'snapshot v1 unknown environment', path: `${V1}/default`, headers: { 'X-Svc-Environment': 'nope' } },
    { name: 'snapshot v1 environment of an unknown reference', path: `${V1}/default`, headers: { 'X-Flipt-Environment': 'broken' } },
    { name: 'snapshot v1 environment twins disagree', path: `${V1}/default`, headers: { 'X-Flipt-Environment': 'staging', 'X-Svc-Environment': 'default' } },
    { name: 'snapshot v1 ?reference= over the environment header', path: `${V1}/default?reference=local`, headers: { 'X-Flipt-Environment': 'nope' } },
    { name: 'snapshot v1 bad query encoding', path: `${V1}/default?reference=%zz` },
    { name: 'snapshot v1 encoded segment (Koa)', path: `${V1}/def%61ult` },
    { name: 'snapshot v1 trailing slash (Koa)', path: `${V1}/default/` },
    { name: 'snapshot v1 POST (Koa: 405)', path: `${V1}/default`, method: 'POST', body: '{}' },
    { name: 'snapshot v2', path: `${V2}/default/namespaces/default/snapshot` },
    { name: 'snapshot v2 mapped environment, 304', path: `${V2}/staging/namespaces/default/snapshot`, headers: { 'If-None-Match': etag } },
    { name: 'snapshot v2 HEAD', path: `${V2}/default/namespaces/production/snapshot`, method: 'HEAD' },
    { name: 'snapshot v2 unknown environment', path: `${V2}/nope/namespaces/default/snapshot` },
    { name: 'snapshot v2 unknown environment, ?reference=', path: `${V2}/nope/namespaces/default/snapshot?reference=local` },
    { name: 'snapshot v2 ?reference= over the environment', path: `${V2}/broken/namespaces/default/snapshot?reference=local` },
    { name: 'snapshot v2 environment of an unknown reference', path: `${V2}/broken/namespaces/default/snapshot` },
    { name: 'snapshot v2 unknown namespace', path: `${V2}/default/namespaces/nope/snapshot` },
    { name: 'snapshot v2 environment header ignored', path: `${V2}/default/namespaces/default/snapshot`, headers: { 'X-Flipt-Environment': 'nope' } },
    { name: 'snapshot v2 "namespaces" as environment', path: `${V2}/namespaces/namespaces/default/snapshot` },
    { name: 'snapshot v2 extra segment (Koa: 404)', path: `${V2}/default/namespaces/a/b/snapshot` },
  ];
  return cases.map((c) => ({ method: 'GET', ...c }));
}

interface RawAnswer {
  status: number;
  statusMessage: string;
  rawHeaders: string[];
  text: string;
}

/** One request with exactly these bytes (fetch would normalise some), and the raw answer. */
function exchange(base: string, c: Case): Promise<RawAnswer> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method: c.method ?? 'POST', path: c.path, headers: c.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (b: Buffer) => chunks.push(b));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, statusMessage: res.statusMessage ?? '', rawHeaders: res.rawHeaders, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    if (c.body !== undefined) req.write(c.body);
    req.end();
  });
}

const VOLATILE = new Set(['requestId', 'timestamp', 'requestDurationMillis']);
/** `v` without its volatile fields; `found.any` is set when it had one. */
function scrub(v: unknown, found: { any: boolean }): unknown {
  if (Array.isArray(v)) return v.map((x) => scrub(x, found));
  if (v !== null && typeof v === 'object') {
    const kept = Object.entries(v).filter(([k]) => !VOLATILE.has(k) || !(found.any = true));
    return Object.fromEntries(kept.map(([k, x]) => [k, scrub(x, found)]));
  }
  return v;
}

/** Headers whose values differ between any two answers: compared by name and position only. */
const VOLATILE_HEADERS = new Set(['date', 'x-request-id']);

/**
 * What is compared of an answer: the status line, every header in order (the volatile ones by
 * name only; Content-Length too when the body has volatile fields, whose lengths vary), the body
 * (JSON without volatile fields, else the text) and whether it is indented.
 */
function answerOf(a: RawAnswer) {
  let body: unknown = a.text;
  const found = { any: false };
  try {
    body = scrub(JSON.parse(a.text), found);
  } catch {
    // compared as text
  }
  const headers: string[] = [];
  for (let i = 0; i < a.rawHeaders.length; i += 2) {
    const name = a.rawHeaders[i]!;
    const volatile = VOLATILE_HEADERS.has(name.toLowerCase()) || (found.any && name.toLowerCase() === 'content-length');
    headers.push(`${name}: ${volatile ? '…' : a.rawHeaders[i + 1]}`);
  }
  const id = a.rawHeaders.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === 'x-request-id');
  return { status: `${a.status} ${a.statusMessage}`, headers, body, pretty: a.text.includes('\n'), requestId: id === -1 ? null : a.rawHeaders[id + 1]! };
}

/** Both servers count into their own registries; the same requests must count the same series. */
async function compareMetrics(t: Test, fast: RunningHttpServer, koa: RunningHttpServer): Promise<void> {
  const fastMetrics = await fast.app.vexil.metrics.registry.getSingleMetricAsString('vexil_evaluations_total');
  const koaMetrics = await koa.app.vexil.metrics.registry.getSingleMetricAsString('vexil_evaluations_total');
  t.equal(fastMetrics, koaMetrics, 'same evaluation counters');
  const routes = (s: string) =>
    s
      .split('\n')
      // Token creation (/auth/v1, Koa on both) is the test's setup, made through one server.
      .filter((l) => l.startsWith('vexil_http_request_duration_seconds_count') && !l.includes('route="/auth/v1/'))
      .sort()
      .join('\n');
  const fastReq = routes(await fast.app.vexil.metrics.registry.getSingleMetricAsString('vexil_http_request_duration_seconds'));
  const koaReq = routes(await koa.app.vexil.metrics.registry.getSingleMetricAsString('vexil_http_request_duration_seconds'));
  t.equal(fastReq, koaReq, 'same request histogram series and counts');
}

/** Environments of every pair: one naming the local backend's reference, one naming none. */
const ENVIRONMENTS: Config['environments'] = { staging: { reference: 'local' }, broken: { reference: 'nope' } };

interface Pair {
  fast: RunningHttpServer;
  koa: RunningHttpServer;
  store: SnapshotStore;
}

/** Two servers over one store: the default one (fast path on) and one with the fast path off. */
async function startPair(t: Test, cors?: Partial<CorsConfig>): Promise<Pair> {
  const { store, config } = await startTestStore(t);
  config.environments = ENVIRONMENTS;
  if (cors !== undefined) config.cors = { enabled: true, allowed_origins: ['*'], allowed_headers: [], ...cors };
  const common = { store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0 };
  const fast = await startHttpServer({ ...common });
  t.teardown(() => fast.close());
  const koa = await startHttpServer({ ...common, fastPath: false });
  t.teardown(() => koa.close());
  t.equal(fast.fastPath, true, 'fast path on by default');
  t.equal(koa.fastPath, false, 'fast path off on request');
  return { fast, koa, store };
}

const BOOTSTRAP = 'fast-path-bootstrap-token-0123456789abcdef';

/** The same pair with authentication required (token method, a bootstrap token) and one auth store. */
async function startAuthPair(t: Test): Promise<Pair> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-fast-auth-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(FIXTURES, 'api'), join(dir, 'state'), { recursive: true });
  const file = join(dir, 'vexil.yml');
  writeFileSync(
    file,
    [
      'data_dir: data',
      'storage:',
      '  local:',
      '    path: state',
      'authentication:',
      '  required: true',
      '  methods:',
      '    token:',
      '      enabled: true',
      '      bootstrap:',
      `        token: ${BOOTSTRAP}`,
      '',
    ].join('\n'),
  );
  const config = loadConfig({ file, cwd: dir, env: {} });
  config.environments = ENVIRONMENTS;
  const logger = pino({ level: 'silent' });
  const store = createSnapshotStore({ source: createLocalSource({ path: join(dir, 'state'), maxFileSize: config.storage.max_file_size }), debounceMs: 20 });
  t.teardown(() => store.close());
  await store.start();
  const runtime = await startAuthentication({ config, logger, cwd: dir, cleanup: false });
  t.teardown(() => runtime.close());
  const common = { store, config, logger, authGate: runtime.gate, auth: runtime.routes, host: '127.0.0.1', port: 0 };
  const fast = await startHttpServer({ ...common });
  t.teardown(() => fast.close());
  const koa = await startHttpServer({ ...common, fastPath: false });
  t.teardown(() => koa.close());
  t.equal(fast.fastPath, true, 'the auth middleware exposes its gate, so the fast path is on');
  return { fast, koa, store };
}

/** Every hand-written case, the snapshot ones with the state's real ETags. */
async function allCases(pair: Pair): Promise<Case[]> {
  // Asked of both servers, so that both count the same requests.
  const etagOf = async (ns: string) => {
    const [a, b] = await Promise.all([pair.fast, pair.koa].map((s) => fetch(`${s.url}${V1}/${ns}`)));
    await Promise.all([a!.arrayBuffer(), b!.arrayBuffer()]);
    return a!.headers.get('etag')!;
  };
  return [...EVALUATION_CASES, ...OFREP_CASES, ...snapshotCases(await etagOf('default'), await etagOf('production'))];
}

/**
 * Sends each case to both servers and compares the answers; returns how many differed (stops
 * after 5). `seen` gets each case's status on the fast path.
 */
async function replay(t: Test, pair: Pair, cases: readonly Case[], seen?: (c: Case, status: number) => void): Promise<number> {
  let differences = 0;
  for (const c of cases) {
    const rawA = await exchange(pair.fast.url, c);
    seen?.(c, rawA.status);
    const a = answerOf(rawA);
    const b = answerOf(await exchange(pair.koa.url, c));
    const length = rawA.rawHeaders.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === 'content-length');
    if (length !== -1 && c.method !== 'HEAD' && Number(rawA.rawHeaders[length + 1]) !== Buffer.byteLength(rawA.text)) {
      t.fail(`${c.name}: Content-Length is the body's length`);
    }
    const same = t.same(a, { ...b, requestId: a.requestId }, c.name);
    const ids = a.requestId !== null && a.requestId !== '' && b.requestId !== null && b.requestId !== '';
    if (!ids) t.fail(`${c.name}: X-Request-Id on both`);
    if (c.headers?.['X-Request-Id'] !== undefined) t.equal(a.requestId, c.headers['X-Request-Id'], `${c.name}: incoming id echoed`);
    // A handful of differences says what is wrong; a thousand would bury it.
    if ((!same || !ids) && ++differences >= 5) break;
  }
  return differences;
}

/** The row of the server's hot-route table that its fast path serves a case with; undefined: Koa serves it on both servers. */
function rowOf(pair: Pair, c: Case): AnyHotRoute | undefined {
  if (c.path.includes('#')) return undefined;
  const q = c.path.indexOf('?');
  return hotRouteMatcher(pair.fast.app.vexil.hotRoutes).match(c.method ?? 'POST', q === -1 ? c.path : c.path.slice(0, q))?.route;
}
const onFastPath = (pair: Pair, c: Case) => rowOf(pair, c) !== undefined;

/**
 * The variations every row gets, made from one of its successful cases: the row's pattern and
 * method decide them, so a new row gets them all.
 */
function variationsOf(route: AnyHotRoute, c: Case): Case[] {
  const [path, query] = c.path.split('?') as [string, string | undefined];
  const withQuery = (q: string) => `${path}?${query !== undefined ? `${query}&` : ''}${q}`;
  // The first parameter's segment, its first character percent-encoded: Koa decodes it, the fast path leaves it.
  const first = route.pattern.split('/').findIndex((s) => s.startsWith(':'));
  const segments = path.split('/');
  const encoded = first === -1 ? undefined : segments.map((s, i) => (i === first && s !== '' ? `%${s.charCodeAt(0).toString(16).toUpperCase()}${s.slice(1)}` : s)).join('/');
  const name = `${route.method} ${route.pattern}`;
  const out: Case[] = [
    { ...c, name: `${name}: pretty`, path: withQuery('pretty') },
    { ...c, name: `${name}: bad query encoding`, path: withQuery('x=%zz') },
    { ...c, name: `${name}: repeated query parameter`, path: withQuery('reference=&reference=nope') },
    { ...c, name: `${name}: trailing slash (Koa)`, path: `${path}/` },
    { ...c, name: `${name}: double slash (Koa)`, path: path.replace(/\/([^/]*)$/, '//$1') },
    { ...c, name: `${name}: a sane request id`, headers: { ...c.headers, 'X-Request-Id': 'row-case-1' } },
    // Replaced by a generated id on both paths (named in lower case: replay's echo check is for sane ids).
    { ...c, name: `${name}: an insane request id`, headers: { ...c.headers, 'x-request-id': 'x'.repeat(300) } },
  ];
  if (encoded !== undefined) out.push({ ...c, name: `${name}: encoded segment (Koa)`, path: encoded });
  if (route.method === 'POST') {
    out.push(
      { ...c, name: `${name}: GET (Koa: 405)`, method: 'GET', body: undefined },
      { ...c, name: `${name}: empty body`, body: '' },
      { ...c, name: `${name}: array body`, body: '[]' },
      { ...c, name: `${name}: malformed JSON`, body: '{"x":' },
      { ...c, name: `${name}: too deep`, body: `${'['.repeat(70)}${']'.repeat(70)}` },
      { ...c, name: `${name}: too large`, body: json({ x: 'x'.repeat(1024 * 1024 + 10) }) },
      { ...c, name: `${name}: form content type`, headers: { ...c.headers, 'Content-Type': 'application/x-www-form-urlencoded' } },
      { ...c, name: `${name}: gzip encoding`, headers: { ...c.headers, 'Content-Encoding': 'gzip' } },
    );
  } else {
    out.push(
      { ...c, name: `${name}: HEAD`, method: 'HEAD' },
      { ...c, name: `${name}: If-None-Match *`, headers: { ...c.headers, 'If-None-Match': '*' } },
      { ...c, name: `${name}: If-None-Match other`, headers: { ...c.headers, 'If-None-Match': '"nope"' } },
      { ...c, name: `${name}: POST (Koa: 405)`, method: 'POST', body: '{}' },
    );
  }
  return out.map((v) => (v.body === undefined ? (({ body: _b, ...rest }) => rest)(v) : v));
}

t.test('every row of the hot-route table: a successful case, its variations, answered alike', async (t) => {
  const pair = await startPair(t);
  const table = pair.fast.app.vexil.hotRoutes;
  t.same(
    pair.koa.app.vexil.hotRoutes.map((r) => `${r.method} ${r.pattern}`),
    table.map((r) => `${r.method} ${r.pattern}`),
    'both servers mount the same table',
  );
  t.ok(table.length >= 7, `${table.length} rows`);
  const cases = await allCases(pair);
  const ok = new Map<AnyHotRoute, Case>();
  t.equal(
    await replay(t, pair, cases, (c, status) => {
      const row = rowOf(pair, c);
      if (row !== undefined && status === 200 && !ok.has(row)) ok.set(row, c);
    }),
    0,
    `all ${cases.length} hand-written answers alike`,
  );
  for (const route of table) t.ok(ok.has(route), `${route.method} ${route.pattern}: a hand-written case answered 200 on the fast path`);
  const variations = [...ok].flatMap(([route, c]) => variationsOf(route, c));
  t.equal(await replay(t, pair, variations), 0, `all ${variations.length} variations alike`);
  await compareMetrics(t, pair.fast, pair.koa);
});

t.test('the fast path and the Koa path answer alike', async (t) => {
  const pair = await startPair(t);
  const cases = await allCases(pair);
  t.equal(await replay(t, pair, cases), 0, `all ${cases.length} answers alike`);
  t.ok(cases.filter((c) => onFastPath(pair, { method: 'POST', ...c })).length >= 70, 'most of them on the fast path');

  await compareMetrics(t, pair.fast, pair.koa);
  const fastReq = await pair.fast.app.vexil.metrics.registry.getSingleMetricAsString('vexil_http_request_duration_seconds');
  t.match(fastReq, /route="\/evaluate\/v1\/namespaces\/:namespaceKey\/variant"/);
  t.match(fastReq, /method="HEAD",route="\/internal\/v1\/evaluation\/snapshot\/namespace\/:key",status="304"/);
  t.match(fastReq, /method="POST",route="\/ofrep\/v1\/evaluate\/flags\/:key",status="404"/);
});

t.test('the fast path serves the client snapshot from the cached bytes, with a 304 for its ETag', async (t) => {
  const { fast } = await startPair(t);
  const first = await exchange(fast.url, { name: 'first', method: 'GET', path: `${V1}/default` });
  const second = await exchange(fast.url, { name: 'second', method: 'GET', path: `${V2}/default/namespaces/default/snapshot` });
  t.equal(first.status, 200);
  t.equal(second.text, first.text, 'the same document on both paths');
  const etag = answerOf(first).headers.find((h) => h.startsWith('ETag: '))!.slice('ETag: '.length);
  t.match(etag, /^[0-9a-f]{40}$/, 'a bare 40-hex ETag, as Flipt sends it');
  const notModified = await exchange(fast.url, { name: '304', method: 'GET', path: `${V1}/default`, headers: { 'If-None-Match': etag } });
  t.equal(notModified.status, 304);
  t.equal(notModified.text, '', 'no body');
  t.notOk(answerOf(notModified).headers.some((h) => /^content-(type|length):/i.test(h)), 'no content headers on a 304');
});

t.test('with CORS on, both paths add the same headers', async (t) => {
  const modes: Array<[string, Partial<CorsConfig>]> = [
    ['a list of origins', { allowed_origins: ['http://page.test'] }],
    ['any origin', { allowed_origins: ['*'] }],
  ];
  for (const [mode, cors] of modes) {
    await t.test(mode, async (t) => {
      const pair = await startPair(t, cors);
      const cases = (await allCases(pair)).flatMap((c) => [
        { ...c, name: `${c.name} (allowed origin)`, headers: { ...c.headers, Origin: 'http://page.test' } },
        { ...c, name: `${c.name} (other origin)`, headers: { ...c.headers, Origin: 'http://evil.test' } },
      ]);
      t.equal(await replay(t, pair, cases), 0, `all ${cases.length} answers alike`);
      await compareMetrics(t, pair.fast, pair.koa);
      const head = answerOf(await exchange(pair.fast.url, { name: 'probe', method: 'GET', path: `${V1}/default`, headers: { Origin: 'http://page.test' } })).headers;
      t.ok(head.some((h) => h.startsWith('Access-Control-Allow-Origin: ')), 'the fast path wrote the CORS headers');
    });
  }
});

t.test('with authentication required, both paths refuse and admit alike', async (t) => {
  const pair = await startAuthPair(t);
  const scopedToken = await createToken(pair.koa.url, BOOTSTRAP, { name: 'prod', namespaceKey: 'production' });
  const prod = `Bearer ${scopedToken.clientToken}`;
  const cases = (await allCases(pair)).flatMap((c) => [
    { ...c, name: `${c.name} (no token)` },
    { ...c, name: `${c.name} (token)`, headers: { ...c.headers, Authorization: `Bearer ${BOOTSTRAP}` } },
    { ...c, name: `${c.name} (unknown token)`, headers: { ...c.headers, Authorization: 'Bearer nope' } },
  ]);
  const scoped: Case[] = [
    { name: 'scoped: snapshot of its namespace', method: 'GET', path: `${V1}/production` },
    { name: 'scoped: snapshot of another namespace', method: 'GET', path: `${V1}/default` },
    { name: 'scoped: v2 snapshot of its namespace', method: 'HEAD', path: `${V2}/staging/namespaces/production/snapshot` },
    { name: 'scoped: OFREP, its namespace in the header', path: `${OFREP}/color`, body: ofrepBody({ targetingKey: 'u1' }), headers: { 'X-Flipt-Namespace': 'production' } },
    { name: 'scoped: OFREP, no namespace header (default)', path: `${OFREP}/color`, body: ofrepBody({ targetingKey: 'u1' }) },
    { name: 'scoped: OFREP, namespace twins disagree', path: `${OFREP}/color`, body: ofrepBody({}), headers: { 'X-Flipt-Namespace': 'production', 'X-Svc-Namespace': 'default' } },
    { name: 'scoped: evaluation of its namespace', path: '/evaluate/v1/variant', body: json({ namespaceKey: 'production', flagKey: 'color', entityId: 'u1' }) },
    { name: 'scoped: evaluation of another namespace', path: '/evaluate/v1/variant', body: json({ flagKey: 'color', entityId: 'u1' }) },
  ];
  const scopedCases = scoped.map((c) => ({ ...c, headers: { ...c.headers, Authorization: prod } }));
  t.equal(await replay(t, pair, [...cases, ...scopedCases]), 0, `all ${cases.length + scopedCases.length} answers alike`);
  await compareMetrics(t, pair.fast, pair.koa);
  const refused = await exchange(pair.fast.url, { name: 'probe', method: 'GET', path: `${V1}/default` });
  t.equal(refused.status, 401, 'a snapshot needs a token');
});

for (const [label, opts] of [
  ['the 1,000-request HTTP fuzz corpus', {}],
  ['the 1,000-request client-route fuzz corpus (OFREP, client snapshot)', { clientRoutes: true }],
] as const) {
  t.test(`the fast path and the Koa path answer ${label} alike`, async (t) => {
    const pair = await startPair(t);
    const corpus = httpFuzzCorpus(undefined, undefined, opts);
    const cases = corpus.map((c, i): Case => ({ ...c, name: `case ${i}: ${c.method} ${c.path.slice(0, 80)}` }));
    t.equal(await replay(t, pair, cases), 0, `all ${corpus.length} answers alike`);
    const fastPathCases = cases.filter((c) => onFastPath(pair, c)).length;
    t.ok(fastPathCases >= 200, `${fastPathCases} of them on the fast path's routes`);
    await compareMetrics(t, pair.fast, pair.koa);
  });
}

t.test('which requests the fast path takes, and which it leaves to Koa', async (t) => {
  const { store, config } = await startTestStore(t);
  const metrics = createServerMetrics(store, { defaultMetrics: false });
  t.teardown(() => metrics.dispose());
  const fast = createFastPath({
    routes: hotRoutes({ store, metrics, environments: ENVIRONMENTS }),
    store,
    metrics,
    health: createHealth(),
    logger: pino({ level: 'silent' }),
    requests: 'all',
    cookie: () => undefined,
  });
  // A real server whose only other handler marks what the fast path left.
  const server = createServer((req, res) => {
    if (!fast(req, res)) res.writeHead(599, { 'Content-Length': '0' }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  const taken = async (method: string, path: string) => (await exchange(base, { name: path, method, path, ...(method === 'POST' ? { body: '{}' } : {}) })).status !== 599;

  const served: Array<[string, string]> = [
    ['POST', '/evaluate/v1/variant'],
    ['POST', '/evaluate/v1/boolean?pretty'],
    ['POST', '/evaluate/v1/batch'],
    ['POST', '/evaluate/v1/namespaces/production/variant'],
    ['POST', `${OFREP}/color`],
    ['POST', `${OFREP}/new-checkout?reference=local`],
    ['GET', `${V1}/default`],
    ['HEAD', `${V1}/default`],
    ['GET', `${V1}/nope?reference=x`],
    ['GET', `${V2}/default/namespaces/default/snapshot`],
    ['HEAD', `${V2}/staging/namespaces/production/snapshot`],
    ['GET', `${V2}/namespaces/namespaces/default/snapshot`],
  ];
  const left: Array<[string, string]> = [
    ['GET', '/evaluate/v1/variant'],
    ['POST', '/evaluate/v1/variant/'],
    ['POST', '/evaluate/v1/namespaces/def%61ult/variant'],
    ['POST', '/evaluate/v1/namespaces/a/b/variant'],
    ['GET', `${OFREP}/color`],
    ['POST', `${OFREP}/c%6Flor`],
    ['POST', `${OFREP}/color/`],
    ['POST', OFREP],
    ['POST', '/ofrep/v1/configuration'],
    ['POST', `${V1}/default`],
    ['PUT', `${V1}/default`],
    ['OPTIONS', `${V1}/default`],
    ['DELETE', `${V1}/default`],
    ['GET', `${V1}/default/`],
    ['GET', `${V1}/def%61ult`],
    ['GET', `${V1}/`],
    ['GET', `${V2}/default/namespaces/default/stream`],
    ['GET', `${V2}/default/namespaces/a/b/snapshot`],
    ['GET', `${V2}/def%61ult/namespaces/default/snapshot`],
    ['GET', `${V2}/default/namespaces//snapshot`],
    ['GET', '/evaluate/v1/namespaces/default/stream'],
    ['GET', '/api/v1/namespaces/default/flags'],
  ];
  for (const [method, path] of served) t.ok(await taken(method, path), `taken: ${method} ${path}`);
  for (const [method, path] of left) t.notOk(await taken(method, path), `left to Koa: ${method} ${path}`);
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
