/**
 * The refresh gate: how looks at the source asked for by requests (push webhooks, `POST
 * /meta/refresh`) reach it. Asks are coalesced per reference, and the source is looked at for a
 * reference at most once per `minIntervalMs` (one second) whatever the rate of asks: an ask
 * arriving within the second after a look at that reference waits for the second to end, and
 * every ask for it made meanwhile joins that one next look. An ask for every reference waits
 * until the last look at any of them is a second old, and covers them all (asks for single
 * references made meanwhile join it, so a steady stream of them cannot hold it back).
 *
 * A look that covers an ask started after the ask was made: what was pushed before the ask is
 * seen. One look runs at a time (the build queue serializes them with polls anyway).
 *
 * Bounds: one timer; the waiting asks are at most `maxPending` references (beyond it they are
 * folded into one ask for every reference); the last look times kept are those younger than the
 * interval. The poller's own timer does not go through the gate (poller.ts): its interval is its
 * bound.
 */

/** A reference is looked at on request at most this often. */
export const MIN_LOOK_INTERVAL_MS = 1000;

/** Asks for more distinct references than this at once become one ask for every reference. */
export const MAX_PENDING_REFERENCES = 1024;

export interface RefreshGate {
  /**
   * Asks for a look at `references` (undefined: every tracked reference); resolves once a look
   * that started after this call has covered them, rejects when that look failed.
   */
  request(references?: readonly string[]): Promise<void>;
  /** Looks started so far (tests, metrics). */
  readonly looks: number;
  /** Stops the timer; asks still waiting resolve without a look. */
  close(): void;
}

export interface RefreshGateOptions {
  /** One look at the source for these references (undefined: every tracked one). */
  readonly look: (references: ReadonlySet<string> | undefined) => Promise<void>;
  /** Default MIN_LOOK_INTERVAL_MS. */
  readonly minIntervalMs?: number;
  /** Default MAX_PENDING_REFERENCES. */
  readonly maxPending?: number;
  /** Epoch ms now. */
  readonly nowMs: () => number;
  /** Runs `fn` after `ms` (default: an unref'd setTimeout); returns a cancel function (tests inject a clock). */
  readonly setTimer?: (fn: () => void, ms: number) => () => void;
}

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function defaultTimer(fn: () => void, ms: number): () => void {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
}

export function createRefreshGate(opts: RefreshGateOptions): RefreshGate {
  const { look, nowMs } = opts;
  const interval = opts.minIntervalMs ?? MIN_LOOK_INTERVAL_MS;
  const maxPending = opts.maxPending ?? MAX_PENDING_REFERENCES;
  const setTimer = opts.setTimer ?? defaultTimer;
  /** Start time of the last look per reference (entries older than the interval are pruned). */
  const lastLook = new Map<string, number>();
  /** Start time of the last look at every reference. */
  let lastAllAt = Number.NEGATIVE_INFINITY;
  /** Asks waiting, by reference: everyone asking for one reference shares one deferred. */
  const pending = new Map<string, Deferred>();
  let pendingAll: Deferred | undefined;
  let running = false;
  let cancelTimer: (() => void) | undefined;
  let closed = false;
  let looks = 0;

  const allowedAt = (ref: string) => Math.max(lastLook.get(ref) ?? Number.NEGATIVE_INFINITY, lastAllAt) + interval;
  function allowedAtAll(): number {
    let last = lastAllAt;
    for (const at of lastLook.values()) if (at > last) last = at;
    return last + interval;
  }

  function prune(now: number): void {
    for (const [ref, at] of lastLook) if (now - at >= interval) lastLook.delete(ref);
  }

  function run(references: ReadonlySet<string> | undefined, waiting: readonly Deferred[]): void {
    running = true;
    looks++;
    let outcome: Promise<void>;
    try {
      outcome = look(references);
    } catch (err) {
      outcome = Promise.reject(err);
    }
    outcome.then(
      () => {
        for (const d of waiting) d.resolve();
      },
      (err: unknown) => {
        for (const d of waiting) d.reject(err);
      },
    ).finally(() => {
      running = false;
      pump();
    });
  }

  /** Starts the look that is due, or sets the timer for the next one. */
  function pump(): void {
    if (running || closed) return;
    cancelTimer?.();
    cancelTimer = undefined;
    const now = nowMs();
    prune(now);
    if (pendingAll !== undefined) {
      const at = allowedAtAll();
      if (at > now) return wakeAt(at - now);
      const waiting = [pendingAll, ...pending.values()];
      pendingAll = undefined;
      pending.clear();
      lastAllAt = now;
      lastLook.clear();
      return run(undefined, waiting);
    }
    const due = new Set<string>();
    const waiting: Deferred[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const [ref, d] of pending) {
      const at = allowedAt(ref);
      if (at <= now) {
        due.add(ref);
        waiting.push(d);
      } else if (at < next) {
        next = at;
      }
    }
    if (due.size > 0) {
      for (const ref of due) {
        pending.delete(ref);
        lastLook.set(ref, now);
      }
      return run(due, waiting);
    }
    if (next !== Number.POSITIVE_INFINITY) wakeAt(next - now);
  }

  function wakeAt(ms: number): void {
    cancelTimer = setTimer(() => {
      cancelTimer = undefined;
      pump();
    }, ms);
  }

  return {
    request(references) {
      if (closed) return Promise.resolve();
      let d: Deferred;
      if (references === undefined || pending.size + references.length > maxPending) {
        d = pendingAll ??= deferred();
      } else if (pendingAll !== undefined) {
        d = pendingAll; // the look at every reference covers these too
      } else {
        const asked = [...new Set(references)];
        if (asked.length === 0) return Promise.resolve();
        for (const ref of asked) if (!pending.has(ref)) pending.set(ref, deferred());
        const promises = asked.map((ref) => (pending.get(ref) as Deferred).promise);
        pump();
        return promises.length === 1 ? (promises[0] as Promise<void>) : Promise.all(promises).then(() => undefined);
      }
      pump();
      return d.promise;
    },
    get looks() {
      return looks;
    },
    close() {
      closed = true;
      cancelTimer?.();
      cancelTimer = undefined;
      for (const d of pending.values()) d.resolve();
      pending.clear();
      pendingAll?.resolve();
      pendingAll = undefined;
    },
  };
}
