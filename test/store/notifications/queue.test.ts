/**
 * The notification queue stores (sqlite.ts, postgres.ts on a throwaway server) under the same
 * checks: an event queued twice for a sink is one delivery; the queue keeps its size by dropping
 * the oldest unclaimed; two stores on one database (two replicas, two processes) never claim the
 * same delivery; a claim ends with its lease or a release; a finished delivery is not claimed again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tap, { type Test } from 'tap';
import { openPostgresNotificationQueue } from '../../../src/store/notifications/postgres.js';
import { openSqliteNotificationQueue } from '../../../src/store/notifications/sqlite.js';
import type { NotificationQueueStore } from '../../../src/store/notifications/types.js';
import { isCI, reportMissing } from '../../support/requirements.js';
import { postgresUnavailableReason, startPostgres } from '../../support/throwaway-db.js';

const delivery = (sink: string, n: number) => ({ sink, eventId: `event-${n}`, deliveryId: `delivery-${n}`, body: `{"n":${n}}` });

async function suite(t: Test, open: () => Promise<NotificationQueueStore>): Promise<void> {
  const [a, b] = await Promise.all([open(), open()]);
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const now = 1_800_000_000_000;

  await t.test('an event queued twice is one delivery', async (t) => {
    t.same(await a.enqueue(delivery('s1', 1), now, 10), { queued: true, dropped: 0 });
    t.same(await b.enqueue(delivery('s1', 1), now, 10), { queued: false, dropped: 0 }, 'the other replica queues nothing');
    t.equal(await a.pending('s1'), 1);
    t.equal(await a.enqueue(delivery('s1-other', 1), now, 10).then((r) => r.queued), true, 'the same event for another sink is its own delivery');
  });

  await t.test('two stores never claim the same delivery; a finished one is not claimed again', async (t) => {
    const [x, y] = await Promise.all([a.claim('s1', 'replica-a', now, 60_000), b.claim('s1', 'replica-b', now, 60_000)]);
    t.equal([x, y].filter((d) => d !== undefined).length, 1, 'exactly one of two concurrent claims gets it');
    const got = (x ?? y)!;
    t.match(got, { eventId: 'event-1', deliveryId: 'delivery-1', body: '{"n":1}', attempts: 0 });
    t.equal(await a.claim('s1', 'replica-a', now + 1000, 60_000), undefined, 'held by its claim');
    await a.attempted(got.seq, 2);
    t.match(await b.claim('s1', 'replica-b', now + 61_000, 60_000), { eventId: 'event-1', attempts: 2 }, 'after the lease, another replica takes it, with its attempts');
    await b.finish(got.seq, 'delivered', now + 62_000, 3);
    t.equal(await a.claim('s1', 'replica-a', now + 200_000, 60_000), undefined, 'delivered: never claimed again');
    t.equal(await a.pending('s1'), 0);
    t.same(await a.enqueue(delivery('s1', 1), now, 10), { queued: false, dropped: 0 }, 'nor queued again');
  });

  await t.test('release gives a claim back at once', async (t) => {
    await a.enqueue(delivery('s2', 1), now, 10);
    t.ok(await a.claim('s2', 'stopping', now, 60_000));
    await a.release('stopping');
    t.match(await b.claim('s2', 'other', now + 1, 60_000), { eventId: 'event-1' });
  });

  await t.test('the queue keeps its size: the oldest unclaimed dropped', async (t) => {
    for (let i = 1; i <= 3; i++) await a.enqueue(delivery('s3', i), now + i, 3);
    t.ok(await a.claim('s3', 'busy', now, 60_000), 'the oldest is in flight');
    let dropped = 0;
    for (let i = 4; i <= 6; i++) dropped += (await a.enqueue(delivery('s3', i), now + i, 3)).dropped;
    t.equal(dropped, 2, 'two dropped: queue_size wait besides the one in flight');
    t.equal(await a.pending('s3'), 4, 'the one in flight and the newest three');
    await a.release('busy');
    const order: string[] = [];
    for (;;) {
      const d = await a.claim('s3', 'drain', now + 10, 60_000);
      if (d === undefined) break;
      order.push(d.eventId);
      await a.finish(d.seq, 'delivered', now + 11, 1);
    }
    t.same(order, ['event-1', 'event-4', 'event-5', 'event-6'], 'in order; events 2 and 3 were dropped');
  });
}

tap.test('the SQLite queue', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-notify-queue-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await suite(t, async () => openSqliteNotificationQueue({ path: join(dir, 'auth.db') }));
});

const reason = postgresUnavailableReason();
tap.test('the PostgreSQL queue', { skip: reason !== undefined && !isCI() ? reason : false }, async (t) => {
  if (reason !== undefined) reportMissing(t, 'postgres', reason);
  const server = await startPostgres({ database: 'vexil_notify_queue' });
  t.teardown(() => server.close());
  await suite(t, () => openPostgresNotificationQueue({ url: server.url, connectTimeoutMs: 5000, queryTimeoutMs: 5000, poolWaitTimeoutMs: 5000 }));
});
