/**
 * Live updates through the real server (streams/routes.ts over streams/hub.ts), on a local
 * state folder in a temp dir whose files the tests edit: Flipt v2's NDJSON stream and the SSE
 * stream, what is sent at connect and per change (and nothing for other namespaces), Last-Event-ID,
 * heartbeats, the stream limit, slow clients, a namespace that goes away, shutdown, the request
 * log, and 1,000 concurrent clients. No test waits on time: each waits for bytes to arrive, and
 * absence is shown by what a stream holds once a later change has reached it.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import tap, { type Test } from 'tap';
import { pino, type Logger } from 'pino';
import type { Config } from '../../src/config/types.js';
import { startHttpServer, type RunningHttpServer } from '../../src/server/listen.js';
import type { SnapshotStore, StoreEvent } from '../../src/store/types.js';
import { loadConfig } from '../../src/config/load.js';
import { generateState } from '../support/generate-state.js';
import { gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';
import { StreamClient } from '../support/stream-client.js';
import { FIXTURES, call, isErrorBody, startTestStore } from './support.js';

const t = tap;
const SSE = (ns: string, query = '') => `/evaluate/v1/namespaces/${ns}/stream${query}`;
const NDJSON = (ns: string, env = 'default') => `/client/v2/environments/${env}/namespaces/${ns}/stream`;
const SNAPSHOT = (ns: string) => `/internal/v1/evaluation/snapshot/namespace/${ns}`;

interface Streams {
  readonly dir: string;
  readonly url: string;
  readonly store: SnapshotStore;
  readonly http: RunningHttpServer;
  sse(ns: string, query?: string, headers?: Record<string, string>): Promise<StreamClient>;
  ndjson(ns: string, env?: string, headers?: Record<string, string>): Promise<StreamClient>;
  /** The namespace's current snapshot document (text) and ETag, from the snapshot endpoint. */
  snapshot(ns: string): Promise<{ text: string; etag: string }>;
  /** Rewrites the `description: edition N` of a state file and waits for the store to swap. */
  edit(file: string, edition: number | string): Promise<void>;
  /** Text of a metric from the server's registry. */
  metric(name: string): Promise<string>;
}

interface Options {
  server?: Partial<Config['server']>;
  log?: Config['log']['requests'];
  logger?: Logger;
  /** Runs on the state folder before the first build. */
  prepare?: (dir: string) => void;
}

function nextSwap(store: SnapshotStore): Promise<StoreEvent> {
  return new Promise((resolve) => {
    const off = store.subscribe((e) => {
      if (e.type === 'swap') {
        off();
        resolve(e);
      }
    });
  });
}

async function startStreams(t: Test, opts: Options = {}): Promise<Streams> {
  const { dir, config, store } = await startTestStore(t, { fixture: 'streams', startStore: false });
  opts.prepare?.(dir);
  await store.start();
  Object.assign(config.server, opts.server ?? {});
  if (opts.log !== undefined) config.log.requests = opts.log;
  const http = await startHttpServer({ store, config, logger: opts.logger ?? pino({ level: 'silent' }), host: '127.0.0.1', port: 0 });
  t.teardown(() => http.close());
  const clients: StreamClient[] = [];
  // Registered after the server's: runs first, so the server's close does not wait for them.
  t.teardown(() => clients.forEach((c) => c.close()));
  const track = (c: StreamClient) => {
    clients.push(c);
    return c;
  };
  return {
    dir,
    url: http.url,
    store,
    http,
    sse: async (ns, query = '', headers = {}) => track(await StreamClient.open('sse', `${http.url}${SSE(ns, query)}`, headers)),
    ndjson: async (ns, env = 'default', headers = {}) => track(await StreamClient.open('ndjson', `${http.url}${NDJSON(ns, env)}`, headers)),
    async snapshot(ns) {
      const res = await call(`${http.url}${SNAPSHOT(ns)}`);
      return { text: res.text, etag: res.headers.get('etag')! };
    },
    async edit(file, edition) {
      const path = join(dir, file);
      const swapped = nextSwap(store);
      writeFileSync(path, readFileSync(path, 'utf8').replace(/description: edition .*/, `description: edition ${edition}`));
      await swapped;
    },
    metric: (name) => http.app.vexil.metrics.registry.getSingleMetricAsString(name),
  };
}

/** The count of a series in a metric's text (0 when absent). */
function seriesValue(text: string, labels: string): number {
  const line = text.split('\n').find((l) => l.includes(`{${labels}}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** Resolves once `check()` holds, looking again after each event-loop turn (no timing asserted). */
async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}

t.test('NDJSON (Flipt v2): the document at connect, one line per change of the namespace, nothing for other changes', async (t) => {
  const s = await startStreams(t);
  const watched = await s.ndjson('default', 'default', { 'Accept-Encoding': 'gzip' });
  t.equal(watched.status, 200);
  // What Flipt v2 sends and its OpenAPI document names (rpc/v2/evaluation/openapi.yaml: the
  // stream's 200 is application/json), so whatever checks it against Flipt's contract passes.
  t.equal(watched.headers['content-type'], 'application/json');
  t.equal(watched.headers['content-encoding'], undefined, 'never compressed: each line goes out as it is written');
  t.equal(watched.headers['cache-control'], 'no-cache');
  t.match(watched.headers['x-request-id'], /.+/);
  t.equal(watched.headers['x-vexil-revision'], s.store.get()!.revision);
  await watched.until(() => watched.rawLines.length === 1, 'the connect line');
  const first = await s.snapshot('default');
  t.equal(watched.rawLines[0], `{"result":${first.text}}`, 'the connect line wraps the snapshot endpoint’s document, byte for byte');

  // A change elsewhere: its own stream shows the hub handled the swap; the watched stream gets nothing.
  const other = await s.ndjson('other');
  await other.until(() => other.rawLines.length === 1);
  await s.edit('other.features.yml', 1);
  await other.until(() => other.rawLines.length === 2, 'the other namespace’s change');
  // A reload that leaves the namespace's content as it was (a comment): its ETag stays, nothing is sent.
  const swapped = nextSwap(s.store);
  writeFileSync(join(s.dir, 'features.yml'), `${readFileSync(join(s.dir, 'features.yml'), 'utf8')}# a comment\n`);
  await swapped;
  t.equal((await s.snapshot('default')).etag, first.etag, 'a comment does not change the ETag');

  await s.edit('features.yml', 1);
  await watched.until(() => watched.rawLines.length >= 2, 'the change line');
  const second = await s.snapshot('default');
  t.not(second.etag, first.etag);
  t.same(watched.rawLines, [`{"result":${first.text}}`, `{"result":${second.text}}`], 'exactly the connect line and the change line');
  t.equal((watched.lines()[1] as { result: { flags: Array<{ description: string }> } }).result.flags[0]!.description, 'edition 1');

  // The environment in the path names the reference; an unknown one and an unknown namespace are 404.
  const unknownEnv = await call(`${s.url}${NDJSON('default', 'staging')}`);
  t.equal(unknownEnv.status, 404);
  t.ok(isErrorBody(unknownEnv.body));
  const unknownNs = await call(`${s.url}${NDJSON('nope')}`);
  t.same(unknownNs.body, { code: 5, message: 'getting flags: namespace "nope" not found', details: [] });
  const unknownRef = await call(`${s.url}${NDJSON('default')}?reference=nope`);
  t.equal(unknownRef.status, 404, '?reference= overrides the environment, as on the snapshot path');
});

t.test('SSE: a connected comment, then an event per change with id = the ETag; ?snapshot=true carries the document', async (t) => {
  const s = await startStreams(t);
  const plain = await s.sse('default');
  const full = await s.sse('default', '?snapshot=true');
  t.equal(plain.status, 200);
  t.equal(plain.headers['content-type'], 'text/event-stream; charset=utf-8');
  t.equal(plain.headers['cache-control'], 'no-cache');
  t.equal(plain.headers['x-accel-buffering'], 'no');
  await plain.until(() => plain.events.length === 1);
  await full.until(() => full.events.length === 1);
  t.same(plain.comments, ['connected'], 'the first thing sent');

  const first = await s.snapshot('default');
  const revision = s.store.get()!.revision;
  t.same(plain.events[0], {
    event: 'message',
    id: first.etag,
    data: JSON.stringify({ reference: 'local', namespace: 'default', etag: first.etag, revision }),
  });
  t.same(JSON.parse(full.events[0]!.data), { reference: 'local', namespace: 'default', etag: first.etag, revision, snapshot: JSON.parse(first.text) });

  await s.edit('other.features.yml', 1);
  await s.edit('features.yml', 2);
  await plain.until(() => plain.events.length >= 2);
  await full.until(() => full.events.length >= 2);
  const second = await s.snapshot('default');
  t.equal(plain.events.length, 2, 'nothing for the other namespace');
  t.equal(plain.events[1]!.id, second.etag);
  t.same(JSON.parse(plain.events[1]!.data), { reference: 'local', namespace: 'default', etag: second.etag, revision: s.store.get()!.revision });
  t.same(JSON.parse(full.events[1]!.data).snapshot, JSON.parse(second.text));

  for (const bad of ['maybe', 'TRUE', 'yes']) {
    const res = await call(`${s.url}${SSE('default', `?snapshot=${bad}`)}`);
    t.equal(res.status, 400, `snapshot=${bad}`);
    t.same(res.body, { code: 3, message: `snapshot must be true or false (got "${bad}")`, details: [] });
  }
  const missing = await call(`${s.url}${SSE('nope')}`);
  t.same(missing.body, { code: 5, message: 'namespace "nope" not found', details: [] });
  const post = await call(`${s.url}${SSE('default')}`, { method: 'POST' });
  t.equal(post.status, 405);
  for (const path of [SSE('default'), NDJSON('default')]) {
    const head = await fetch(`${s.url}${path}`, { method: 'HEAD' });
    t.equal(head.status, 200, `HEAD ${path}`);
    t.equal(head.headers.get('content-type'), path.startsWith('/client/v2/') ? 'application/json' : 'text/event-stream; charset=utf-8');
  }
  t.equal(s.http.app.vexil.streams.size, 2, 'HEAD opens no stream');
});

t.test('Last-Event-ID: the current ETag → nothing resent (only the connected comment); another → the state again', async (t) => {
  const s = await startStreams(t);
  const { etag } = await s.snapshot('default');
  const current = await s.sse('default', '', { 'last-event-id': etag });
  const stale = await s.sse('default', '', { 'last-event-id': 'f'.repeat(40) });
  await current.until(() => current.comments.includes('connected'), 'the connected comment');
  await stale.until(() => stale.events.length === 1);
  t.equal(stale.events[0]!.id, etag, 'a stale ETag gets the current state at once');

  await s.edit('features.yml', 3);
  await current.until(() => current.events.length >= 1);
  const now = await s.snapshot('default');
  t.same(
    current.events.map((e) => e.id),
    [now.etag],
    'the first event of the up-to-date client is the change; the state it had was not resent',
  );
});

t.test('heartbeats: an SSE comment and, on NDJSON, a space that the next line’s JSON parser skips', async (t) => {
  const s = await startStreams(t, { server: { stream_heartbeat_interval: 20 } });
  const sse = await s.sse('default');
  const ndjson = await s.ndjson('default');
  await sse.until(() => sse.comments.filter((c) => c === 'heartbeat').length >= 2, 'two SSE heartbeats');
  await ndjson.until(() => ndjson.rawLines.length === 1 && /^ {2,}$/.test(ndjson.unparsed), 'two NDJSON heartbeats');
  t.equal(sse.events.length, 1, 'heartbeats are no events');

  await s.edit('features.yml', 4);
  await ndjson.until(() => ndjson.rawLines.length === 2);
  t.match(ndjson.rawLines[1], /^ +\{"result":/, 'the heartbeat spaces lead the next line');
  const lines = ndjson.lines() as Array<{ result: { flags: Array<{ description: string }> } }>;
  t.equal(lines[1]!.result.flags[0]!.description, 'edition 4', 'and it parses as JSON');
});

t.test('server.max_streams: one more is 503 with Retry-After in the error shape; a place frees when a stream ends', async (t) => {
  const s = await startStreams(t, { server: { max_streams: 2 } });
  const a = await s.sse('default');
  const b = await s.ndjson('default');
  await a.until(() => a.events.length === 1);
  await b.until(() => b.rawLines.length === 1);
  for (const path of [SSE('default'), NDJSON('default')]) {
    const refused = await call(`${s.url}${path}`);
    t.equal(refused.status, 503, path);
    t.equal(refused.headers.get('retry-after'), '5');
    t.same(refused.body, { code: 14, message: 'too many open streams (server.max_streams is 2); try again later', details: [] });
  }
  t.equal(seriesValue(await s.metric('vexil_streams_open'), 'protocol="sse"'), 1, 'the gauge of open streams');

  a.close();
  await eventually(() => s.http.app.vexil.streams.size === 1);
  const c = await s.sse('default');
  t.equal(c.status, 200, 'a place freed');
  t.equal(seriesValue(await s.metric('vexil_streams_closed_total'), 'protocol="sse",reason="client"'), 1);

  const off = await startStreams(t, { server: { max_streams: 0 } });
  const res = await call(`${off.url}${SSE('default')}`);
  t.equal(res.status, 503);
  t.same(res.body, { code: 14, message: 'streaming is turned off (server.max_streams is 0)', details: [] });
});

t.test('a namespace that is no longer served: SSE says `gone` and ends; NDJSON ends', async (t) => {
  const s = await startStreams(t);
  const sse = await s.sse('other');
  const ndjson = await s.ndjson('other');
  await sse.until(() => sse.events.length === 1);
  await ndjson.until(() => ndjson.rawLines.length === 1);
  const swapped = nextSwap(s.store);
  rmSync(join(s.dir, 'other.features.yml'));
  await swapped;
  t.equal(await sse.ended(), 'end', 'SSE: a clean end');
  t.equal(await ndjson.ended(), 'end', 'NDJSON: a clean end');
  t.same(sse.events[1], {
    event: 'gone',
    id: undefined,
    data: JSON.stringify({ reference: 'local', namespace: 'other', message: 'namespace "other" is no longer in reference "local"' }),
  });
  t.equal(ndjson.rawLines.length, 1);
  t.equal(seriesValue(await s.metric('vexil_streams_closed_total'), 'protocol="ndjson",reason="gone"'), 1);
});

t.test('a slow client is dropped once it is stream_buffer_limit behind; the others keep receiving', async (t) => {
  // About 1 MB of document per event, so a client that never reads fills the socket buffers fast.
  const s = await startStreams(t, {
    server: { stream_buffer_limit: 64 * 1024, stream_heartbeat_interval: 0 },
    prepare: (dir) => {
      for (const f of generateState({ flags: 1000, namespaces: 1, filesPerNamespace: 2 })) writeFileSync(join(dir, f.path.replace('/', '-')), f.text);
    },
  });
  const reader = await s.sse('default', '?snapshot=true');
  await reader.until(() => reader.events.length === 1);

  // A client that sends its request and then never reads a byte.
  const slow: Socket = connect(Number(new URL(s.url).port), '127.0.0.1');
  t.teardown(() => slow.destroy());
  await new Promise<void>((resolve) => slow.once('connect', resolve));
  slow.pause();
  slow.write(`GET ${SSE('default', '?snapshot=true')} HTTP/1.1\r\nHost: x\r\n\r\n`);
  await eventually(() => s.http.app.vexil.streams.size === 2);

  let edition = 100;
  const dropped = async () => seriesValue(await s.metric('vexil_streams_closed_total'), 'protocol="sse",reason="slow"') === 1;
  // Bounded: the socket buffers of a loopback connection hold a few MB at most.
  while (!(await dropped()) && edition < 160) {
    edition++;
    await s.edit('features.yml', edition);
    const expected = edition - 99;
    await reader.until(() => reader.events.length === expected, `event ${expected}`);
  }
  t.ok(await dropped(), `the slow client was dropped (after ${edition - 100} changes)`);
  t.equal(s.http.app.vexil.streams.size, 1, 'only the reader is left');
  t.equal(reader.events.length, edition - 99, 'the reader got every change');

  await s.edit('features.yml', 'after');
  await reader.until(() => reader.events.length === edition - 98, 'a change after the drop');
  t.equal(JSON.parse(reader.events.at(-1)!.data).snapshot.flags.find((f: { key: string }) => f.key === 'banner').description, 'edition after');
});

t.test('shutdown ends every stream cleanly', async (t) => {
  const s = await startStreams(t);
  const sse = await s.sse('default');
  const ndjson = await s.ndjson('default');
  await sse.until(() => sse.events.length === 1);
  await ndjson.until(() => ndjson.rawLines.length === 1);
  const registry = s.http.app.vexil.metrics.registry;
  await s.http.close();
  t.equal(await sse.ended(), 'end');
  t.equal(await ndjson.ended(), 'end');
  const closed = await registry.getSingleMetricAsString('vexil_streams_closed_total');
  t.equal(seriesValue(closed, 'protocol="sse",reason="shutdown"'), 1);
  t.equal(seriesValue(closed, 'protocol="ndjson",reason="shutdown"'), 1);
  t.equal(s.http.app.vexil.streams.size, 0);
});

t.test('the request log and latency metric record opening the stream, not its life', async (t) => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    }),
  );
  const s = await startStreams(t, { log: 'all', logger });
  const sse = await s.sse('default');
  await sse.until(() => sse.events.length === 1);
  await eventually(() => lines.some((l) => l.msg === 'request' && l.url === SSE('default')));
  const line = lines.find((l) => l.msg === 'request' && l.url === SSE('default'))!;
  t.equal(line.status, 200, 'logged while the stream is open');
  const histogram = await s.metric('vexil_http_request_duration_seconds');
  const count = histogram.split('\n').find((l) => l.startsWith('vexil_http_request_duration_seconds_count{') && l.includes(SSE(':namespace')));
  t.match(count, / 1$/, 'one observation, made when the stream opened');

  sse.close();
  await eventually(() => lines.some((l) => l.msg === 'stream closed'));
  t.match(lines.find((l) => l.msg === 'stream closed'), { protocol: 'sse', namespace: 'default', reference: 'local', reason: 'client', events: 1 });
});

t.test('1,000 concurrent SSE clients all receive a change', async (t) => {
  const s = await startStreams(t);
  const clients: StreamClient[] = [];
  // In batches, so the listen backlog never overflows.
  for (let i = 0; i < 1000; i += 100) clients.push(...(await Promise.all(Array.from({ length: 100 }, () => s.sse('default')))));
  await Promise.all(clients.map((c) => c.until(() => c.events.length === 1)));
  t.equal(s.http.app.vexil.streams.size, 1000);
  await s.edit('features.yml', 'broadcast');
  const { etag } = await s.snapshot('default');
  await Promise.all(clients.map((c) => c.until(() => c.events.length === 2, 'the change')));
  t.equal(clients.filter((c) => c.events[1]!.id === etag).length, 1000, 'every client got the change, with the new ETag');
  for (const c of clients) c.close();
  await eventually(() => s.http.app.vexil.streams.size === 0);
});

const gitTest = testsNeeding(tap, 'git', gitUnavailableReason());

gitTest.test('git: a branch built on request stays kept while streamed, its pushes reach the stream, its deletion ends it', async (t) => {
  const g = await startGitFixture(t);
  const features = readFileSync(join(FIXTURES, 'streams', 'features.yml'), 'utf8');
  await g.repo.commit('main', { 'features.yml': features });
  await g.repo.commit('feature', { 'features.yml': features });
  await g.repo.commit('unwatched', { 'features.yml': features });
  // References built on request are dropped after 1 s without requests; polls every 50 ms.
  const store = g.store({ idleTtlMs: 1000, pollIntervalMs: 50 });
  await store.start();
  const config = loadConfig({ env: {}, cwd: g.cacheDir });
  config.server.stream_heartbeat_interval = 50;
  const http = await startHttpServer({ store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0 });
  t.teardown(() => http.close());
  const stream = await StreamClient.open('sse', `${http.url}${SSE('default', '?reference=feature')}`);
  t.teardown(() => stream.close());
  await stream.until(() => stream.events.length === 1);
  t.equal(JSON.parse(stream.events[0]!.data).reference, 'feature');

  // The control: a branch only requested once is dropped as idle; the streamed one is kept meanwhile.
  const unwatchedDropped = new Promise<void>((resolve) => {
    store.subscribe((e) => {
      if (e.type === 'dropped' && e.reference === 'unwatched') resolve();
    });
  });
  t.equal((await call(`${http.url}${SNAPSHOT('default')}?reference=unwatched`)).status, 200);
  await unwatchedDropped;
  t.ok(
    store.status().some((r) => r.reference === 'feature'),
    'the streamed branch outlived an idle one requested after it',
  );

  await g.repo.commit('feature', { 'features.yml': features.replace('edition 0', 'edition pushed') });
  await stream.until(() => stream.events.length === 2, 'the push');
  const etag = (await call(`${http.url}${SNAPSHOT('default')}?reference=feature`)).headers.get('etag');
  t.equal(stream.events[1]!.id, etag);

  await g.repo.deleteBranch('feature');
  t.equal(await stream.ended(), 'end');
  t.same(stream.events.at(-1), {
    event: 'gone',
    id: undefined,
    data: JSON.stringify({ reference: 'feature', namespace: 'default', message: 'reference "feature" is no longer served' }),
  });
});
