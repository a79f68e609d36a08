/**
 * OFREP change events (OFREP 0.3.0, ADR-0008) through the real server, on a local state folder
 * the tests edit: the bulk answer's `eventStreams` and flag-set metadata, the advertised SSE
 * stream (`refetchEvaluation` with the new ETag; nothing for other namespaces; `since` and
 * `Last-Event-ID`; the stream limit; a namespace that goes away), the refetch with
 * `flagConfigEtag` (304 when the client has what the event announced), and the order the hub
 * keeps: a client that refetches as soon as it is told gets the state it was told of. No test
 * waits on time: each waits for bytes to arrive.
 *
 * The spec facts checked here (open-feature/protocol service/openapi.yaml 0.3.0 and
 * adrs/0008-sse-for-bulk-evaluation-changes.md): `eventStreams` is an array of
 * `{type: "sse", url | endpoint: {origin?, requestUri}, inactivityDelaySec (integer ≥ 1)}`, exactly
 * one of url/endpoint, requestUri starting with "/"; events are SSE `message` events whose data is
 * JSON `{type: "refetchEvaluation", etag?, lastModified?}`, `id` recommended for Last-Event-ID; the
 * provider sends the event's etag back as the `flagConfigEtag` query parameter of its bulk refetch,
 * with If-None-Match as usual; bulk metadata is free-form (`version` in the spec's example), and
 * OpenFeature's telemetry reads `version` and `flagSetId` from flag metadata.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tap, { type Test } from 'tap';
import { pino } from 'pino';
import type { Config } from '../../src/config/types.js';
import { startHttpServer, type RunningHttpServer } from '../../src/server/listen.js';
import type { SnapshotStore, StoreEvent } from '../../src/store/types.js';
import { StreamClient } from '../support/stream-client.js';
import { call, startTestStore } from './support.js';

const t = tap;
const BULK = '/ofrep/v1/evaluate/flags';
const SNAPSHOT = (ns: string) => `/internal/v1/evaluation/snapshot/namespace/${ns}`;

type Json = Record<string, unknown>;
interface EventStream {
  type: string;
  url?: string;
  endpoint?: { origin?: string; requestUri: string };
  inactivityDelaySec?: number;
}
interface Bulk {
  status: number;
  etag: string | null;
  body: { flags: Array<Json & { key: string; metadata?: Json }>; metadata?: Json; eventStreams?: EventStream[] } | undefined;
}

interface Harness {
  readonly url: string;
  readonly dir: string;
  readonly store: SnapshotStore;
  readonly http: RunningHttpServer;
  bulk(opts?: { namespace?: string; query?: string; ifNoneMatch?: string; context?: Json }): Promise<Bulk>;
  /** Opens the stream a bulk answer advertises (its endpoint on the server's origin). */
  listen(requestUri: string, headers?: Record<string, string>): Promise<StreamClient>;
  /** The namespace's snapshot ETag (the state the events name). */
  stateEtag(ns: string): Promise<string>;
  edit(file: string, edition: number | string): Promise<void>;
  metric(name: string): Promise<string>;
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

async function start(t: Test, server: Partial<Config['server']> = {}): Promise<Harness> {
  const { dir, config, store } = await startTestStore(t, { fixture: 'streams' });
  Object.assign(config.server, server);
  const http = await startHttpServer({ store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0 });
  t.teardown(() => http.close());
  const clients: StreamClient[] = [];
  t.teardown(() => clients.forEach((c) => c.close()));
  return {
    url: http.url,
    dir,
    store,
    http,
    async bulk(opts = {}) {
      const res = await fetch(`${http.url}${BULK}${opts.query ?? ''}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-flipt-namespace': opts.namespace ?? 'default',
          ...(opts.ifNoneMatch !== undefined ? { 'if-none-match': opts.ifNoneMatch } : {}),
        },
        body: JSON.stringify({ context: opts.context ?? { targetingKey: 'u-1' } }),
      });
      const text = await res.text();
      return { status: res.status, etag: res.headers.get('etag'), body: text === '' ? undefined : (JSON.parse(text) as Bulk['body']) };
    },
    async listen(requestUri, headers = {}) {
      const c = await StreamClient.open('sse', `${http.url}${requestUri}`, headers);
      clients.push(c);
      return c;
    },
    async stateEtag(ns) {
      return (await call(`${http.url}${SNAPSHOT(ns)}`)).headers.get('etag')!;
    },
    metric: (name) => http.app.vexil.metrics.registry.getSingleMetricAsString(name),
    async edit(file, edition) {
      const path = join(dir, file);
      const swapped = nextSwap(store);
      writeFileSync(path, readFileSync(path, 'utf8').replace(/description: edition .*/, `description: edition ${edition}`));
      await swapped;
    },
  };
}

function refetchData(etag: string): string {
  return JSON.stringify({ type: 'refetchEvaluation', etag });
}

t.test('the bulk answer: eventStreams as OFREP 0.3.0 shapes it, and the flag set’s version and id', async (t) => {
  const s = await start(t);
  const res = await s.bulk();
  t.equal(res.status, 200);
  const body = res.body!;
  const revision = s.store.get()!.revision;
  t.same(body.metadata, { version: revision, flagSetId: 'default' }, 'bulk metadata: the served revision and the namespace');
  t.ok(body.flags.length > 0);
  for (const flag of body.flags) {
    t.match(flag.metadata, { version: revision, flagSetId: 'default' }, `${flag.key}: the flag's metadata carries them too (what telemetry hooks read)`);
  }

  t.equal(body.eventStreams?.length, 1, 'one stream');
  const [stream] = body.eventStreams!;
  t.equal(stream!.type, 'sse');
  t.equal(stream!.url, undefined, 'exactly one of url and endpoint');
  t.equal(stream!.endpoint?.origin, undefined, 'no origin: the provider’s own base URL origin (the same origin)');
  t.match(stream!.endpoint?.requestUri, /^\/ofrep\/v1\/namespaces\/default\/events\?/, 'a path on this server, starting with "/"');
  const since = new URL(stream!.endpoint!.requestUri, s.url).searchParams.get('since');
  t.equal(since, await s.stateEtag('default'), 'since: the state the answer was made from');
  t.equal(stream!.inactivityDelaySec, 120, 'server.stream_inactivity_delay (2m) in seconds');
  t.ok(Number.isInteger(stream!.inactivityDelaySec), 'an integer');

  // The reference the request named travels in the URL (an EventSource sends no headers).
  const named = await s.bulk({ query: '?reference=local' });
  t.equal(new URL(named.body!.eventStreams![0]!.endpoint!.requestUri, s.url).searchParams.get('reference'), 'local');
  t.equal(new URL(stream!.endpoint!.requestUri, s.url).searchParams.get('reference'), null, 'the default reference: none named');

  // A missing flag named in the request carries the set's metadata as well.
  const missing = await s.bulk({ context: { targetingKey: 'u-1', flags: ['nope'] } });
  t.same(missing.body!.flags, [
    { key: 'nope', errorCode: 'FLAG_NOT_FOUND', errorDetails: 'flag "default/nope" not found', metadata: { version: revision, flagSetId: 'default' } },
  ]);
});

t.test('single-flag answers carry version and flagSetId', async (t) => {
  const s = await start(t);
  const revision = s.store.get()!.revision;
  for (const flag of ['banner', 'color']) {
    const res = await call(`${s.url}/ofrep/v1/evaluate/flags/${flag}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-flipt-namespace': 'default' },
      body: JSON.stringify({ context: { targetingKey: 'u-1' } }),
    });
    t.equal(res.status, 200);
    t.match((res.body as Json).metadata, { version: revision, flagSetId: 'default' }, flag);
  }
  await s.edit('features.yml', 'single');
  const after = await call(`${s.url}/ofrep/v1/evaluate/flags/banner`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"context":{}}',
  });
  t.equal(((after.body as Json).metadata as Json).version, s.store.get()!.revision, 'the new revision after a reload');
});

t.test('inactivityDelaySec follows server.stream_inactivity_delay (whole seconds, at least 1); no eventStreams when streaming is off', async (t) => {
  const thirty = await start(t, { stream_inactivity_delay: 30_000 });
  t.equal((await thirty.bulk()).body!.eventStreams![0]!.inactivityDelaySec, 30);
  const tiny = await start(t, { stream_inactivity_delay: 200 });
  t.equal((await tiny.bulk()).body!.eventStreams![0]!.inactivityDelaySec, 1, 'the spec’s minimum');
  const off = await start(t, { max_streams: 0 });
  const res = await off.bulk();
  t.equal(res.status, 200);
  t.notOk('eventStreams' in res.body!, 'streaming off: the provider keeps its own change detection');
});

t.test('the stream: connected, nothing while the state is the advertised one, refetchEvaluation with the new ETag per change', async (t) => {
  const s = await start(t);
  const first = await s.bulk();
  const stream = await s.listen(first.body!.eventStreams![0]!.endpoint!.requestUri);
  t.equal(stream.status, 200);
  t.equal(stream.headers['content-type'], 'text/event-stream; charset=utf-8');
  t.equal(stream.headers['cache-control'], 'no-cache');
  await stream.until(() => stream.comments.includes('connected'), 'connected');

  // Another namespace changes: nothing here (shown by what the stream holds after the next change).
  await s.edit('other.features.yml', 1);
  await s.edit('features.yml', 1);
  await stream.until(() => stream.events.length >= 1, 'the change');
  const etag = await s.stateEtag('default');
  t.same(stream.events, [{ event: 'message', id: etag, data: refetchData(etag) }], 'one message event, id and etag the new state');

  // What the provider does next: refetch with flagConfigEtag and its ETag.
  const refetch = await s.bulk({ query: `?flagConfigEtag=${etag}`, ifNoneMatch: first.etag! });
  t.equal(refetch.status, 200, 'the state changed: the new answer');
  t.equal(refetch.body!.metadata!.version, s.store.get()!.revision);
  t.not(refetch.etag, first.etag);
  const again = await s.bulk({ query: `?flagConfigEtag=${etag}`, ifNoneMatch: refetch.etag! });
  t.equal(again.status, 304, 'flagConfigEtag is the state served and the client has its answer: 304');
  t.equal(again.body, undefined);
  const quoted = await s.bulk({ query: `?flagConfigEtag=${encodeURIComponent(`"${etag}"`)}`, ifNoneMatch: refetch.etag! });
  t.equal(quoted.status, 304, 'a quoted flagConfigEtag is the same tag');
  const other = await s.bulk({ query: `?flagConfigEtag=${'0'.repeat(40)}`, ifNoneMatch: refetch.etag! });
  t.equal(other.status, 200, 'told of a state never served here: after the bounded wait, the answer in full, not a 304');
  t.same(other.body!.flags, refetch.body!.flags);
  t.match(await s.metric('vexil_ofrep_refetch_waits_total'), /outcome="timeout"} 1/, 'the wait timed out');
  const plain = await s.bulk({ ifNoneMatch: refetch.etag! });
  t.equal(plain.status, 304, 'without flagConfigEtag: If-None-Match alone, as before');

  // A later bulk answer advertises its own state; the same stream keeps working.
  await s.edit('features.yml', 2);
  await stream.until(() => stream.events.length >= 2);
  const etag2 = await s.stateEtag('default');
  t.same(stream.events[1], { event: 'message', id: etag2, data: refetchData(etag2) });
});

/** Resolves once `check()` holds, looking again after each event-loop turn (no timing asserted). */
async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}

const waiting = async (s: Harness) => Number(/vexil_ofrep_refetches_waiting (\d+)/.exec(await s.metric('vexil_ofrep_refetches_waiting'))?.[1] ?? 0);

t.test('a refetch that reaches a replica behind the one that told the client waits for that replica to serve the announced state', async (t) => {
  // Two replicas serving copies of the same folder: the same content, the same ETags.
  const ahead = await start(t);
  const behind = await start(t);
  const first = await behind.bulk();
  const before = behind.store.get()!.revision;
  // The client listens on one replica (a load balancer chose it) ...
  const stream = await ahead.listen(first.body!.eventStreams![0]!.endpoint!.requestUri);
  await stream.until(() => stream.comments.includes('connected'));
  await ahead.edit('features.yml', 'pushed');
  await stream.until(() => stream.events.length === 1, 'told by the replica that has the change');
  const announced = stream.events[0]!.id!;

  // ... and its refetch reaches the other, which has not loaded the change yet.
  const refetch = behind.bulk({ query: `?flagConfigEtag=${announced}`, ifNoneMatch: first.etag! });
  await eventually(async () => (await waiting(behind)) === 1);
  t.equal(behind.store.get()!.revision, before, 'still the old state here while the refetch waits');
  await behind.edit('features.yml', 'pushed');
  const res = await refetch;
  t.equal(res.status, 200, 'not a 304 for the old state');
  t.equal(res.body!.metadata!.version, behind.store.get()!.revision, 'answered from the state the event announced');
  t.not(res.body!.metadata!.version, before);
  t.equal(new URL(res.body!.eventStreams![0]!.endpoint!.requestUri, behind.url).searchParams.get('since'), announced);
  t.match(await behind.metric('vexil_ofrep_refetch_waits_total'), /outcome="served"} 1/);
  t.equal(await waiting(behind), 0);
});

t.test('at most server.max_streams refetches wait at once; the others are answered at once', async (t) => {
  const s = await start(t, { max_streams: 1 });
  const bogus = `?flagConfigEtag=${'e'.repeat(40)}`;
  const first = s.bulk({ query: bogus });
  await eventually(async () => (await waiting(s)) === 1);
  const second = await s.bulk({ query: bogus });
  t.equal(second.status, 200, 'answered from what is served');
  t.match(await s.metric('vexil_ofrep_refetch_waits_total'), /outcome="refused"} 1/);
  t.equal((await first).status, 200);
});

t.test('since and Last-Event-ID: a stream opened after the state moved on is told at once; a current one is not', async (t) => {
  const s = await start(t);
  const first = await s.bulk();
  const uri = first.body!.eventStreams![0]!.endpoint!.requestUri;
  await s.edit('features.yml', 'moved');
  const current = await s.stateEtag('default');

  const late = await s.listen(uri);
  await late.until(() => late.events.length === 1, 'told at once');
  t.same(late.events[0], { event: 'message', id: current, data: refetchData(current) }, 'since names an older state');

  const resumed = await s.listen(uri, { 'last-event-id': current });
  const stale = await s.listen(uri, { 'last-event-id': 'f'.repeat(40) });
  await stale.until(() => stale.events.length === 1);
  await resumed.until(() => resumed.comments.includes('connected'));
  await s.edit('features.yml', 'next');
  await resumed.until(() => resumed.events.length >= 1);
  const next = await s.stateEtag('default');
  t.same(resumed.events.map((e) => e.id), [next], 'Last-Event-ID (current) wins over since: only the next change');
  t.equal(stale.events[0]!.id, current, 'a stale Last-Event-ID: the state at once');
});

t.test('errors, limits and a namespace that goes away', async (t) => {
  const s = await start(t, { max_streams: 1 });
  const uri = (await s.bulk({ namespace: 'other' })).body!.eventStreams![0]!.endpoint!.requestUri;
  const unknownNs = await call(`${s.url}/ofrep/v1/namespaces/nope/events`);
  t.equal(unknownNs.status, 400);
  t.same(unknownNs.body, { errorCode: 'GENERAL', errorDetails: 'namespace "nope" not found' }, 'OFREP’s error schema; its 404 means a missing flag');
  const unknownRef = await call(`${s.url}/ofrep/v1/namespaces/default/events?reference=nope`);
  t.equal(unknownRef.status, 400);
  t.match(unknownRef.body, { errorCode: 'GENERAL' });

  const stream = await s.listen(uri);
  await stream.until(() => stream.comments.includes('connected'));
  const refused = await call(`${s.url}${uri}`);
  t.equal(refused.status, 503, 'server.max_streams counts OFREP streams too');
  t.equal(refused.headers.get('retry-after'), '5');

  const swapped = nextSwap(s.store);
  rmSync(join(s.dir, 'other.features.yml'));
  await swapped;
  t.equal(await stream.ended(), 'end', 'the stream ends cleanly');
  t.same(stream.events, [{ event: 'message', id: undefined, data: '{"type":"refetchEvaluation"}' }], 'a last refetchEvaluation: the refetch meets the failure now');
  const metrics = await s.http.app.vexil.metrics.registry.getSingleMetricAsString('vexil_streams_closed_total');
  t.match(metrics, /protocol="ofrep",reason="gone"} 1/);
});

t.test('told only after serving: each client that reads again as soon as it is told gets the state it was told of', async (t) => {
  const s = await start(t);
  const ofrep = await s.listen((await s.bulk()).body!.eventStreams![0]!.endpoint!.requestUri);
  const sse = await s.listen('/evaluate/v1/namespaces/default/stream');
  const ndjson = await StreamClient.open('ndjson', `${s.url}/client/v2/environments/default/namespaces/default/stream`);
  t.teardown(() => ndjson.close());
  await sse.until(() => sse.events.length === 1);
  await ndjson.until(() => ndjson.rawLines.length === 1);
  await ofrep.until(() => ofrep.comments.includes('connected'));

  // The store's own order, seen by a listener registered after the hub's: the swapped snapshot
  // is what get() serves when the event comes.
  const seen: boolean[] = [];
  const off = s.store.subscribe((e) => {
    if (e.type === 'swap') seen.push(s.store.get(e.reference) === e.snapshot);
  });
  t.teardown(off);

  for (let edition = 1; edition <= 5; edition++) {
    const wrote = s.edit('features.yml', `order ${edition}`);
    // Read again the moment each stream says so, before anything else happens in this test.
    await ofrep.until(() => ofrep.events.length === edition, `OFREP event ${edition}`);
    const told = ofrep.events[edition - 1]!.id!;
    const refetch = await s.bulk({ query: `?flagConfigEtag=${told}` });
    const flags = refetch.body!.flags;
    t.equal(flags.find((f) => f.key === 'banner')!.metadata!.version, s.store.get()!.revision, `OFREP ${edition}: the refetch reads the new revision`);
    t.equal(new URL(refetch.body!.eventStreams![0]!.endpoint!.requestUri, s.url).searchParams.get('since'), told, `OFREP ${edition}: and the state it was told of`);

    await sse.until(() => sse.events.length === edition + 1, `SSE event ${edition}`);
    t.equal(await s.stateEtag('default'), sse.events[edition]!.id, `SSE ${edition}: the snapshot read after the event is the one announced`);
    await ndjson.until(() => ndjson.rawLines.length === edition + 1, `NDJSON line ${edition}`);
    const line = ndjson.lines()[edition] as { result: { flags: Array<{ key: string; description: string }> } };
    t.equal(line.result.flags.find((f) => f.key === 'banner')!.description, `edition order ${edition}`);
    await wrote;
  }
  t.ok(seen.length >= 5 && seen.every(Boolean), `every swap event came once get() served the new snapshot (${seen.length} swaps)`);
});
