/**
 * `GET /meta/notifications` (vexil's extension): each configured notification sink (its type, its
 * URL as scheme and host only, what it watches), its queue length, how many events were dropped,
 * delivered and failed in this process, and its last delivery attempt. Auth: as `/meta/history`.
 * No secret and no full URL is ever part of the answer (a Slack webhook URL is a secret).
 * Prometheus (`registerNotificationMetrics`): deliveries by sink index, type and outcome, queue
 * length and drops by sink index and type; never a URL in a label.
 */
import type Router from '@koa/router';
import { Counter, Gauge, type Registry } from 'prom-client';
import { historyUnavailable } from '../../errors.js';
import type { AppState } from '../../http/context.js';
import { sendJson } from '../../http/respond.js';
import type { Notifier, SinkStatus } from '../../store/notifications/notifier.js';

export interface NotificationsDeps {
  readonly notifier: Notifier;
}

export function sinkJson(s: SinkStatus) {
  return {
    index: s.sink.index,
    type: s.sink.type,
    url: s.sink.shownUrl,
    references: s.sink.references,
    namespaces: s.sink.namespaces,
    events: s.sink.events,
    queued: s.queued,
    dropped: s.dropped,
    delivered: s.delivered,
    failed: s.failed,
    lastDelivery: s.lastDelivery ?? null,
  };
}

export function registerNotificationsRoutes(router: Router<AppState>, deps: NotificationsDeps): void {
  router.get('/meta/notifications', async (ctx) => {
    let sinks: SinkStatus[];
    try {
      sinks = await deps.notifier.status();
    } catch (err) {
      // The queue shares the history's database: the same 503 (cause in the log, not the answer).
      throw historyUnavailable(err);
    }
    sendJson(ctx, { sinks: sinks.map(sinkJson) });
  });
}

export function registerNotificationMetrics(registry: Registry, notifier: Notifier): void {
  if (registry.getSingleMetric('vexil_notifications_deliveries_total') !== undefined) return;
  const labelsOf = (s: SinkStatus) => ({ sink: String(s.sink.index), type: s.sink.type });
  new Counter({
    name: 'vexil_notifications_deliveries_total',
    help: 'Notification delivery attempts by sink (its index in notifications.sinks), type and outcome (delivered; failed: retries exhausted; retried: an attempt that failed).',
    labelNames: ['sink', 'type', 'outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of notifier.counters()) {
        this.inc({ ...labelsOf(s), outcome: 'delivered' }, s.delivered);
        this.inc({ ...labelsOf(s), outcome: 'failed' }, s.failed);
        this.inc({ ...labelsOf(s), outcome: 'retried' }, s.failedAttempts);
      }
    },
  });
  new Counter({
    name: 'vexil_notifications_dropped_total',
    help: 'Undelivered notifications dropped because the sink queue was full (notifications.sinks[].queue_size), by sink index and type.',
    labelNames: ['sink', 'type'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of notifier.counters()) this.inc(labelsOf(s), s.dropped);
    },
  });
  new Gauge({
    name: 'vexil_notifications_queued',
    help: 'Notifications waiting for delivery, by sink index and type.',
    labelNames: ['sink', 'type'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const all = await notifier.status().catch(() => notifier.counters());
      for (const s of all) this.set(labelsOf(s), s.queued);
    },
  });
}
