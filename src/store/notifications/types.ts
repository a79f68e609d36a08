/**
 * The change notifications' shapes: a configured sink as the notifier uses it, a queued delivery
 * (one event for one sink, its body already written), and the queue store both backends
 * (sqlite.ts, postgres.ts) implement. Types only.
 */

export type NotificationEventKind = 'served' | 'rejected' | 'audit';

/** One of `notifications.sinks`, resolved. */
export interface Sink {
  /** Position in `notifications.sinks` (metrics label, /meta/notifications). */
  readonly index: number;
  readonly type: 'webhook' | 'slack';
  readonly url: string;
  /** Scheme and host of `url`: the only part shown anywhere. */
  readonly shownUrl: string;
  /** The queue's name for this sink in the store: a hash of type and URL (the URL itself is never stored). */
  readonly key: string;
  readonly secret?: string;
  readonly references: readonly string[];
  readonly namespaces: readonly string[];
  readonly events: readonly NotificationEventKind[];
  readonly timeoutMs: number;
  readonly retries: number;
  readonly queueSize: number;
}

/** A delivery waiting in (or taken from) the queue. */
export interface QueuedDelivery {
  readonly seq: number;
  readonly sink: string;
  /** The CloudEvents id: the same on every attempt. */
  readonly eventId: string;
  /** The delivery id (X-Vexil-Delivery): one per event and sink, the same on every attempt. */
  readonly deliveryId: string;
  /** The request body, exactly as sent (and signed). */
  readonly body: string;
  /** Attempts made so far (kept across restarts). */
  readonly attempts: number;
}

export type DeliveryState = 'delivered' | 'failed';

export interface EnqueueResult {
  /** False when the event was already queued for this sink (a second replica, a repeat). */
  readonly queued: boolean;
  /** Undelivered deliveries dropped to keep the queue within its size. */
  readonly dropped: number;
}

export interface NotificationQueueStore {
  readonly kind: string;
  /** Queues `d` unless (sink, eventId) is already there; then drops the oldest unclaimed beyond `maxQueued`. */
  enqueue(d: Omit<QueuedDelivery, 'seq' | 'attempts'>, atMs: number, maxQueued: number): Promise<EnqueueResult>;
  /**
   * Takes the oldest queued delivery of `sink` that no live claim holds, for `owner` until
   * `nowMs + leaseMs` (a row lock makes two replicas take different ones, or none).
   */
  claim(sink: string, owner: string, nowMs: number, leaseMs: number): Promise<QueuedDelivery | undefined>;
  /** Records an attempt made (the count survives a restart). */
  attempted(seq: number, attempts: number): Promise<void>;
  /** Ends a delivery (delivered, or failed after its retries); finished rows beyond a bound are pruned. */
  finish(seq: number, state: DeliveryState, atMs: number, attempts: number): Promise<void>;
  /** Gives back what `owner` claimed and did not finish (a shutdown): queued again at once. */
  release(owner: string): Promise<void>;
  /** Deliveries of `sink` still queued. */
  pending(sink: string): Promise<number>;
  close(): Promise<void>;
}

/** Finished deliveries kept per sink (their ids stop a repeat from being queued again). */
export const KEEP_FINISHED = 1000;
