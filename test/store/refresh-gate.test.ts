/**
 * The refresh gate (src/store/refresh-gate.ts) on a hand-driven clock: asks coalesce per
 * reference, a reference is looked at most once per interval whatever the rate of asks, an ask
 * is covered only by a look that started after it, an ask for everything covers (and is not
 * starved by) asks for single references, and the pending set stays bounded.
 */
import tap from 'tap';
import { createRefreshGate } from '../../src/store/refresh-gate.js';

/** A clock and timers the test advances by hand. */
function manualClock() {
  let now = 0;
  let timers: Array<{ at: number; fn: () => void }> = [];
  return {
    now: () => now,
    setTimer(fn: () => void, ms: number) {
      const t = { at: now + ms, fn };
      timers.push(t);
      return () => {
        timers = timers.filter((x) => x !== t);
      };
    },
    /** Moves the clock and fires the timers due. */
    async advance(ms: number) {
      now += ms;
      for (;;) {
        const due = timers.filter((t) => t.at <= now);
        if (due.length === 0) break;
        timers = timers.filter((t) => t.at > now);
        for (const t of due) t.fn();
        await settle();
      }
      await settle();
    },
    pendingTimers: () => timers.length,
  };
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

/** A gate whose looks are recorded and finish when the test says. */
function harness(opts: { maxPending?: number } = {}) {
  const clock = manualClock();
  const looks: Array<{ at: number; refs: string[] | 'all'; finish: (err?: Error) => void }> = [];
  const gate = createRefreshGate({
    look: (refs) =>
      new Promise<void>((resolve, reject) => {
        looks.push({ at: clock.now(), refs: refs === undefined ? 'all' : [...refs].sort(), finish: (err) => (err ? reject(err) : resolve()) });
      }),
    nowMs: clock.now,
    setTimer: clock.setTimer,
    minIntervalMs: 1000,
    ...(opts.maxPending !== undefined ? { maxPending: opts.maxPending } : {}),
  });
  return { clock, looks, gate };
}

tap.test('a first ask looks at once; asks for the same reference while it runs join the next look, a second later', async (t) => {
  const { clock, looks, gate } = harness();
  let firstDone = false;
  const first = gate.request(['main']).then(() => (firstDone = true));
  await settle();
  t.same(looks.map((l) => l.refs), [['main']], 'looked at once');
  const later = Array.from({ length: 100 }, () => gate.request(['main']));
  let laterDone = 0;
  for (const p of later) void p.then(() => laterDone++);
  looks[0]!.finish();
  await first;
  t.ok(firstDone);
  await clock.advance(500);
  t.equal(looks.length, 1, 'no second look within the second, however many asks');
  t.equal(laterDone, 0, 'asks made during the first look are not covered by it');
  await clock.advance(500);
  t.equal(looks.length, 2, 'one more look once the second is over, for all 100 asks');
  t.same(looks[1]!.refs, ['main']);
  t.equal(looks[1]!.at, 1000);
  looks[1]!.finish();
  await settle();
  t.equal(laterDone, 100);
  await clock.advance(10_000);
  t.equal(looks.length, 2, 'nothing more without asks');
  t.equal(gate.looks, 2);
});

tap.test('different references are bounded each on its own and share a look when due together', async (t) => {
  const { clock, looks, gate } = harness();
  void gate.request(['a']);
  await settle();
  void gate.request(['b']);
  await settle();
  t.same(looks.map((l) => l.refs), [['a']], 'b waits while the look at a runs');
  looks[0]!.finish();
  await settle();
  t.same(looks.map((l) => l.refs), [['a'], ['b']], 'b is looked at as soon as the look at a ended: its own bound is free');
  looks[1]!.finish();
  await clock.advance(200);
  void gate.request(['a']);
  void gate.request(['b']);
  await settle();
  t.equal(looks.length, 2, 'both within their second');
  await clock.advance(800);
  t.same(looks[2]!.refs, ['a', 'b'], 'one look for both when both are due');
});

tap.test('an ask for every reference waits for the last look at any and covers the asks for single ones', async (t) => {
  const { clock, looks, gate } = harness();
  void gate.request(['a']);
  await settle();
  looks[0]!.finish();
  await clock.advance(600);
  void gate.request(['b']);
  await settle();
  looks[1]!.finish();
  await settle();
  t.equal(looks.length, 2);
  let allDone = false;
  void gate.request().then(() => (allDone = true));
  // A stream of asks for single references, each every 300 ms, does not hold the look at everything back.
  for (let i = 0; i < 5; i++) {
    void gate.request([i % 2 === 0 ? 'a' : 'b']);
    await clock.advance(300);
  }
  t.same(looks.map((l) => l.refs), [['a'], ['b'], 'all'], 'one look at everything, a second after the last look (at b)');
  t.ok(looks[2]!.at >= 1600, `started at ${looks[2]!.at} ms, not before 1600`);
  looks[2]!.finish();
  await settle();
  t.ok(allDone);
});

tap.test('a failed look rejects the asks it covered; the next ask looks again', async (t) => {
  const { clock, looks, gate } = harness();
  const p = gate.request(['main']);
  await settle();
  looks[0]!.finish(new Error('git server down'));
  await t.rejects(p, /git server down/);
  await clock.advance(1000);
  void gate.request(['main']);
  await settle();
  t.equal(looks.length, 2);
});

tap.test('asks for more distinct references than the bound fold into one ask for every reference', async (t) => {
  const { clock, looks, gate } = harness({ maxPending: 4 });
  void gate.request(['busy']);
  await settle();
  let done = 0;
  for (let i = 0; i < 100; i++) void gate.request([`r${i}`]).then(() => done++);
  looks[0]!.finish();
  await clock.advance(999);
  t.equal(looks.length, 1, 'within the second of the look at busy: nothing');
  await clock.advance(1);
  t.same(looks.map((l) => l.refs), [['busy'], 'all'], 'then one look at everything covers the 100 names');
  looks[1]!.finish();
  await settle();
  t.equal(done, 100);
});

tap.test('close resolves the asks still waiting and stops the timer', async (t) => {
  const { clock, looks, gate } = harness();
  void gate.request(['main']);
  await settle();
  looks[0]!.finish();
  await settle();
  const waiting = gate.request(['main']);
  await settle();
  t.equal(clock.pendingTimers(), 1);
  gate.close();
  await waiting;
  t.equal(clock.pendingTimers(), 0);
  await gate.request(['main']);
  t.equal(looks.length, 1, 'nothing looked at once closed');
});
