/**
 * The change notifications' delivery against real loopback receivers (node:http on 127.0.0.1) and
 * the real SQLite queue: the CloudEvents 1.0 structured-mode body and its signature as a receiver
 * checks them; a receiver failing twice (retried, one delivery, same ids); one that never answers
 * (each attempt ends at the timeout, the queue stays within its size, the oldest dropped); one that
 * redirects to another loopback port (not followed: that port is never asked); a restart of the
 * notifier over the same file (what was delivered is not sent again, what was queued is); the
 * Slack message within Slack's limits with a link to the UI diff page.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import tap, { type Test } from 'tap';
import { load } from '../../../src/state/load.js';
import type { Snapshot } from '../../../src/model/snapshot.js';
import type { RecordedEvent } from '../../../src/store/history/recorder.js';
import { fullJitter, startNotifier, BACKOFF_BASE_MS, type Notifier } from '../../../src/store/notifications/notifier.js';
import { openSqliteNotificationQueue } from '../../../src/store/notifications/sqlite.js';
import { MAX_BLOCKS, MAX_SECTION_CHARS } from '../../../src/store/notifications/slack-message.js';
import type { NotificationQueueStore, Sink } from '../../../src/store/notifications/types.js';
import { gitFixture } from '../../support/git-fixture.js';

const SECRET = 'a-webhook-secret-of-some-length';
const logger = pino({ level: 'silent' });

function snapshotOf(fixture: string, revision: string): Snapshot {
  const r = load([{ path: 'features.yml', bytes: new TextEncoder().encode(gitFixture(fixture)) }], { reference: 'main', revision, now: new Date('2026-01-01T00:00:00Z') });
  if (r.snapshot === undefined) throw new Error(`invalid fixture ${fixture}`);
  return r.snapshot;
}
const c1 = 'a'.repeat(40);
const c2 = 'b'.repeat(40);
const hello = snapshotOf('hello.yml', c1);
const bonjour = snapshotOf('bonjour.yml', c2);

function served(at = Date.parse('2026-11-28T01:00:00Z'), revision = c2): RecordedEvent {
  return { kind: 'served', reference: 'main', revision: { id: revision, ref: 'main', meta: { author: 'A <a@example.com>', message: 'greet in French' } }, at, previous: hello, next: bonjour };
}

interface Received {
  headers: IncomingMessage['headers'];
  body: Buffer;
}

async function receiver(t: Test, answer: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<{ url: string; got: Received[]; server: Server }> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks) });
      answer(req, res, got.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/vexil?k=secret-path`, got, server };
}

function sink(url: string, over: Partial<Sink> = {}): Sink {
  return { index: 0, type: 'webhook', url, shownUrl: new URL(url).origin, key: `k-${url}`, secret: SECRET, references: ['*'], namespaces: [], events: ['served', 'rejected', 'audit'], timeoutMs: 5000, retries: 3, queueSize: 100, ...over };
}

function queueFile(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-notify-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'auth.db');
}

function notifier(t: Test, sinks: Sink[], queue: NotificationQueueStore, backoffMs = () => 10): Notifier {
  const n = startNotifier({ sinks, queue, scope: 'test', publicUrl: 'https://flags.example.com', logger, userAgent: 'vexil/test', backoffMs });
  t.teardown(async () => {
    await n.stop();
    await queue.close();
  });
  return n;
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function verify(secret: string, body: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(body).digest('hex'));
  const given = Buffer.from(header.slice('sha256='.length));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

tap.test('webhook: a CloudEvents 1.0 structured-mode body, signed over its exact bytes', async (t) => {
  const r = await receiver(t, (_req, res) => res.writeHead(204).end());
  const n = notifier(t, [sink(r.url)], openSqliteNotificationQueue({ path: queueFile(t) }));
  await n.revision(served());
  await until('the delivery', () => r.got.length === 1);
  const [req] = r.got as [Received];
  // HTTP binding, structured content mode: the media type of the JSON event format.
  t.equal(req.headers['content-type'], 'application/cloudevents+json');
  t.ok(verify(SECRET, req.body, req.headers['x-vexil-signature']), 'X-Vexil-Signature is sha256=<hex HMAC-SHA256 of the body>');
  t.notOk(verify('another-secret-of-some-length', req.body, req.headers['x-vexil-signature']), 'and only with the secret');
  t.match(req.headers['x-vexil-delivery'], /^[0-9a-f-]{36}$/, 'a delivery id');
  const e = JSON.parse(req.body.toString('utf8')) as Record<string, unknown>;
  // The required context attributes of CloudEvents 1.0, and the optional ones vexil sets.
  t.equal(e.specversion, '1.0');
  t.match(e.id, /^[0-9a-f-]{36}$/, 'id: a non-empty string');
  t.equal(e.source, 'https://flags.example.com', 'source: a URI-reference (server.public_url)');
  t.equal(e.type, 'io.vexil.revision.served');
  t.ok(!Number.isNaN(Date.parse(e.time as string)) && /Z$/.test(e.time as string), 'time: RFC 3339');
  t.equal(e.time, '2026-11-28T01:00:00.000Z', 'the time the revision started serving');
  t.equal(e.datacontenttype, 'application/json');
  t.equal(e.subject, 'main');
  const data = e.data as { reference: string; revision: string; previousRevision: string; changes: { text: string; summary: { flagsChanged: number }; namespaces: unknown[] }; message: string };
  t.equal(data.reference, 'main');
  t.equal(data.revision, c2);
  t.equal(data.previousRevision, c1);
  t.equal(data.message, 'greet in French');
  t.ok(data.changes.summary.flagsChanged >= 1, 'the semantic diff: a flag changed');
  t.match(data.changes.text, /main@aaaaaaa → main@bbbbbbb/, "the words of 'vexil diff' (format-text)");
  t.notMatch(req.body.toString('utf8'), /secret-path|a-webhook-secret/, 'neither the secret nor the URL in the body');
  await until('marked delivered', async () => (await n.status())[0]!.delivered === 1);
  const [status] = await n.status();
  t.match(status, { queued: 0, delivered: 1, lastDelivery: { outcome: 'delivered', status: 204, attempts: 1 } });
});

tap.test('a receiver that fails twice: retried with the same body and ids, delivered once', async (t) => {
  const r = await receiver(t, (_req, res, n) => res.writeHead(n <= 2 ? 503 : 200).end('ignored'));
  const n = notifier(t, [sink(r.url)], openSqliteNotificationQueue({ path: queueFile(t) }));
  await n.revision(served());
  await until('three attempts', () => r.got.length === 3);
  await until('delivered', async () => (await n.status())[0]!.delivered === 1);
  const ids = r.got.map((g) => (JSON.parse(g.body.toString('utf8')) as { id: string }).id);
  t.same(new Set(ids).size, 1, 'every attempt carries the same CloudEvents id');
  t.same(new Set(r.got.map((g) => g.headers['x-vexil-delivery'])).size, 1, 'and the same delivery id');
  t.same(new Set(r.got.map((g) => g.body.toString('hex'))).size, 1, 'and the same bytes');
  const [status] = await n.status();
  t.match(status, { queued: 0, delivered: 1, failed: 0, failedAttempts: 2, lastDelivery: { outcome: 'delivered', attempts: 3 } });
  await new Promise((res) => setTimeout(res, 200));
  t.equal(r.got.length, 3, 'nothing more is sent');
});

tap.test('full jitter: each wait is between 0 and base × 2^retry', async (t) => {
  for (let retry = 0; retry < 6; retry++) {
    for (let i = 0; i < 50; i++) {
      const w = fullJitter(retry);
      t.ok(w >= 0 && w <= BACKOFF_BASE_MS * 2 ** retry, `retry ${retry}: ${w}`);
    }
  }
  t.end();
});

tap.test('a receiver that never answers: each attempt ends at the timeout; the queue stays within its size', async (t) => {
  const r = await receiver(t, () => undefined); // reads the request, never answers
  const n = notifier(t, [sink(r.url, { timeoutMs: 200, retries: 1, queueSize: 2 })], openSqliteNotificationQueue({ path: queueFile(t) }));
  for (let i = 0; i < 6; i++) await n.revision(served(Date.parse('2026-11-28T01:00:00Z') + i, `${i}`.repeat(40)));
  await until('the first delivery failed', async () => (await n.status())[0]!.failed >= 1);
  const [status] = await n.status();
  t.ok(status!.queued <= 2, `at most queue_size undelivered (${status!.queued})`);
  t.ok(status!.dropped >= 3, `the oldest were dropped and counted (${status!.dropped})`);
  t.match(status!.lastDelivery, { outcome: /failed|retrying/, error: /no answer within 200 ms/ });
  t.notMatch(JSON.stringify(status!.lastDelivery), /secret-path/, 'the error does not quote the URL');
});

tap.test('a redirect to another loopback port is not followed', async (t) => {
  const other = await receiver(t, (_req, res) => res.writeHead(200).end());
  const r = await receiver(t, (_req, res) => res.writeHead(307, { location: other.url }).end());
  const n = notifier(t, [sink(r.url, { retries: 1 })], openSqliteNotificationQueue({ path: queueFile(t) }));
  await n.revision(served());
  await until('failed after its retries', async () => (await n.status())[0]!.failed === 1);
  t.equal(r.got.length, 2, 'the sink was asked twice (one retry)');
  t.equal(other.got.length, 0, 'the port the redirect named was never asked');
  t.match((await n.status())[0]!.lastDelivery, { outcome: 'failed', status: 307, error: /redirect not followed/ });
});

tap.test('a restart over the same queue: delivered events are not sent again, queued ones are', async (t) => {
  const file = queueFile(t);
  let down = true;
  const r = await receiver(t, (_req, res) => res.writeHead(down ? 500 : 200).end());
  const firstQueue = openSqliteNotificationQueue({ path: file });
  const first = startNotifier({ sinks: [sink(r.url, { retries: 20 })], queue: firstQueue, scope: 'test', logger, userAgent: 'vexil/test', backoffMs: () => 60_000 });
  await first.revision(served(1, c1));
  await until('a failed attempt', () => r.got.length === 1);
  await first.stop();
  await firstQueue.close();
  down = false;
  const queue = openSqliteNotificationQueue({ path: file });
  const second = notifier(t, [sink(r.url, { retries: 20 })], queue);
  await until('delivered after the restart', async () => (await second.status())[0]!.delivered === 1);
  t.equal(r.got.length, 2, 'the queued event was sent once more, and delivered');
  await second.revision(served(1, c1));
  await new Promise((res) => setTimeout(res, 300));
  t.equal(r.got.length, 2, 'the same event queued again is not sent again');
});

tap.test('slack: text and blocks within the limits; a long diff summarised with a link to the UI diff page', async (t) => {
  const r = await receiver(t, (_req, res) => res.writeHead(200).end('ok'));
  const n = notifier(t, [sink(r.url, { type: 'slack', index: 0 })], openSqliteNotificationQueue({ path: queueFile(t) }));
  // A large change: every flag of a generated state differs.
  const many = (variant: string) => `namespace: default\nflags:\n${Array.from({ length: 600 }, (_, i) => `  - key: flag-${i}\n    name: Flag ${i} ${variant}\n    type: BOOLEAN_FLAG_TYPE\n    enabled: ${variant === 'b'}\n`).join('')}`;
  const big = (v: string, rev: string) => {
    const res = load([{ path: 'features.yml', bytes: new TextEncoder().encode(many(v)) }], { reference: 'main', revision: rev, now: new Date('2026-01-01T00:00:00Z') });
    return res.snapshot!;
  };
  await n.revision({ kind: 'served', reference: 'main', revision: { id: c2, ref: 'main' }, at: 5, previous: big('a', c1), next: big('b', c2) });
  await n.revision(served(6));
  await until('two messages', () => r.got.length === 2);
  for (const g of r.got) {
    t.equal(g.headers['content-type'], 'application/json');
    const m = JSON.parse(g.body.toString('utf8')) as { text: string; blocks: Array<{ type: string; text?: { text: string } }> };
    t.ok(m.text.length > 0, 'a text');
    t.ok(m.blocks.length <= MAX_BLOCKS, `at most ${MAX_BLOCKS} blocks`);
    for (const b of m.blocks) t.ok((b.text?.text.length ?? 0) <= MAX_SECTION_CHARS, 'section text within 3000 characters');
  }
  const long = JSON.parse(r.got[0]!.body.toString('utf8')) as { text: string; blocks: Array<{ text?: { text: string } }> };
  t.match(long.text, /flags: 0 added, 0 removed, 600 changed/, 'the summary');
  t.match(JSON.stringify(long.blocks), `https://flags.example.com/ui/diff?base=${c1}&head=${c2}`, 'a link to the UI diff page');
  const short = JSON.parse(r.got[1]!.body.toString('utf8')) as { blocks: Array<{ text?: { text: string } }> };
  t.match(JSON.stringify(short.blocks), /main@aaaaaaa → main@bbbbbbb/, 'a short diff in full, in the words of vexil diff');
});

tap.test('namespaces narrow what counts; references and events choose the sinks', async (t) => {
  const r = await receiver(t, (_req, res) => res.writeHead(200).end());
  const other = await receiver(t, (_req, res) => res.writeHead(200).end());
  const n = notifier(t, [sink(r.url, { namespaces: ['elsewhere'] }), sink(other.url, { index: 1, references: ['release/*'] })], openSqliteNotificationQueue({ path: queueFile(t) }));
  await n.revision(served());
  await n.revision({ ...served(7), reference: 'release/1' } as RecordedEvent);
  await until('the release sink heard', () => other.got.length === 1);
  await new Promise((res) => setTimeout(res, 200));
  t.equal(r.got.length, 0, 'a change outside the sink namespaces is not its event');
  t.equal(JSON.parse(other.got[0]!.body.toString('utf8')).subject, 'release/1', 'only the reference the glob matches');
});

tap.test('audit events: to the sinks that ask for them, in the same envelope, their own type, no token', async (t) => {
  const r = await receiver(t, (_req, res) => res.writeHead(200).end());
  const quiet = await receiver(t, (_req, res) => res.writeHead(200).end());
  const n = notifier(t, [sink(r.url), sink(quiet.url, { index: 1, events: ['served'] })], openSqliteNotificationQueue({ path: queueFile(t) }));
  await n.audit({
    id: '0b6e7a9e-7f7c-4a53-9d1f-3b1d2f7c9a10',
    type: 'io.vexil.auth.token.created',
    time: '2026-11-28T01:02:03.000Z',
    actor: { authenticationId: 'admin-1', method: 'METHOD_TOKEN', metadata: { 'io.flipt.auth.token.name': 'admin' } },
    subject: { authenticationId: 'tok-2', method: 'METHOD_TOKEN', metadata: { 'io.flipt.auth.token.name': 'ci' } },
    address: '127.0.0.1',
  });
  await until('the audit event delivered', () => r.got.length === 1);
  const e = JSON.parse(r.got[0]!.body.toString('utf8')) as Record<string, unknown>;
  t.match(e, { specversion: '1.0', id: '0b6e7a9e-7f7c-4a53-9d1f-3b1d2f7c9a10', type: 'io.vexil.auth.token.created', time: '2026-11-28T01:02:03.000Z' });
  t.same(Object.keys(e.data as object).sort(), ['actor', 'address', 'subject'], 'data: the event without id, type and time');
  t.ok(verify(SECRET, r.got[0]!.body, r.got[0]!.headers['x-vexil-signature']), 'signed');
  await new Promise((res) => setTimeout(res, 200));
  t.equal(quiet.got.length, 0, 'a sink without `audit` in its events hears none');
});

tap.test('receivers answering garbage or an endless body cannot stall delivery', async (t) => {
  // Not HTTP at all: bytes, then the connection stays open.
  const { createServer: createTcpServer } = await import('node:net');
  let garbageAsked = 0;
  const garbage = createTcpServer((socket) => {
    garbageAsked++;
    socket.on('error', () => undefined);
    socket.write('\x00\x01garbage that is no status line\r\n\r\n');
  });
  await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
  t.teardown(() => garbage.close());
  const garbageUrl = `http://127.0.0.1:${(garbage.address() as AddressInfo).port}/`;
  // 200, then a body that never ends.
  const endless = await receiver(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const timer = setInterval(() => res.write('x'.repeat(64 * 1024)), 5);
    res.on('close', () => clearInterval(timer));
  });
  const n = notifier(t, [sink(garbageUrl, { retries: 1, timeoutMs: 1000 }), sink(endless.url, { index: 1 })], openSqliteNotificationQueue({ path: queueFile(t) }));
  await n.revision(served());
  await until('both sinks done', async () => {
    const [g, e] = await n.status();
    return g!.failed === 1 && e!.delivered === 1;
  });
  const [g, e] = await n.status();
  t.equal(garbageAsked, 2, 'the garbage answer failed the attempt; retried once');
  t.match(g!.lastDelivery, { outcome: 'failed', error: /request failed|no answer/ });
  t.match(e!.lastDelivery, { outcome: 'delivered', status: 200, attempts: 1 }, 'a 2xx status line is enough: the endless body is not read');
});

tap.test('a rejected revision: its problems, the revision still served, no diff', async (t) => {
  const r = await receiver(t, (_req, res) => res.writeHead(200).end());
  const n = notifier(t, [sink(r.url)], openSqliteNotificationQueue({ path: queueFile(t) }));
  const problems = Array.from({ length: 25 }, (_, i) => ({ severity: 'error' as const, rule: 'segment.unknown', file: 'features.yml', line: i + 1, column: 3, message: `segment "s${i}" is not defined` }));
  await n.revision({ kind: 'rejected', reference: 'main', rejected: { revision: { id: c2, ref: 'main', meta: { author: 'B <b@example.com>' } }, at: '2026-11-28T01:05:00.000Z', problems }, at: Date.parse('2026-11-28T01:05:00.000Z'), previous: hello });
  await until('delivered', () => r.got.length === 1);
  const e = JSON.parse(r.got[0]!.body.toString('utf8')) as { type: string; time: string; data: { revision: string; previousRevision: string; changes: unknown; problems: unknown[]; problemCount: number } };
  t.equal(e.type, 'io.vexil.revision.rejected');
  t.equal(e.time, '2026-11-28T01:05:00.000Z');
  t.match(e.data, { revision: c2, previousRevision: c1, changes: null, problemCount: 25 });
  t.equal(e.data.problems.length, 20, 'the first 20 problems');
  t.match(e.data.problems[0], { rule: 'segment.unknown', file: 'features.yml', line: 1, column: 3 });
});
