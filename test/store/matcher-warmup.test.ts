/**
 * The background generation of matchers (src/store/matcher-warmup.ts): every flag of a snapshot
 * gets its generated matcher, in slices between which the event loop runs other work; a newer
 * snapshot of a reference replaces the older one's walk; close stops it.
 */
import t from 'tap';
import type { CompiledFlag } from '../../src/model/compiled.js';
import { load } from '../../src/state/load.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { createMatcherWarmup } from '../../src/store/matcher-warmup.js';
import { generateState } from '../support/generate-state.js';

function loadGenerated(flags: number, seed: number, reference = 'main'): Snapshot {
  const files = generateState({ flags, seed }).map((f) => ({ path: f.path, bytes: new TextEncoder().encode(f.text) }));
  const r = load(files, { reference, revision: `r${seed}` });
  if (!r.snapshot) throw new Error(JSON.stringify(r.problems));
  return r.snapshot;
}

function flagsOf(s: Snapshot): CompiledFlag[] {
  return [...s.namespaces.values()].flatMap((ns) => [...ns.flags.values()].map((f) => f.compiled));
}

const tried = (f: CompiledFlag) => (f.variant ?? f.boolean!).matcher.tried;
const generated = (f: CompiledFlag) => (f.variant ?? f.boolean!).matcher.fn !== null;

t.test('every flag is prepared; enabled ones get generated code', async (t) => {
  const s = loadGenerated(300, 1);
  const warmup = createMatcherWarmup();
  t.teardown(() => warmup.close());
  const flags = flagsOf(s);
  t.equal(flags.filter(tried).length, 0, 'nothing before');
  warmup.add(s);
  await warmup.idle();
  t.equal(flags.filter(tried).length, flags.length, 'every flag tried');
  // A disabled variant flag answers without matching: nothing to generate for it.
  const expected = flags.filter((f) => f.variant === null || f.enabled);
  t.same(flags.filter(generated), expected);
  t.equal(await Promise.race([warmup.idle().then(() => 'idle'), new Promise((r) => setImmediate(() => r('pending')))]), 'idle', 'idle at once when there is nothing to do');
});

t.test('slices let other work run in between', async (t) => {
  const s = loadGenerated(200, 2);
  // sliceMs 0: one generation per slice.
  const warmup = createMatcherWarmup({ sliceMs: 0 });
  t.teardown(() => warmup.close());
  const flags = flagsOf(s);
  warmup.add(s);
  const seen: number[] = [];
  await new Promise<void>((resolve) => {
    const look = () => {
      seen.push(flags.filter(tried).length);
      if (seen.length < 3) setImmediate(look);
      else resolve();
    };
    setImmediate(look);
  });
  await warmup.idle();
  t.same(seen, [1, 2, 3], 'one flag per slice, with other callbacks in between');
  t.equal(flags.filter(tried).length, flags.length);
});

t.test('a newer snapshot of a reference replaces the pending walk of the older one', async (t) => {
  const older = loadGenerated(200, 3);
  const newer = loadGenerated(50, 4);
  const other = loadGenerated(20, 5, 'preview');
  const warmup = createMatcherWarmup();
  t.teardown(() => warmup.close());
  warmup.add(older);
  warmup.add(other);
  warmup.add(newer);
  await warmup.idle();
  t.equal(flagsOf(older).filter(tried).length, 0, 'the replaced walk never ran');
  t.equal(flagsOf(other).filter(tried).length, flagsOf(other).length, 'another reference is walked');
  t.equal(flagsOf(newer).filter(tried).length, flagsOf(newer).length);
});

t.test('close drops pending work and releases waiters', async (t) => {
  const s = loadGenerated(500, 6);
  const warmup = createMatcherWarmup({ sliceMs: 0 });
  warmup.add(s);
  const waiting = warmup.idle();
  await new Promise((r) => setImmediate(r));
  warmup.close();
  await waiting;
  const done = flagsOf(s).filter(tried).length;
  await new Promise((r) => setTimeout(r, 20));
  t.equal(flagsOf(s).filter(tried).length, done, 'nothing more after close');
  t.ok(done < flagsOf(s).length);
  warmup.add(s);
  await warmup.idle();
  t.equal(flagsOf(s).filter(tried).length, done, 'add after close is ignored');
});
