/** When polls run: the interval with ±10% jitter while healthy, exponential equal-jitter backoff while failing. */
import t from 'tap';
import { defaultMaxBackoffMs, nextPollDelay } from '../../src/store/poll-schedule.js';

const opts = (random: number) => ({ intervalMs: 30_000, maxBackoffMs: 300_000, random: () => random });

t.test('healthy: the interval, give or take 10%', async (t) => {
  t.equal(nextPollDelay(0, opts(0)), 27_000);
  t.equal(nextPollDelay(0, opts(0.5)), 30_000);
  t.equal(nextPollDelay(0, opts(0.999999)), 33_000);
});

t.test('failing: doubles per failure up to the cap, never below half of it', async (t) => {
  const lows = [1, 2, 3, 4, 5, 6, 50].map((n) => nextPollDelay(n, opts(0)));
  const highs = [1, 2, 3, 4, 5, 6, 50].map((n) => nextPollDelay(n, opts(0.999999)));
  t.same(lows, [30_000, 60_000, 120_000, 150_000, 150_000, 150_000, 150_000]);
  t.same(highs, [60_000, 120_000, 240_000, 300_000, 300_000, 300_000, 300_000]);
  t.ok(nextPollDelay(50, { intervalMs: 600_000, maxBackoffMs: 1000, random: () => 0.5 }) >= 450_000, 'the cap is never below the interval');
});

t.test('default cap: 5 min, or half of max_staleness when shorter, never below the interval', async (t) => {
  t.equal(defaultMaxBackoffMs(30_000), 300_000);
  t.equal(defaultMaxBackoffMs(30_000, 300_000), 150_000);
  t.equal(defaultMaxBackoffMs(30_000, 20 * 60_000), 300_000);
  t.equal(defaultMaxBackoffMs(600_000, 300_000), 600_000);
});
