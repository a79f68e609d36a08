/**
 * server/diff/slices.ts on its own: diffs run in turns give the values their steps give at once
 * (two diff reports with impact over random-sized states, interleaved slice by slice); a step that
 * throws rejects its own diff only; an aborted signal abandons its diff (499, the generator closed)
 * while the others complete; the limit refuses with 503 + Retry-After and frees its place on
 * release; other callbacks run between slices (counted, not timed).
 */
import tap from 'tap';
import { Code, VexilError } from '../../src/errors.js';
import { diffReport, diffReportSteps, type ReportOptions } from '../../src/diff/report.js';
import type { Steps } from '../../src/diff/steps.js';
import { load } from '../../src/state/load.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { createDiffSlices } from '../../src/server/diff/slices.js';
import { changedState } from '../support/changed-state.js';
import { generateState } from '../support/generate-state.js';

const enc = new TextEncoder();
function snapshot(files: ReadonlyArray<{ path: string; text: string }>, reference: string): Snapshot {
  const r = load(files.map((f) => ({ path: f.path, bytes: enc.encode(f.text) })), { reference, revision: reference });
  if (r.snapshot === undefined) throw new Error(JSON.stringify(r.problems.slice(0, 3)));
  return r.snapshot;
}

tap.test('diffs interleaved slice by slice answer what their steps answer at once', async (t) => {
  const generated = generateState({ flags: 600, seed: 7 });
  const base = snapshot(generated, 'main');
  const head = snapshot(changedState(generated).files, 'feature');
  const contexts: Record<string, string>[] = [{ plan: 'pro', age: '30', beta: 'true' }, { country: 'fr' }, {}];
  const slices = createDiffSlices({ maxConcurrent: 3, sliceMs: 0 });
  let turns = 0;
  const ticker = setInterval(() => turns++, 0);
  const opts: ReportOptions[] = [{ impact: { entities: 20_000, contexts } }, { impact: { entities: 5_000, contexts: [] } }, { namespace: 'default' }];
  const answers = await Promise.all(opts.map((o) => slices.run(diffReportSteps(base, head, o))));
  clearInterval(ticker);
  for (const [i, o] of opts.entries()) t.equal(JSON.stringify(answers[i]), JSON.stringify(diffReport(base, head, o)), `diff ${i + 1}`);
  t.equal(answers[0]!.impact!.flags.length, answers[0]!.summary.flagsChanged);
  t.ok(answers[0]!.summary.flagsChanged > 0, 'flags changed');
  t.ok(answers[0]!.impact!.flags.some((f) => f.changed > 0), 'outcomes moved');
  t.ok(turns > 0, `timers ran ${turns} times while the diffs were computed`);
});

tap.test('a step that throws rejects its own diff; the others complete', async (t) => {
  const slices = createDiffSlices({ maxConcurrent: 2, sliceMs: 0 });
  function* failing(): Steps<number> {
    yield;
    throw new Error('boom');
  }
  function* counting(): Steps<number> {
    let n = 0;
    for (let i = 0; i < 5; i++, n++) yield;
    return n;
  }
  const [a, b] = await Promise.allSettled([slices.run(failing()), slices.run(counting())]);
  t.equal(a.status, 'rejected');
  t.match((a as PromiseRejectedResult).reason, { message: 'boom' });
  t.same(b, { status: 'fulfilled', value: 5 });
});

tap.test('a diff whose client has gone is abandoned at its next turn; the others complete', async (t) => {
  const slices = createDiffSlices({ maxConcurrent: 2, sliceMs: 0 });
  let stepsRun = 0;
  let closed = false;
  function* endless(): Steps<number> {
    try {
      for (;;) {
        stepsRun++;
        yield;
      }
    } finally {
      closed = true;
    }
  }
  function* counting(): Steps<number> {
    let n = 0;
    for (let i = 0; i < 20; i++, n++) yield;
    return n;
  }
  const gone = new AbortController();
  const abandoned = slices.run(endless(), gone.signal);
  const other = slices.run(counting());
  while (stepsRun < 3) await new Promise((r) => setImmediate(r));
  gone.abort();
  const err = await abandoned.then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof VexilError);
  t.equal((err as VexilError).code, Code.Canceled);
  t.ok(closed, 'the abandoned generator was closed');
  const ran = stepsRun;
  t.equal(await other, 20);
  t.equal(stepsRun, ran, 'no step of the abandoned diff ran after it was dropped');
  const already = await slices.run(counting(), gone.signal).catch((e: unknown) => e);
  t.equal((already as VexilError).code, Code.Canceled, 'an already aborted signal never queues');
});

tap.test('at the limit: 503 with Retry-After; a released place is free again', async (t) => {
  const slices = createDiffSlices({ maxConcurrent: 2, sliceMs: 2 });
  const first = slices.admit();
  const second = slices.admit();
  t.equal(slices.inProgress, 2);
  let refused: unknown;
  try {
    slices.admit();
  } catch (err) {
    refused = err;
  }
  t.ok(refused instanceof VexilError);
  t.equal((refused as VexilError).code, Code.Unavailable);
  t.same((refused as VexilError).headers, { 'Retry-After': '1' });
  t.equal((refused as VexilError).message, '2 diffs are already running (diff.max_concurrent); try again later');
  first();
  first(); // a second release of the same place changes nothing
  t.equal(slices.inProgress, 1);
  const third = slices.admit();
  t.equal(slices.inProgress, 2);
  second();
  third();
  t.equal(slices.inProgress, 0);
});
