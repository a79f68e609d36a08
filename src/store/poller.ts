/**
 * The poller: when the store looks at the source. A source that can watch (local) reports changes,
 * and a burst of them is coalesced over `debounceMs` into one refresh at the window's end. Any
 * other source is polled on a timer: the interval while refreshes succeed, a growing jittered wait
 * while they fail (poll-schedule.ts; the failures in a row are counted by refresh.ts). The timer
 * does not keep the process alive.
 *
 * Bounds: at most one debounce timer and one poll timer; a poll's next timer is set only after its
 * refresh has run, so polls never overlap. Nothing is scheduled once stopped. What a refresh does
 * is refresh.ts's business.
 */
import type { Source } from '../sources/types.js';
import { nextPollDelay } from './poll-schedule.js';
import type { StoreLogger } from './types.js';

export interface Poller {
  /** Subscribes to the source's changes when it can watch. */
  watch(): void;
  /** Starts the poll timer (polled sources). */
  start(): void;
  /** Stops the timers and the watch. */
  stop(): Promise<void>;
  /** The wait chosen for the next poll (undefined before the first). */
  readonly nextDelayMs: number | undefined;
}

export interface PollerOptions {
  readonly source: Source;
  /** Runs one refresh (queued and coalesced by refresh.ts). */
  readonly refresh: () => Promise<void>;
  /** Refreshes failed in a row, read after each poll. */
  readonly consecutiveFailures: () => number;
  readonly logger: StoreLogger;
  /** Changes are coalesced over this window before a refresh starts. */
  readonly debounceMs: number;
  /** Poll interval (ms); only read when polling. */
  readonly intervalMs: number;
  /** Longest wait between failing polls. */
  readonly maxBackoffMs: number;
  /** Jitter source, [0, 1) (tests). */
  readonly random?: () => number;
  readonly isClosed: () => boolean;
  /** True while the timer's polls are skipped (a cluster follower: another replica polls); the timer keeps its interval. */
  readonly paused?: () => boolean;
}

export function createPoller(opts: PollerOptions): Poller {
  const { source, refresh, logger, debounceMs, isClosed } = opts;
  const schedule = { intervalMs: opts.intervalMs, maxBackoffMs: opts.maxBackoffMs, ...(opts.random !== undefined ? { random: opts.random } : {}) };
  let debounceTimer: NodeJS.Timeout | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let nextDelayMs: number | undefined;
  let unwatch: (() => Promise<void>) | undefined;

  /** Polls on a timer: the interval while polls succeed, a growing jittered wait while they fail. */
  function schedulePoll(delay: number): void {
    if (isClosed()) return;
    nextDelayMs = delay;
    pollTimer = setTimeout(() => {
      pollTimer = undefined;
      if (opts.paused?.() === true) {
        schedulePoll(nextPollDelay(0, schedule));
        return;
      }
      refresh()
        .catch((err: unknown) => logger.error({ err }, 'poll failed'))
        .finally(() => {
          const consecutiveFailures = opts.consecutiveFailures();
          const wait = nextPollDelay(consecutiveFailures, schedule);
          if (consecutiveFailures > 0) logger.warn({ consecutiveFailures, nextPollMs: wait }, 'polling backs off');
          schedulePoll(wait);
        });
    }, delay);
    pollTimer.unref();
  }

  /** Coalesces a burst of change events: the first one opens a window, the rebuild runs at its end. */
  function onChange(): void {
    if (isClosed() || debounceTimer !== undefined) return;
    debounceTimer = setTimeout(() => {
      debounceTimer = undefined;
      refresh().catch((err: unknown) => logger.error({ err }, 'refresh failed'));
    }, debounceMs);
  }

  return {
    watch() {
      if (source.watch !== undefined) unwatch = source.watch(onChange);
    },
    start() {
      schedulePoll(nextPollDelay(0, schedule));
    },
    async stop() {
      if (debounceTimer !== undefined) clearTimeout(debounceTimer);
      debounceTimer = undefined;
      if (pollTimer !== undefined) clearTimeout(pollTimer);
      pollTimer = undefined;
      const stop = unwatch;
      unwatch = undefined;
      if (stop !== undefined) await stop();
    },
    get nextDelayMs() {
      return nextDelayMs;
    },
  };
}
