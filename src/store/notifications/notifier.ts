/**
 * The change notifications at work: events in (a revision the history recorded, an audit event),
 * one queued delivery per matching sink out, and per sink one worker that takes its deliveries in
 * order from the queue store and sends them.
 *
 * Nothing here is on a request's path: events arrive through listeners that are not awaited (the
 * history recorder's, the audit trail's), the diff is computed in time slices (revision-event.ts),
 * and delivery runs in the background. A failing or hanging receiver only holds its own sink's
 * worker, for at most its timeout per attempt.
 *
 * Delivery: an attempt (send.ts) that fails is retried up to the sink's `retries` times after a
 * random wait between 0 and min(BACKOFF_CAP_MS, BACKOFF_BASE_MS × 2^n) (exponential backoff with
 * full jitter), with the same body, event id and delivery id; then the delivery is marked failed.
 * The attempt count is stored, so a restart continues the series rather than starting it again.
 *
 * Exactly once: an event is queued only when the history wrote it (once per cluster when replicas
 * coordinate), under an id derived from it, and (sink, event id) is unique in the queue; a worker
 * claims a delivery (a row lock and a lease, postgres.ts) before sending and marks it delivered
 * after a 2xx. A process stopping gives its claims back; one killed leaves them to its lease.
 *
 * Bounds: each sink's queue holds at most `queue_size` undelivered events (the oldest dropped,
 * counted and logged); this process keeps counters and the last delivery per sink only.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { AuditEvent } from '../../auth/audit.js';
import { globMatch } from '../../state/glob.js';
import type { RecordedEvent } from '../history/recorder.js';
import type { StoreLogger } from '../types.js';
import { CLOUDEVENTS_CONTENT_TYPE, DELIVERY_HEADER, EVENT_TYPES, SIGNATURE_HEADER, cloudEventBody, signature } from './cloudevent.js';
import { revisionEvent, type RevisionEventData } from './revision-event.js';
import { send, type SendOutcome } from './send.js';
import { slackAuditMessage, slackRevisionMessage } from './slack-message.js';
import type { NotificationQueueStore, Sink } from './types.js';
import type { Snapshot } from '../../model/snapshot.js';

export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 300_000;
/** How often an idle worker looks at the queue for what another replica queued or left. */
export const IDLE_POLL_MS = 5_000;

export interface LastDelivery {
  /** RFC 3339, when the attempt ended. */
  readonly at: string;
  readonly outcome: 'delivered' | 'retrying' | 'failed';
  readonly status?: number;
  readonly attempts: number;
  readonly error?: string;
}

export interface SinkStatus {
  readonly sink: Sink;
  readonly queued: number;
  readonly dropped: number;
  readonly delivered: number;
  readonly failed: number;
  readonly failedAttempts: number;
  readonly lastDelivery?: LastDelivery;
}

export interface Notifier {
  /** For the history recorder's onRecorded: queues the event's deliveries (resolves once they are stored). */
  revision(e: RecordedEvent): Promise<void>;
  /** For the audit trail's onEvent. */
  audit(e: AuditEvent): Promise<void>;
  /** Each sink's queue and counters (the queue length read from the store). */
  status(): Promise<SinkStatus[]>;
  /** The counters only, no store read (metrics). */
  counters(): ReadonlyArray<Omit<SinkStatus, 'queued'> & { readonly queued: number }>;
  /** Stops the workers (a delivery in flight is abandoned) and gives back their claims. */
  stop(): Promise<void>;
}

export interface NotifierOptions {
  readonly sinks: readonly Sink[];
  readonly queue: NotificationQueueStore;
  /** Names this process's claims; and, for event ids, the history scope. */
  readonly scope: string;
  /** server.public_url: the events' source and the Slack links. */
  readonly publicUrl?: string;
  readonly logger: StoreLogger;
  readonly userAgent: string;
  /**
   * Builds a past revision by its id (the store's on-demand build of a pinned commit), for the
   * first swap after a start, when the revision served before is known only from the history.
   * Absent, or failing (a backend that cannot look up old revisions), the event has no `changes`.
   */
  readonly snapshotOf?: (revision: string) => Promise<Snapshot>;
  /** Test seam for the wait between attempts (default: the backoff above). */
  readonly backoffMs?: (retry: number) => number;
}

/** A UUID-shaped id derived from `parts` (the same parts always give the same id). */
export function derivedId(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\n')).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export function fullJitter(retry: number): number {
  return Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
}

export function startNotifier(opts: NotifierOptions): Notifier {
  const { sinks, queue, logger } = opts;
  const source = opts.publicUrl ?? '/vexil';
  const backoff = opts.backoffMs ?? fullJitter;
  const owner = `${opts.scope}/${process.pid}/${randomUUID()}`;
  const stopping = new AbortController();
  const state = sinks.map(() => ({ dropped: 0, delivered: 0, failed: 0, failedAttempts: 0, queued: 0, lastDelivery: undefined as LastDelivery | undefined, wake: undefined as (() => void) | undefined }));
  // Events are queued in the order they happened.
  let chain: Promise<void> = Promise.resolve();

  function wake(i: number): void {
    const w = state[i]!.wake;
    state[i]!.wake = undefined;
    w?.();
  }

  async function put(sink: Sink, eventId: string, body: string, at: number): Promise<void> {
    const r = await queue.enqueue({ sink: sink.key, eventId, deliveryId: derivedId(sink.key, eventId), body }, at, sink.queueSize);
    if (r.dropped > 0) {
      state[sink.index]!.dropped += r.dropped;
      logger.warn({ sink: sink.index, type: sink.type, dropped: r.dropped, queueSize: sink.queueSize }, 'notification queue full: the oldest undelivered events were dropped');
    }
    if (r.queued) wake(sink.index);
  }

  function serialized(work: () => Promise<void>): Promise<void> {
    const next = chain.then(work);
    chain = next.catch(() => undefined);
    return next;
  }

  /** A served event without the previous snapshot in memory gets it built, when it can be. */
  async function withPrevious(e: RecordedEvent): Promise<RecordedEvent> {
    if (e.kind !== 'served' || e.previous !== undefined || e.previousRevision === undefined || opts.snapshotOf === undefined) return e;
    try {
      return { ...e, previous: await opts.snapshotOf(e.previousRevision) };
    } catch (err) {
      logger.warn({ reference: e.reference, revision: e.previousRevision, err: err instanceof Error ? err.message : String(err) }, 'the revision served before could not be built; the notification has no changes');
      return e;
    }
  }

  async function queueRevision(e: RecordedEvent): Promise<void> {
    const wanted = sinks.filter((s) => s.events.includes(e.kind) && s.references.some((p) => globMatch(p, e.reference)));
    if (wanted.length === 0 || stopping.signal.aborted) return;
    const ev = await revisionEvent(await withPrevious(e));
    const eventId = derivedId(opts.scope, ev.kind, ev.reference, ev.revision, String(ev.at));
    const time = new Date(ev.at).toISOString();
    for (const sink of wanted) {
      const data: RevisionEventData | undefined = ev.forSink(sink.namespaces);
      if (data === undefined) continue;
      const body =
        sink.type === 'slack'
          ? slackRevisionMessage(ev.kind, data, opts.publicUrl)
          : cloudEventBody({ id: eventId, source, type: EVENT_TYPES[ev.kind], time, subject: ev.reference, data });
      await put(sink, eventId, body, ev.at);
    }
  }

  async function queueAudit(e: AuditEvent): Promise<void> {
    const wanted = sinks.filter((s) => s.events.includes('audit'));
    if (wanted.length === 0 || stopping.signal.aborted) return;
    const { id, type, time, ...data } = e;
    const at = Date.parse(time);
    for (const sink of wanted) {
      const body = sink.type === 'slack' ? slackAuditMessage(e) : cloudEventBody({ id, source, type, time, data });
      await put(sink, id, body, at);
    }
  }

  function headers(sink: Sink, deliveryId: string, body: string): Record<string, string> {
    const h: Record<string, string> = {
      'content-type': sink.type === 'webhook' ? CLOUDEVENTS_CONTENT_TYPE : 'application/json',
      'user-agent': opts.userAgent,
      [DELIVERY_HEADER]: deliveryId,
    };
    if (sink.type === 'webhook' && sink.secret !== undefined) h[SIGNATURE_HEADER] = signature(sink.secret, body);
    return h;
  }

  function leaseMs(sink: Sink): number {
    let ms = 60_000 + (sink.retries + 1) * sink.timeoutMs;
    for (let n = 0; n < sink.retries; n++) ms += Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** n);
    return ms;
  }

  function pause(ms: number, i?: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stopping.signal.removeEventListener('abort', done);
        if (i !== undefined && state[i]!.wake === done) state[i]!.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      stopping.signal.addEventListener('abort', done, { once: true });
      if (i !== undefined) state[i]!.wake = done;
    });
  }

  async function work(sink: Sink): Promise<void> {
    const st = state[sink.index]!;
    while (!stopping.signal.aborted) {
      let d;
      try {
        d = await queue.claim(sink.key, owner, Date.now(), leaseMs(sink));
      } catch (err) {
        logger.error({ sink: sink.index, type: sink.type, err: err instanceof Error ? err.message : String(err) }, 'reading the notification queue failed');
        await pause(IDLE_POLL_MS);
        continue;
      }
      if (d === undefined) {
        await pause(IDLE_POLL_MS, sink.index);
        continue;
      }
      let attempts = d.attempts;
      for (;;) {
        const out: SendOutcome = await send({ url: sink.url, body: d.body, headers: headers(sink, d.deliveryId, d.body), timeoutMs: sink.timeoutMs, signal: stopping.signal });
        if (stopping.signal.aborted && !out.ok) return;
        attempts++;
        const at = new Date().toISOString();
        try {
          if (out.ok) {
            await queue.finish(d.seq, 'delivered', Date.now(), attempts);
            st.delivered++;
            st.lastDelivery = { at, outcome: 'delivered', ...(out.status !== undefined ? { status: out.status } : {}), attempts };
            break;
          }
          st.failedAttempts++;
          if (attempts > sink.retries) {
            await queue.finish(d.seq, 'failed', Date.now(), attempts);
            st.failed++;
            st.lastDelivery = { at, outcome: 'failed', ...(out.status !== undefined ? { status: out.status } : {}), attempts, error: out.error ?? 'failed' };
            logger.warn({ sink: sink.index, type: sink.type, eventId: d.eventId, attempts, error: out.error }, 'notification not delivered: retries exhausted');
            break;
          }
          st.lastDelivery = { at, outcome: 'retrying', ...(out.status !== undefined ? { status: out.status } : {}), attempts, error: out.error ?? 'failed' };
          await queue.attempted(d.seq, attempts);
        } catch (err) {
          logger.error({ sink: sink.index, type: sink.type, err: err instanceof Error ? err.message : String(err) }, 'updating the notification queue failed');
          await pause(IDLE_POLL_MS);
          break;
        }
        await pause(backoff(attempts - 1));
        if (stopping.signal.aborted) return;
      }
    }
  }

  const workers = sinks.map((s) =>
    work(s).catch((err: unknown) => logger.error({ sink: s.index, err: err instanceof Error ? err.message : String(err) }, 'notification worker stopped')),
  );

  return {
    revision: (e) => serialized(() => queueRevision(e)),
    audit: (e) => serialized(() => queueAudit(e)),
    async status() {
      const out: SinkStatus[] = [];
      for (const sink of sinks) {
        const st = state[sink.index]!;
        st.queued = await queue.pending(sink.key);
        out.push({ sink, queued: st.queued, dropped: st.dropped, delivered: st.delivered, failed: st.failed, failedAttempts: st.failedAttempts, ...(st.lastDelivery !== undefined ? { lastDelivery: st.lastDelivery } : {}) });
      }
      return out;
    },
    counters() {
      return sinks.map((sink) => {
        const st = state[sink.index]!;
        return { sink, queued: st.queued, dropped: st.dropped, delivered: st.delivered, failed: st.failed, failedAttempts: st.failedAttempts, ...(st.lastDelivery !== undefined ? { lastDelivery: st.lastDelivery } : {}) };
      });
    },
    async stop() {
      stopping.abort();
      await Promise.all(workers);
      await chain;
      await queue.release(owner).catch(() => undefined);
    },
  };
}
