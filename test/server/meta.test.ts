import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import t from 'tap';
import type { StoreEvent } from '../../src/store/types.js';
import type { SnapshotStore } from '../../src/store/types.js';
import { FIXTURES, get, isErrorBody, post, startTestServer } from './support.js';

function nextEvent(store: SnapshotStore, type: StoreEvent['type']): Promise<StoreEvent> {
  return new Promise((resolve) => {
    const off = store.subscribe((e) => {
      if (e.type === type) {
        off();
        resolve(e);
      }
    });
  });
}

t.test('health, info, snapshots, metrics, headers', async (t) => {
  const { url, store, dir } = await startTestServer(t);
  const revision = store.get()!.revision;

  t.test('/health', async (t) => {
    const r = await get(`${url}/health`);
    t.equal(r.status, 200);
    t.same(r.body, { status: 'SERVING' });
    t.equal(r.headers.get('x-vexil-revision'), revision);
  });

  t.test('/ready after the first load', async (t) => {
    const r = await get(`${url}/ready`);
    t.equal(r.status, 200);
    t.same(r.body, { status: 'READY', reference: store.defaultReference, revision });
  });

  t.test('/meta/info', async (t) => {
    const r = await get(`${url}/meta/info`);
    t.equal(r.status, 200);
    t.match(r.body, {
      version: '1.2.3',
      commit: 'abc123',
      isRelease: true,
      updateAvailable: false,
      os: process.platform,
      authentication: { required: false },
      storage: { type: 'local', readOnly: true },
      reference: store.defaultReference,
      revision,
    });
    t.equal(typeof r.body.arch, 'string');
    t.notOk('buildDate' in r.body, 'unset fields are omitted');
  });

  t.test('/meta/snapshots', async (t) => {
    const r = await get(`${url}/meta/snapshots`);
    t.equal(r.status, 200);
    t.equal(r.body.defaultReference, store.defaultReference);
    t.equal(r.body.references.length, 1);
    const [ref] = r.body.references;
    t.match(ref, { reference: store.defaultReference, default: true, revision: { id: revision } });
    t.match(ref.loadedAt, /^\d{4}-\d{2}-\d{2}T/);
    t.notOk('lastRejected' in ref);
  });

  t.test('X-Request-Id: echoed when sane, generated otherwise', async (t) => {
    const echoed = await fetch(`${url}/health`, { headers: { 'X-Request-Id': 'abc-123' } });
    t.equal(echoed.headers.get('x-request-id'), 'abc-123');
    const insane = await fetch(`${url}/health`, { headers: { 'X-Request-Id': 'a b\tc'.repeat(50) } });
    t.match(insane.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
    const none = await fetch(`${url}/health`);
    t.match(none.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
  });

  t.test('/metrics exposes the series', async (t) => {
    await post(`${url}/evaluate/v1/variant`, { flagKey: 'color', entityId: 'u', context: { plan: 'beta' } });
    await post(`${url}/evaluate/v1/boolean`, { flagKey: 'new-checkout', entityId: 'u', context: { plan: 'beta' } });
    await post(`${url}/evaluate/v1/variant`, { flagKey: 'no-such-flag-xyz', entityId: 'u' });
    const r = await fetch(`${url}/metrics`);
    t.equal(r.status, 200);
    t.match(r.headers.get('content-type'), /^text\/plain/);
    t.ok(r.headers.has('x-vexil-revision'));
    const text = await r.text();
    t.match(text, /vexil_http_request_duration_seconds_bucket\{[^}]*method="POST"[^}]*route="\/evaluate\/v1\/variant"[^}]*status="200"/);
    t.match(text, /vexil_evaluations_total\{namespace="default",flag="color",type="variant",reason="MATCH_EVALUATION_REASON"\} 1/);
    t.match(text, /vexil_evaluations_total\{namespace="default",flag="new-checkout",type="boolean",reason="MATCH_EVALUATION_REASON"\} 1/);
    t.match(text, /vexil_evaluations_total\{namespace="default",flag="",type="error",reason="NOT_FOUND_ERROR_EVALUATION_REASON"\} 1/);
    t.notMatch(text, /no-such-flag-xyz/, 'unknown flag keys never become label values');
    t.match(text, new RegExp(`vexil_snapshot_age_seconds\\{reference="${store.defaultReference}"\\} \\d`));
    t.match(text, /# TYPE vexil_snapshot_reloads_total counter/);
    t.match(text, /# TYPE vexil_snapshot_reload_failures_total counter/);
    t.match(text, /process_cpu_user_seconds_total/);
    const unmatched = await get(`${url}/no/such/path/${'x'.repeat(10)}`);
    t.equal(unmatched.status, 404);
    const after = await (await fetch(`${url}/metrics`)).text();
    t.match(after, /route="unmatched"/);
    t.notMatch(after, /no\/such\/path/, 'unmatched paths are not labels');
  });

  t.test('a broken edit is rejected, reported and counted; a good one swaps', async (t) => {
    const original = readFileSync(join(dir, 'features.yml'));
    const rejected = nextEvent(store, 'rejected');
    writeFileSync(join(dir, 'features.yml'), readFileSync(join(FIXTURES, 'broken', 'features.yml')));
    // The watcher would notice too; refresh() makes the test independent of its timing.
    await store.refresh();
    await rejected;
    const flag = await get(`${url}/api/v1/namespaces/default/flags/color`);
    t.equal(flag.status, 200, 'the last good snapshot is still served');
    t.equal(flag.headers.get('x-vexil-revision'), revision);
    const snaps = await get(`${url}/meta/snapshots`);
    const ref = snaps.body.references[0];
    t.equal(ref.revision.id, revision);
    t.ok(ref.lastRejected, 'lastRejected is reported');
    t.not(ref.lastRejected.revision.id, revision);
    t.ok(ref.lastRejected.problems.length > 0);
    t.match(ref.lastRejected.problems[0], { severity: 'error', file: 'features.yml' });
    t.ok(ref.lastRejected.problems[0].line > 0, 'problems are located');
    const metrics = await (await fetch(`${url}/metrics`)).text();
    t.match(metrics, /vexil_snapshot_reload_failures_total\{reference="[^"]+",kind="rejected"\} [1-9]/);

    const swapped = nextEvent(store, 'swap');
    writeFileSync(join(dir, 'features.yml'), Buffer.concat([original, Buffer.from('\n# touched\n')]));
    await store.refresh();
    await swapped;
    const after = await get(`${url}/api/v1/namespaces/default/flags/color`);
    t.equal(after.status, 200);
    const newRevision = after.headers.get('x-vexil-revision');
    t.not(newRevision, revision, 'X-Vexil-Revision follows the swap');
    t.equal(newRevision, store.get()!.revision);
    const metrics2 = await (await fetch(`${url}/metrics`)).text();
    t.match(metrics2, /vexil_snapshot_reloads_total\{reference="[^"]+"\} [1-9]/);
  });
});

t.test('/ready before the first snapshot', async (t) => {
  const { url, store } = await startTestServer(t, { startStore: false });
  const before = await get(`${url}/ready`);
  t.equal(before.status, 503);
  t.ok(isErrorBody(before.body));
  t.equal(before.body.code, 14);
  t.match(before.body.message, `no snapshot of reference "${store.defaultReference}" has been loaded yet`);
  t.equal(before.headers.get('x-vexil-revision'), '', 'no revision yet: the header is empty');
  const health = await get(`${url}/health`);
  t.equal(health.status, 200, 'alive while not ready');
  await store.start();
  const after = await get(`${url}/ready`);
  t.equal(after.status, 200);
  t.equal(after.headers.get('x-vexil-revision'), store.get()!.revision);
});

t.test('graceful close drains an in-flight request', async (t) => {
  const { url, server } = await startTestServer(t);
  const u = new URL(url);
  const body = '{"flagKey":"color","entityId":"u"}';
  const socket = connect(Number(u.port), u.hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  // Headers and half the body: the request is in flight when close() starts.
  socket.write(`POST /evaluate/v1/variant HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
  await new Promise((r) => setTimeout(r, 50));
  let closed = false;
  const closing = server.close().then(() => {
    closed = true;
  });
  await new Promise((r) => setTimeout(r, 50));
  t.notOk(closed, 'close() waits for the in-flight request');
  socket.write(body.slice(10));
  await ended;
  await closing;
  const raw = Buffer.concat(chunks).toString('utf8');
  t.match(raw, /^HTTP\/1\.1 200 OK/);
  t.match(raw.toLowerCase(), /connection: close/);
  t.match(raw, /"variantKey":"blue"/);
  await t.rejects(fetch(`${url}/health`), 'no new connections after close');
});

t.test('health turns NOT_SERVING once shutdown starts', async (t) => {
  const { url, server } = await startTestServer(t);
  server.app.vexil.health.serving = false;
  const r = await get(`${url}/health`);
  t.equal(r.status, 503);
  t.same(r.body, { code: 14, message: 'NOT_SERVING', details: [] });
  t.equal(r.headers.get('connection'), 'close');
  server.app.vexil.health.serving = true;
});
