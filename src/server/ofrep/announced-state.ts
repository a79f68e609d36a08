/**
 * A bulk refetch that a change event triggered names the state the event announced
 * (`?flagConfigEtag=`, OFREP ADR-0008). Events are sent only for states their process serves
 * (streams/hub.ts), but behind a load balancer the refetch may reach another replica, or another
 * worker of `server.workers`, that has not loaded that state yet. Answering at once from the older
 * state would leave the client with it until the next change. So such a refetch waits for this
 * process's own swap to the announced state, as the ADR lets a server do ("retry until the
 * updated value is available"), and is answered from it.
 *
 * Bounds: at most ANNOUNCED_WAIT_MS per request (a state that never comes here, e.g. an older one
 * announced by a lagging replica, or a made-up ETag, costs that and no more: the request is then
 * answered from what is served); at most `maxWaiting` requests wait at once (the others are
 * answered at once). Waiting holds a timer and an entry in a map, nothing else; the store is
 * listened to only while some request waits.
 *
 * Metrics: `vexil_ofrep_refetches_waiting` (gauge) and `vexil_ofrep_refetch_waits_total` by
 * `outcome` (`served`: the announced state came; `gone`: the namespace or reference did; `timeout`;
 * `refused`: too many waiting), which
 * show how far this process lags the replicas that tell clients first.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Snapshot } from '../../model/snapshot.js';
import type { SnapshotStore } from '../../store/types.js';
import { snapshotEtag } from '../client-snapshot/served.js';

/** How long a refetch waits for the state its event announced. */
export const ANNOUNCED_WAIT_MS = 2000;

export type WaitOutcome = 'served' | 'gone' | 'timeout' | 'refused';

export interface AnnouncedStateWaiter {
  /**
   * Resolves with the reference's snapshot once its `namespace` has the ETag `etag` here, or with
   * undefined after ANNOUNCED_WAIT_MS, when too many wait, or when the namespace goes away.
   */
  wait(reference: string, namespace: string, etag: string): Promise<Snapshot | undefined>;
  /** Requests waiting now. */
  readonly waiting: number;
}

export interface AnnouncedStateOptions {
  readonly store: SnapshotStore;
  /** At most this many requests wait at once. */
  readonly maxWaiting: number;
  readonly registry?: Registry;
  /** Default ANNOUNCED_WAIT_MS. */
  readonly maxWaitMs?: number;
}

interface Waiter {
  readonly namespace: string;
  readonly etag: string;
  readonly done: (snapshot: Snapshot | undefined, outcome: WaitOutcome) => void;
}

const METRIC_NAMES = ['vexil_ofrep_refetches_waiting', 'vexil_ofrep_refetch_waits_total'] as const;

export function createAnnouncedStateWaiter(opts: AnnouncedStateOptions): AnnouncedStateWaiter {
  const { store, maxWaiting } = opts;
  const maxWaitMs = opts.maxWaitMs ?? ANNOUNCED_WAIT_MS;
  const registers = opts.registry === undefined ? [] : [opts.registry];
  // One per app and registry; a second app on a shared registry takes the names over (as the stream hub does).
  for (const name of METRIC_NAMES) if (opts.registry?.getSingleMetric(name) !== undefined) opts.registry.removeSingleMetric(name);
  const gauge = new Gauge({
    name: 'vexil_ofrep_refetches_waiting',
    help: 'OFREP refetches waiting for this process to serve the state their change event announced.',
    registers,
  });
  const outcomes = new Counter({
    name: 'vexil_ofrep_refetch_waits_total',
    help: 'OFREP refetches that named a state not served here yet, by outcome (served: it came; gone: the namespace went; timeout; refused: too many waiting).',
    labelNames: ['outcome'] as const,
    registers,
  });

  /** reference → the requests waiting on it. */
  const byReference = new Map<string, Set<Waiter>>();
  let count = 0;
  let unsubscribe: (() => void) | undefined;

  function onSwap(reference: string): void {
    const waiters = byReference.get(reference);
    const snapshot = store.get(reference);
    if (waiters === undefined || snapshot === undefined) return;
    for (const w of [...waiters]) {
      const ns = snapshot.namespaces.get(w.namespace);
      if (ns === undefined) w.done(undefined, 'gone');
      else if (snapshotEtag(reference, ns) === w.etag) w.done(snapshot, 'served');
    }
  }

  return {
    wait(reference, namespace, etag) {
      if (count >= maxWaiting) {
        outcomes.inc({ outcome: 'refused' });
        return Promise.resolve(undefined);
      }
      return new Promise((resolve) => {
        const waiters = byReference.get(reference) ?? new Set<Waiter>();
        byReference.set(reference, waiters);
        const timer = setTimeout(() => waiter.done(undefined, 'timeout'), maxWaitMs);
        timer.unref();
        const waiter: Waiter = {
          namespace,
          etag,
          done: (snapshot, outcome) => {
            if (!waiters.delete(waiter)) return;
            clearTimeout(timer);
            if (waiters.size === 0) byReference.delete(reference);
            count--;
            gauge.dec();
            outcomes.inc({ outcome });
            if (count === 0) {
              unsubscribe?.();
              unsubscribe = undefined;
            }
            resolve(snapshot);
          },
        };
        waiters.add(waiter);
        count++;
        gauge.inc();
        unsubscribe ??= store.subscribe((event) => {
          if (event.type === 'swap') onSwap(event.reference);
          else if (event.type === 'dropped') for (const w of [...(byReference.get(event.reference) ?? [])]) w.done(undefined, 'gone');
        });
        // The swap may have come between the request's read and now.
        onSwap(reference);
      });
    },
    get waiting() {
      return count;
    },
  };
}
