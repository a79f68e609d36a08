/**
 * The snapshot store's one-at-a-time runner: no two builds ever overlap (they share the parse
 * cache and, for Git, one mirror on disk). Two lanes: a job of the `poll` lane (a refresh, the
 * first build) runs before every job waiting in the `demand` lane (references built or looked up
 * because a request named them), so however many requests wait for on-demand work, a poll waits
 * for at most the one job already running.
 */
export type Lane = 'poll' | 'demand';

export interface BuildQueue {
  /** Runs `fn` once every job before it in its lane, and every waiting `poll` job, has run. */
  run<T>(lane: Lane, fn: () => Promise<T>): Promise<T>;
  /** True when nothing runs and nothing waits. */
  isIdle(): boolean;
  /** Resolves the next time nothing runs and nothing waits. */
  idle(): Promise<void>;
}

interface Job {
  readonly fn: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

export function createBuildQueue(): BuildQueue {
  const lanes: Record<Lane, Job[]> = { poll: [], demand: [] };
  let running = false;
  let idleWaiters: Array<() => void> = [];

  function next(): void {
    if (running) return;
    const job = lanes.poll.shift() ?? lanes.demand.shift();
    if (job === undefined) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const wake of waiters) wake();
      return;
    }
    running = true;
    // Always started from a microtask: a caller's own bookkeeping after run() returns (e.g.
    // remembering the promise) happens before the job's first line, as with a promise chain.
    Promise.resolve()
      .then(job.fn)
      .then(job.resolve, job.reject)
      .finally(() => {
        running = false;
        next();
      });
  }

  return {
    run<T>(lane: Lane, fn: () => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        lanes[lane].push({ fn, resolve: resolve as (value: unknown) => void, reject });
        next();
      });
    },
    isIdle: () => !running && lanes.poll.length === 0 && lanes.demand.length === 0,
    idle() {
      if (!running && lanes.poll.length === 0 && lanes.demand.length === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
  };
}
