import t from 'tap';
import { DurationError, isDuration, parseDuration, parseDurationNs } from '../../src/config/duration.js';

t.test('single units', async (t) => {
  t.equal(parseDuration('300ms'), 300);
  t.equal(parseDuration('30s'), 30_000);
  t.equal(parseDuration('10m'), 600_000);
  t.equal(parseDuration('24h'), 86_400_000);
  t.equal(parseDuration('1500us'), 1.5);
  t.equal(parseDuration('1500µs'), 1.5, 'micro sign');
  t.equal(parseDuration('1500μs'), 1.5, 'greek mu');
  t.equal(parseDuration('2000000ns'), 2);
});

t.test('combined parts and fractions', async (t) => {
  t.equal(parseDuration('1m30s'), 90_000);
  t.equal(parseDuration('1h30m15s'), 5_415_000);
  t.equal(parseDuration('1.5h'), 5_400_000);
  t.equal(parseDuration('1.1s'), 1100, 'no floating-point drift');
  t.equal(parseDuration('.5s'), 500);
  t.equal(parseDuration('1.s'), 1000);
  t.equal(parseDuration('2h45m0.5s'), 9_900_500);
  t.equal(parseDurationNs('1.0000000001s'), 1_000_000_000n, 'below a nanosecond is truncated, as in Go');
});

t.test('zero and signs', async (t) => {
  t.equal(parseDuration('0'), 0);
  t.equal(parseDuration('0s'), 0);
  t.equal(parseDuration('+5s'), 5000);
  t.equal(parseDuration('-0'), 0);
  t.throws(() => parseDuration('-1s'), { name: 'DurationError', message: /"-1s": must not be negative/ });
  t.equal(parseDuration('-1s', { allowNegative: true }), -1000);
});

t.test('bad input names the value and shows examples', async (t) => {
  for (const bad of ['', '5', '5 minutes', 's', '.s', '1h 30m', '1d', 'abc', '1.2.3s', '30S', ' 30s', '--1s']) {
    t.throws(() => parseDuration(bad), DurationError, JSON.stringify(bad));
    t.notOk(isDuration(bad), `isDuration(${JSON.stringify(bad)})`);
  }
  t.throws(() => parseDuration('5 minutes'), {
    message: 'invalid duration "5 minutes" (expected e.g. 30s, 1m30s, 24h)',
  });
  t.throws(() => parseDuration('3d'), { message: /unknown unit "d"/ });
  t.throws(() => parseDuration('3000000h'), { message: /too long/ });
  t.notOk(isDuration(30), 'numbers are not durations');
  t.ok(isDuration('1m30s'));
});
