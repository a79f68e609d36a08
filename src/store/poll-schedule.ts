/**
 * When the next poll of a source runs. A healthy poll waits the interval, give or take 10% (so
 * replicas started together do not all hit the Git server in the same second). After failures
 * the wait doubles per failure up to a cap, with "equal jitter" (half fixed, half random): a
 * server that is down or refusing credentials is not hammered, and the replicas spread out.
 */
export interface PollScheduleOptions {
  readonly intervalMs: number;
  /** Longest wait after failures (never below the interval). */
  readonly maxBackoffMs: number;
  /** [0, 1); Math.random by default. */
  readonly random?: () => number;
}

export function nextPollDelay(consecutiveFailures: number, opts: PollScheduleOptions): number {
  const random = opts.random ?? Math.random;
  const interval = opts.intervalMs;
  if (consecutiveFailures <= 0) return Math.round(interval * (0.9 + 0.2 * random()));
  const cap = Math.max(opts.maxBackoffMs, interval);
  const base = Math.min(interval * 2 ** Math.min(consecutiveFailures, 30), cap);
  return Math.round(base / 2 + (base / 2) * random());
}

/** Default cap: 5 minutes, or half the staleness limit when that is shorter (recover before /ready flips). */
export function defaultMaxBackoffMs(intervalMs: number, maxStalenessMs?: number): number {
  const cap = maxStalenessMs !== undefined ? Math.min(300_000, maxStalenessMs / 2) : 300_000;
  return Math.max(cap, intervalMs);
}
