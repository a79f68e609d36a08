/**
 * OpenTelemetry traces (src/server/tracing.ts, pipeline/request-span.ts, pipeline/flag-events.ts,
 * sources/traced-source.ts) against a real OTLP/HTTP receiver on loopback that decodes what it
 * gets (test/support/otlp-receiver.ts): server spans by the HTTP conventions on both HTTP paths,
 * a caller's traceparent continued, flag evaluations as `feature_flag.evaluation` events, backend
 * spans under the snapshot build, sampling 0 exporting nothing, and a collector out of reach
 * costing requests nothing (drops counted).
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { startHttpServer } from '../../src/server/listen.js';
import { startTracing, type Tracing } from '../../src/server/tracing.js';
import { createLocalSource } from '../../src/sources/local.js';
import { tracedSource } from '../../src/sources/traced-source.js';
import { createSnapshotStore } from '../../src/store/snapshot-store.js';
import { STATE_LIMITS, STORE_DEFAULTS } from '../support/config-defaults.js';
import { startOtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { FIXTURES, get, post } from './support.js';

// Export failures give up after 1 s (the SDK's default is 10 s), so shutdown is quick here.
process.env.OTEL_EXPORTER_OTLP_TIMEOUT = '1000';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const SERVER = 2;

interface Setup {
  readonly env: Record<string, string>;
  readonly fastPath?: boolean;
  /** OTEL_* variables startTracing reads itself (beside the SDK's own reading of process.env). */
  readonly otel?: Record<string, string>;
}

/** A fixture state served with tracing configured through VEXIL_TRACING_* variables. */
async function serve(tt: { teardown(fn: () => void | Promise<void>): void }, setup: Setup): Promise<{ url: string; tracing: Tracing; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-tracing-'));
  tt.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(FIXTURES, 'api'), dir, { recursive: true });
  const config = loadConfig({ env: setup.env, cwd: dir, defaultLocalPath: dir });
  const tracing = await startTracing({ config: config.tracing, logger: pino({ level: 'silent' }), env: { OTEL_BSP_SCHEDULE_DELAY: '20', ...setup.otel } });
  if (tracing === undefined) throw new Error('tracing.enabled did not start tracing');
  const source = tracedSource(createLocalSource({ ...STATE_LIMITS, path: dir, maxFileSize: config.storage.max_file_size }));
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source, debounceMs: 20 });
  await store.start();
  const server = await startHttpServer({
    store,
    config,
    logger: pino({ level: 'silent' }),
    host: '127.0.0.1',
    port: 0,
    tracing,
    ...(setup.fastPath !== undefined ? { fastPath: setup.fastPath } : {}),
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await server.close();
    await store.close();
    await tracing.shutdown();
  };
  tt.teardown(close);
  return { url: server.url, tracing, close };
}

/** The conventions' reason for a Flipt reason (pipeline/flag-events.ts). */
const REASON: Record<string, string> = {
  MATCH_EVALUATION_REASON: 'targeting_match',
  DEFAULT_EVALUATION_REASON: 'default',
  FLAG_DISABLED_EVALUATION_REASON: 'disabled',
  UNKNOWN_EVALUATION_REASON: 'unknown',
};
const reasonOf = (body: unknown) => REASON[(body as { reason: string }).reason];

const isServer = (name: string) => (s: ReceivedSpan) => s.kind === SERVER && s.name === name;

for (const fastPath of [true, false]) {
  t.test(`server spans and flag events (${fastPath ? 'fast path' : 'Koa chain'})`, async (t) => {
    const rx = await startOtlpReceiver();
    t.teardown(() => rx.close());
    const { url } = await serve(t, {
      fastPath,
      env: {
        VEXIL_TRACING_ENABLED: 'true',
        VEXIL_TRACING_OTLP_ENDPOINT: rx.url,
        VEXIL_TRACING_OTLP_HEADERS: '{"x-collector-key":"k"}',
        VEXIL_TRACING_SERVICE_NAME: 'vexil-test',
      },
    });

    const traceparent = `00-${TRACE_ID}-${PARENT_ID}-01`;
    const variant = await post(`${url}/evaluate/v1/variant`, { namespaceKey: 'default', flagKey: 'color', entityId: 'user-1', context: {} }, { traceparent });
    t.equal(variant.status, 200);
    const [span] = await rx.waitFor(isServer('POST /evaluate/v1/variant'));
    t.equal(span!.traceId, TRACE_ID, 'the caller trace is continued');
    t.equal(span!.parentSpanId, PARENT_ID, 'the caller span is the parent');
    t.equal(span!.encoding, 'json');
    t.equal(span!.resource['service.name'], 'vexil-test');
    t.match(span!.attributes, {
      'http.request.method': 'POST',
      'url.path': '/evaluate/v1/variant',
      'url.scheme': 'http',
      'http.route': '/evaluate/v1/variant',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
      'network.protocol.version': '1.1',
    });
    t.type(span!.attributes['server.port'], 'number');
    t.equal(span!.events.length, 1);
    const event = span!.events[0]!;
    t.equal(event.name, 'feature_flag.evaluation');
    t.same(
      { ...event.attributes, 'feature_flag.version': typeof event.attributes['feature_flag.version'] },
      {
        'feature_flag.key': 'color',
        'feature_flag.provider.name': 'vexil',
        'feature_flag.set.id': 'default',
        'feature_flag.version': 'string',
        'feature_flag.result.variant': (variant.body as { variantKey: string }).variantKey,
        'feature_flag.result.reason': reasonOf(variant.body),
      },
      'the evaluation event, value and entity left out',
    );
    t.equal(event.attributes['feature_flag.version'], variant.headers.get('x-vexil-revision'), 'version = the revision served');

    const boolean = await post(`${url}/evaluate/v1/boolean`, { namespaceKey: 'default', flagKey: 'new-checkout', entityId: 'u', context: {} });
    t.equal(boolean.status, 200);
    const [b] = await rx.waitFor(isServer('POST /evaluate/v1/boolean'));
    t.not(b!.traceId, TRACE_ID, 'no traceparent: a new trace');
    t.equal(b!.parentSpanId, undefined);
    t.match(b!.events[0]!.attributes, { 'feature_flag.key': 'new-checkout', 'feature_flag.result.variant': String((boolean.body as { enabled: boolean }).enabled), 'feature_flag.result.reason': reasonOf(boolean.body) });

    const batch = await post(`${url}/evaluate/v1/batch`, {
      requests: [
        { namespaceKey: 'default', flagKey: 'color', entityId: 'u', context: {} },
        { namespaceKey: 'default', flagKey: 'no-such-flag', entityId: 'u', context: {} },
      ],
    });
    t.equal(batch.status, 200);
    const [bt] = await rx.waitFor(isServer('POST /evaluate/v1/batch'));
    t.same(
      bt!.events.map((e) => [e.name, e.attributes['feature_flag.key'], e.attributes['feature_flag.result.reason'], e.attributes['error.type']]),
      [
        ['feature_flag.evaluation', 'color', reasonOf((batch.body as { responses: Array<{ variantResponse: unknown }> }).responses[0]!.variantResponse), undefined],
        ['feature_flag.evaluation', 'no-such-flag', 'error', 'flag_not_found'],
      ],
    );

    const ofrep = await post(`${url}/ofrep/v1/evaluate/flags/color`, { context: { targetingKey: 'u' } });
    t.equal(ofrep.status, 200);
    const [o] = await rx.waitFor(isServer('POST /ofrep/v1/evaluate/flags/:key'));
    t.equal(o!.attributes['url.path'], '/ofrep/v1/evaluate/flags/color');
    t.equal(o!.attributes['http.route'], '/ofrep/v1/evaluate/flags/:key');
    t.equal(o!.events[0]!.attributes['feature_flag.key'], 'color');

    const missing = await post(`${url}/evaluate/v1/variant`, { namespaceKey: 'default', flagKey: 'nope', entityId: 'u', context: {} });
    t.equal(missing.status, 404);
    const notFound = await rx.waitFor((s) => s.kind === SERVER && s.attributes['http.response.status_code'] === 404);
    t.equal(notFound[0]!.statusCode, 0, 'a 4xx leaves the server span status unset');

    // Koa-only routes are traced too, named by their route.
    t.equal((await get(`${url}/meta/info`)).status, 200);
    const [meta] = await rx.waitFor(isServer('GET /meta/info'));
    t.equal(meta!.attributes['http.route'], '/meta/info');
    t.equal((await get(`${url}/no/such/path`)).status, 404);
    const [unrouted] = await rx.waitFor(isServer('GET'));
    t.equal(unrouted!.attributes['http.route'], undefined, 'no route: named by the method alone');
  });
}

t.test('standard OTEL_* variables: the endpoint and gzip compression', async (t) => {
  const rx = await startOtlpReceiver();
  t.teardown(() => rx.close());
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = rx.url;
  process.env.OTEL_EXPORTER_OTLP_COMPRESSION = 'gzip';
  t.teardown(() => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_COMPRESSION;
  });
  const { url } = await serve(t, { env: { VEXIL_TRACING_ENABLED: 'true' } });
  t.equal((await get(`${url}/meta/info`)).status, 200);
  const [span] = await rx.waitFor(isServer('GET /meta/info'));
  t.equal(span!.gzip, true, 'compressed as OTEL_EXPORTER_OTLP_COMPRESSION says');
  t.equal(span!.resource['service.name'], 'vexil', "tracing.service_name's default");
});

t.test('OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf: spans as protobuf, decoded with the published definitions', async (t) => {
  const rx = await startOtlpReceiver();
  t.teardown(() => rx.close());
  const { url } = await serve(t, {
    env: { VEXIL_TRACING_ENABLED: 'true', VEXIL_TRACING_OTLP_ENDPOINT: rx.url },
    otel: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' },
  });
  const res = await post(`${url}/evaluate/v1/variant`, { namespaceKey: 'default', flagKey: 'color', entityId: 'e1', context: {} });
  t.equal(res.status, 200);
  const [span] = await rx.waitFor(isServer('POST /evaluate/v1/variant'));
  t.equal(span!.encoding, 'protobuf', 'sent as application/x-protobuf');
  t.equal(span!.attributes['http.request.method'], 'POST');
  t.equal(span!.attributes['http.response.status_code'], 200);
  t.match(span!.traceId, /^[0-9a-f]{32}$/);
});

t.test('another OTLP protocol (grpc) is refused before tracing starts', async (t) => {
  const config = loadConfig({ env: { VEXIL_TRACING_ENABLED: 'true' } });
  await t.rejects(
    startTracing({ config: config.tracing, logger: pino({ level: 'silent' }), env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' } }),
    /OTEL_EXPORTER_OTLP_PROTOCOL="grpc": vexil exports traces over OTLP\/HTTP, as http\/json or http\/protobuf/,
  );
});

t.test('backend work: the snapshot build and the source read, with the revision', async (t) => {
  const rx = await startOtlpReceiver();
  t.teardown(() => rx.close());
  const { url } = await serve(t, { env: { VEXIL_TRACING_ENABLED: 'true', VEXIL_TRACING_OTLP_ENDPOINT: rx.url } });
  const revision = (await get(`${url}/meta/info`)).headers.get('x-vexil-revision');
  const [build] = await rx.waitFor((s) => s.name === 'snapshot.build');
  t.equal(build!.attributes['vexil.revision'], revision);
  t.equal(build!.attributes['vexil.build.outcome'], 'swapped');
  const [read] = await rx.waitFor((s) => s.name === 'local.read');
  t.equal(read!.parentSpanId, build!.spanId, 'the source read is a child of the build');
  t.equal(read!.traceId, build!.traceId);
  t.equal(read!.attributes['vexil.revision'], revision);
  t.equal(read!.attributes['vexil.source.kind'], 'local');
  t.type(read!.attributes['vexil.files'], 'number');
});

t.test('sampling is parent-based: at ratio 0 a caller that sampled is followed', async (t) => {
  const rx = await startOtlpReceiver();
  t.teardown(() => rx.close());
  const s = await serve(t, { env: { VEXIL_TRACING_ENABLED: 'true', VEXIL_TRACING_OTLP_ENDPOINT: rx.url, VEXIL_TRACING_SAMPLING_RATIO: '0' } });
  const body = { namespaceKey: 'default', flagKey: 'color', entityId: 'u', context: {} };
  t.equal((await post(`${s.url}/evaluate/v1/variant`, body, { traceparent: `00-${TRACE_ID}-${PARENT_ID}-00` })).status, 200);
  t.equal((await post(`${s.url}/evaluate/v1/boolean`, { ...body, flagKey: 'new-checkout' }, { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` })).status, 200);
  await s.close();
  t.same(
    rx.spans.map((x) => [x.name, x.traceId, x.parentSpanId]),
    [['POST /evaluate/v1/boolean', TRACE_ID, PARENT_ID]],
    'only the request whose caller sampled it',
  );
});

t.test('sampling_ratio 0: requests answered, nothing exported', async (t) => {
  const rx = await startOtlpReceiver();
  t.teardown(() => rx.close());
  const s = await serve(t, { env: { VEXIL_TRACING_ENABLED: 'true', VEXIL_TRACING_OTLP_ENDPOINT: rx.url, VEXIL_TRACING_SAMPLING_RATIO: '0' } });
  for (let i = 0; i < 20; i++) {
    t.equal((await post(`${s.url}/evaluate/v1/variant`, { namespaceKey: 'default', flagKey: 'color', entityId: `u${i}`, context: {} })).status, 200);
  }
  t.equal((await get(`${s.url}/meta/info`)).status, 200);
  await s.close(); // flushes whatever was queued
  t.same(rx.spans, [], 'no span exported');
  t.equal(rx.requests, 0, 'no export request made');
});

t.test('a collector out of reach or refusing: requests still 200, drops counted', async (t) => {
  for (const mode of ['closed port', '503'] as const) {
    const rx = await startOtlpReceiver();
    if (mode === 'closed port') await rx.close();
    else rx.down();
    t.teardown(() => rx.close());
    const s = await serve(t, { env: { VEXIL_TRACING_ENABLED: 'true', VEXIL_TRACING_OTLP_ENDPOINT: rx.url } });
    for (let i = 0; i < 10; i++) {
      t.equal((await post(`${s.url}/evaluate/v1/variant`, { namespaceKey: 'default', flagKey: 'color', entityId: `u${i}`, context: {} })).status, 200, mode);
    }
    // Wait for the batch to be handed over and fail, then read the counter.
    let dropped = 0;
    while (dropped < 10) {
      const text = (await get(`${s.url}/metrics`)).text;
      dropped = Number(/vexil_tracing_spans_dropped_total\{reason="export_failed"\} (\d+)/.exec(text)?.[1] ?? 0);
      if (dropped < 10) await new Promise((r) => setTimeout(r, 50));
    }
    t.ok(dropped >= 10, `${mode}: failed exports counted (${dropped})`);
    await s.close();
  }
});
