/**
 * The one hub behind every live-update protocol (NDJSON for Flipt's client engines, Server-Sent
 * Events for browsers and the rest, OFREP's change events for OpenFeature providers;
 * streams/routes.ts adapts each to it).
 *
 * A topic is one (reference, namespace) that has subscribers. The hub listens to the store: on a
 * swap of a reference it computes each of that reference's topics' ETag once (the client
 * snapshot's, client-snapshot/served.ts: a digest cached per namespace object, so an untouched
 * namespace costs a lookup) and, only where it changed, tells the topic's subscribers. A frame is
 * encoded once per topic state and protocol and the same Buffer is written to every subscriber.
 * A namespace whose ETag did not change (another namespace was edited) sends nothing.
 *
 * Clients are told only what this process serves: on a swap the hub reads the reference's
 * snapshot from the store (`store.get`, which the store has already switched when it emits the
 * swap: store/types.ts), never a state the store has not put in place, so a client that refetches
 * on an event gets the state the event announced, or a newer one.
 *
 * A subscriber is brought up to date rather than replayed: it remembers the ETag it last sent
 * and, when told, writes the topic's current state if that differs. Rapid changes thus coalesce
 * for a client that is behind, and one whose credential must be checked first (stream-auth.ts)
 * gets the latest state once the check passes, in order by construction.
 *
 * Writes never wait for a client: frames go straight to the response (no stream in between,
 * which would cost memory per connection and time per write), and what a client has not taken
 * is the response's `writableLength`. A client that still has more than
 * `server.stream_buffer_limit` bytes unread when the next frame or heartbeat is due is
 * disconnected: it reconnects and gets the current state, instead of holding memory for a
 * backlog of states nobody needs.
 *
 * Also here: the bound on open streams (`server.max_streams`, 503 with Retry-After beyond it),
 * heartbeats (`server.stream_heartbeat_interval`), keeping each streamed reference in use so the
 * store does not drop it as idle, and ending every stream on shutdown; the stream metrics are
 * stream-metrics.ts.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { Code, VexilError, shuttingDown, streamLimit } from '../../errors.js';
import { monotonicMs } from '../../http/clock.js';
import type { Namespace, Snapshot } from '../../model/snapshot.js';
import type { SnapshotStore } from '../../store/types.js';
import { servedSnapshot, snapshotEtag } from '../client-snapshot/served.js';
import {
  NDJSON_HEARTBEAT,
  SSE_CONNECTED,
  SSE_HEARTBEAT,
  ndjsonLine,
  ofrepRefetchEvent,
  sseGoneEvent,
  sseStateEvent,
} from './frames.js';
import { acceptedUntil } from '../../auth/types.js';
import { EXPIRY_RECHECK_FLOOR_MS, MAX_TIMER_MS, type StreamAuthentication } from './stream-auth.js';
import { streamMetrics } from './stream-metrics.js';
import type { StreamProtocol } from './frames.js';

export type { StreamProtocol } from './frames.js';

/** Why a stream ended (the `reason` label of vexil_streams_closed_total). */
export type CloseReason =
  /** The client went away. */
  | 'client'
  /** It fell more than stream_buffer_limit bytes behind. */
  | 'slow'
  /** Its credential was deleted, expired, or is refused now. */
  | 'unauthenticated'
  /** Its namespace, or its whole reference, is no longer served. */
  | 'gone'
  /** The server is shutting down. */
  | 'shutdown';

export interface StreamLimits {
  /** Streams open at once (0: streaming off). */
  readonly max_streams: number;
  /** ms between heartbeats (0: none). */
  readonly stream_heartbeat_interval: number;
  /** Unread bytes beyond which a client is dropped. */
  readonly stream_buffer_limit: number;
}

export interface StreamHubOptions {
  readonly store: SnapshotStore;
  readonly logger: Logger;
  /** The server's metrics registry (the stream gauge and counters go there). */
  readonly registry?: Registry;
  readonly limits: StreamLimits;
}

export interface StreamRequest {
  readonly protocol: StreamProtocol;
  /** The snapshot the request resolved: its reference (and the namespace) name the topic. */
  readonly snapshot: Snapshot;
  readonly namespace: string;
  /** SSE: carry the snapshot document in each state event. */
  readonly withSnapshot: boolean;
  /** SSE and OFREP: `Last-Event-ID` (or the state the client has); when it is the current ETag no state event is sent at connect. */
  readonly lastEventId?: string;
  readonly res: ServerResponse;
  /** Present when the request's credential must be checked again (stream-auth.ts). */
  readonly auth?: StreamAuthentication;
  readonly log: Logger;
}

export interface StreamHub {
  /** Throws 503 (with Retry-After) when no stream may open now: at the limit, or shutting down. */
  admit(): void;
  /**
   * Subscribes the request. The route answers with the response itself (Koa's `ctx.respond =
   * false`) after setting its status and headers; the first frame is written once the request's
   * middleware has finished (the request log adds headers on its way out), which sends the head.
   * Throws 503 as admit() does, 404 when the namespace is no longer in the reference's snapshot.
   */
  open(request: StreamRequest): void;
  /** Streams open now. */
  readonly size: number;
  /** Graceful shutdown: ends every stream (clients reconnect elsewhere) and refuses new ones. */
  endAll(): void;
  /** endAll(), then stops listening to the store and stops the timers (the metrics stay readable). */
  close(): void;
}

/**
 * How often, at most, each streamed reference is marked as used (a resolve, as a request does),
 * so that a reference built on request stays kept while only streams read it: the store drops
 * references not requested for storage.*.idle_ttl (minutes). At heartbeat pace when that is
 * faster: the connection's pulse is the reference's too.
 */
const MAX_TOUCH_INTERVAL_MS = 15_000;
/** Retry-After (seconds) of a 503 at the stream limit: long enough for others to have left. */
const FULL_RETRY_AFTER_SECONDS = 5;
/** The limit being reached is logged at most this often (a full server refuses many). */
const FULL_WARNING_INTERVAL_MS = 60_000;

export function createStreamHub(opts: StreamHubOptions): StreamHub {
  const { store, logger, limits } = opts;
  const bufferLimit = limits.stream_buffer_limit;
  const metrics = streamMetrics(opts.registry);

  /** reference → namespace key → topic. */
  const topics = new Map<string, Map<string, Topic>>();
  const subscribers = new Set<Subscriber>();
  let closing = false;
  let fullWarnedAt = -Infinity;

  class Topic {
    readonly subscribers = new Set<Subscriber>();
    /** Frames of the current state, made on first use (see frame()). */
    private ndjson: Buffer | undefined;
    private sse: Buffer | undefined;
    private sseWithSnapshot: Buffer | undefined;
    private ofrep: Buffer | undefined;

    constructor(
      readonly reference: string,
      readonly namespace: string,
      private snapshot: Snapshot,
      private ns: Namespace,
      public etag: string,
    ) {}

    /** A new state (the ETag differs): drop the old frames and bring every subscriber up to date. */
    update(snapshot: Snapshot, ns: Namespace, etag: string): void {
      this.snapshot = snapshot;
      this.ns = ns;
      this.etag = etag;
      this.ndjson = this.sse = this.sseWithSnapshot = this.ofrep = undefined;
      for (const s of this.subscribers) s.request(false);
    }

    frame(protocol: StreamProtocol, withSnapshot: boolean): Buffer {
      if (protocol === 'ndjson') return (this.ndjson ??= ndjsonLine(this.document()));
      if (protocol === 'ofrep') return (this.ofrep ??= ofrepRefetchEvent(this.etag));
      const state = { reference: this.reference, namespace: this.namespace, etag: this.etag, revision: this.snapshot.revision };
      return withSnapshot ? (this.sseWithSnapshot ??= sseStateEvent(state, this.document())) : (this.sse ??= sseStateEvent(state));
    }

    /**
     * The namespace (or the reference) is no longer served: say so on SSE; on OFREP a last
     * refetchEvaluation, so the provider's refetch meets the failure now; then end every stream.
     */
    gone(message: string): void {
      forget(this);
      const last: Record<StreamProtocol, Buffer | undefined> = {
        sse: sseGoneEvent(this.reference, this.namespace, message),
        ofrep: ofrepRefetchEvent(),
        ndjson: undefined,
      };
      for (const s of this.subscribers) s.end('gone', last[s.protocol]);
    }

    /** The same bytes the snapshot endpoint serves (cached with the snapshot). */
    private document(): Buffer {
      return servedSnapshot(this.snapshot, this.ns).body;
    }
  }

  class Subscriber {
    /** The ETag of the last state written; undefined until the first. */
    sentEtag: string | undefined;
    /** Set once the first bytes may go (see open()). */
    private started = false;
    private checking = false;
    private wantHeartbeat = false;
    private closed = false;
    private reason: CloseReason = 'client';
    private expiryTimer: NodeJS.Timeout | undefined;
    /** The check under way was asked by the expiry timer (see scheduleExpiry). */
    private expiryCheck = false;
    private events = 0;
    private readonly openedAt = monotonicMs();

    constructor(
      readonly topic: Topic,
      readonly protocol: StreamProtocol,
      private readonly withSnapshot: boolean,
      private readonly res: ServerResponse,
      private readonly auth: StreamAuthentication | undefined,
      private readonly log: Logger,
    ) {
      if (auth !== undefined) this.scheduleExpiry(auth.expiresAt, false);
    }

    /**
     * Bring the client up to date (and write a heartbeat if `heartbeat` and nothing else is
     * due), after checking its credential again when it has one. A request made while a check
     * is under way is served by that check's outcome, which reads the state then.
     */
    request(heartbeat: boolean): void {
      if (this.closed) return;
      if (heartbeat) this.wantHeartbeat = true;
      const auth = this.auth;
      if (auth === undefined) {
        this.flush();
        return;
      }
      if (this.checking) return;
      this.checking = true;
      auth.check().then(
        (authentication) => {
          this.checking = false;
          const afterExpiryCheck = this.expiryCheck;
          this.expiryCheck = false;
          if (this.closed) return;
          this.scheduleExpiry(authentication === undefined ? undefined : acceptedUntil(authentication), afterExpiryCheck);
          this.flush();
        },
        (err: unknown) => {
          this.checking = false;
          this.expiryCheck = false;
          if (!(err instanceof VexilError)) this.log.warn({ err }, 'stream: checking the credential failed; ending the stream');
          this.end('unauthenticated');
        },
      );
    }

    /** The first bytes: SSE's connected comment, then the state unless `lastEventId` is it already. */
    start(lastEventId: string | undefined): void {
      if (this.closed) return;
      this.started = true;
      if (this.protocol !== 'ndjson') {
        this.res.write(SSE_CONNECTED);
        // Reconnected with the current state: nothing to resend.
        if (lastEventId === this.topic.etag) this.sentEtag = lastEventId;
      }
      this.flush();
    }

    /** Writes what is due: the current state when the client has not had it, else a pending heartbeat. */
    flush(): void {
      if (this.closed || !this.started) return;
      const stateDue = this.topic.etag !== this.sentEtag;
      if (!stateDue && !this.wantHeartbeat) return;
      // Measured before writing, so one frame larger than the bound still goes to a client that keeps up.
      if (this.res.writableLength > bufferLimit) {
        this.drop();
        return;
      }
      this.wantHeartbeat = false;
      if (stateDue) {
        this.res.write(this.topic.frame(this.protocol, this.withSnapshot));
        this.sentEtag = this.topic.etag;
        this.events++;
        metrics.events[this.protocol].inc();
      } else {
        this.res.write(this.protocol === 'ndjson' ? NDJSON_HEARTBEAT : SSE_HEARTBEAT);
      }
    }

    /** Ends the response after `last` (and what is queued); the client sees a clean end. */
    end(reason: CloseReason, last?: Buffer): void {
      if (this.closed) return;
      this.closed = true;
      this.reason = reason;
      if (last !== undefined) this.res.end(last);
      else this.res.end();
    }

    /** Too far behind: cut the connection (nothing queued for it is worth sending any more). */
    private drop(): void {
      this.closed = true;
      this.reason = 'slow';
      this.res.destroy();
    }

    /**
     * Re-checks the credential just after `stopsAt` (when it stops being accepted: the auth
     * service refuses a token once the clock is beyond its expiry, the JWT method once it is past
     * expiry plus leeway). A moment already past, or a re-check right after one the expiry timer
     * asked for (`afterExpiryCheck`), waits EXPIRY_RECHECK_FLOOR_MS: a credential that passes
     * at or after that moment is not asked again in a loop.
     */
    private scheduleExpiry(stopsAt: number | undefined, afterExpiryCheck: boolean): void {
      if (this.expiryTimer !== undefined) clearTimeout(this.expiryTimer);
      this.expiryTimer = undefined;
      if (stopsAt === undefined || this.auth === undefined) return;
      const left = stopsAt - this.auth.clock();
      let ms = left >= 0 ? left + 1 : EXPIRY_RECHECK_FLOOR_MS;
      if (afterExpiryCheck) ms = Math.max(ms, EXPIRY_RECHECK_FLOOR_MS);
      this.expiryTimer = setTimeout(() => {
        this.expiryCheck = true;
        this.request(false);
      }, Math.min(ms, MAX_TIMER_MS));
      this.expiryTimer.unref();
    }

    /** The response closed (ended, dropped, or the client left): forget the stream. */
    onClosed(): void {
      this.closed = true;
      if (this.expiryTimer !== undefined) clearTimeout(this.expiryTimer);
      if (!subscribers.delete(this)) return;
      const topic = this.topic;
      topic.subscribers.delete(this);
      if (topic.subscribers.size === 0) forget(topic);
      metrics.open[this.protocol].dec();
      metrics.closed.inc({ protocol: this.protocol, reason: this.reason });
      const fields = {
        protocol: this.protocol,
        reference: topic.reference,
        namespace: topic.namespace,
        reason: this.reason,
        durationMs: Math.round(monotonicMs() - this.openedAt),
        events: this.events,
      };
      // Dropped and revoked streams are worth an operator's attention; the others are routine.
      if (this.reason === 'slow' || this.reason === 'unauthenticated') this.log.info(fields, 'stream closed');
      else this.log.debug(fields, 'stream closed');
    }
  }

  function forget(topic: Topic): void {
    const byNamespace = topics.get(topic.reference);
    if (byNamespace?.get(topic.namespace) !== topic) return;
    byNamespace.delete(topic.namespace);
    if (byNamespace.size === 0) topics.delete(topic.reference);
  }

  function admit(): void {
    if (closing) throw shuttingDown();
    if (subscribers.size >= limits.max_streams) {
      const now = monotonicMs();
      if (limits.max_streams > 0 && now - fullWarnedAt >= FULL_WARNING_INTERVAL_MS) {
        fullWarnedAt = now;
        logger.warn({ maxStreams: limits.max_streams }, 'stream limit reached: new streams are answered 503 (server.max_streams)');
      }
      throw streamLimit(limits.max_streams, FULL_RETRY_AFTER_SECONDS);
    }
  }

  /** The topic of (reference, namespace), made from the reference's current snapshot if new. */
  function topicFor(requested: Snapshot, namespace: string): Topic {
    const reference = requested.reference;
    let byNamespace = topics.get(reference);
    const existing = byNamespace?.get(namespace);
    if (existing !== undefined) return existing;
    // A swap may have come between the request's resolve and now: start from what is served now,
    // so the next swap is compared with the state this subscriber gets.
    const snapshot = store.get(reference) ?? requested;
    const ns = snapshot.namespaces.get(namespace);
    if (ns === undefined) throw new VexilError(Code.NotFound, `namespace "${namespace}" not found`);
    const topic = new Topic(reference, namespace, snapshot, ns, snapshotEtag(reference, ns));
    if (byNamespace === undefined) topics.set(reference, (byNamespace = new Map()));
    byNamespace.set(namespace, topic);
    return topic;
  }

  /** A swap of `reference`: each topic is compared with the snapshot the store serves now. */
  function onSwap(reference: string): void {
    const byNamespace = topics.get(reference);
    if (byNamespace === undefined) return;
    const snapshot = store.get(reference);
    if (snapshot === undefined) return;
    for (const topic of [...byNamespace.values()]) {
      const ns = snapshot.namespaces.get(topic.namespace);
      if (ns === undefined) {
        topic.gone(`namespace "${topic.namespace}" is no longer in reference "${reference}"`);
        continue;
      }
      const etag = snapshotEtag(reference, ns);
      if (etag !== topic.etag) topic.update(snapshot, ns, etag);
    }
  }

  const unsubscribe = store.subscribe((event) => {
    if (event.type === 'swap') onSwap(event.reference);
    else if (event.type === 'dropped') {
      for (const topic of [...(topics.get(event.reference)?.values() ?? [])]) {
        topic.gone(`reference "${event.reference}" is no longer served`);
      }
    }
  });

  const heartbeat =
    limits.stream_heartbeat_interval > 0
      ? setInterval(() => {
          for (const s of subscribers) s.request(true);
        }, Math.min(limits.stream_heartbeat_interval, MAX_TIMER_MS))
      : undefined;
  heartbeat?.unref();

  const touch = setInterval(() => {
    for (const reference of topics.keys()) store.resolve(reference).catch(() => undefined);
  }, touchIntervalMs(limits.stream_heartbeat_interval));
  touch.unref();

  return {
    admit,

    open(request) {
      admit();
      const topic = topicFor(request.snapshot, request.namespace);
      const { res } = request;
      const subscriber = new Subscriber(topic, request.protocol, request.withSnapshot, res, request.auth, request.log);
      subscribers.add(subscriber);
      topic.subscribers.add(subscriber);
      metrics.open[request.protocol].inc();
      res.once('close', () => subscriber.onClosed());
      // The client may have gone while the snapshot was resolved: 'close' will not come again.
      if (res.socket === null || res.socket.destroyed) {
        subscriber.onClosed();
        return;
      }
      // The first write sends the response head: not before the middleware around the route has
      // set its headers on the way out (X-Request-Id, X-Vexil-Revision), which it does in the
      // microtasks after the handler returns, all of which run before this.
      const lastEventId = request.lastEventId;
      setImmediate(() => subscriber.start(lastEventId));
    },

    get size() {
      return subscribers.size;
    },

    endAll() {
      closing = true;
      for (const s of subscribers) s.end('shutdown');
    },

    close() {
      this.endAll();
      unsubscribe();
      if (heartbeat !== undefined) clearInterval(heartbeat);
      clearInterval(touch);
    },
  };
}

function touchIntervalMs(heartbeatMs: number): number {
  return heartbeatMs > 0 ? Math.min(heartbeatMs, MAX_TOUCH_INTERVAL_MS) : MAX_TOUCH_INTERVAL_MS;
}
