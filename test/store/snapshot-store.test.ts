import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import t from 'tap';
import { pino } from 'pino';
import { VexilError } from '../../src/errors.js';
import { createLocalSource, LOCAL_REFERENCE } from '../../src/sources/local.js';
import type { Source } from '../../src/sources/types.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { InvalidStateError } from '../../src/store/invalid-state-error.js';
import { createSnapshotStore, type ManagedSnapshotStore } from '../../src/store/snapshot-store.js';
import type { StoreEvent } from '../../src/store/types.js';
import { FIXTURES, fixture, nextEvent, tempState, useFixture, type Teardown } from './temp-state.js';
import { STATE_LIMITS, STORE_DEFAULTS } from '../support/config-defaults.js';
import { ONE_REFERENCE } from '../../src/sources/storage.js';

const greeting = (s: Snapshot | undefined) => s?.namespaces.get('default')?.flags.get('greeting')?.defaultVariant?.key;

function started(t: Teardown, dir: string, opts: { debounceMs?: number; source?: Source } = {}): ManagedSnapshotStore {
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: opts.source ?? createLocalSource({ ...STATE_LIMITS, path: dir }), debounceMs: opts.debounceMs ?? 20 });
  t.teardown(() => store.close());
  return store;
}

/** A pino logger writing JSON lines into an array. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

t.test('first build: the default reference is served with its revision and status', async (t) => {
  const dir = tempState(t, 'hello');
  const now = new Date('2026-01-02T03:04:05.000Z');
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: createLocalSource({ ...STATE_LIMITS, path: dir }), now: () => now });
  t.teardown(() => store.close());
  t.equal(store.defaultReference, LOCAL_REFERENCE);
  t.equal(store.get(), undefined, 'nothing before start');
  t.same(store.status(), []);

  const swaps: StoreEvent[] = [];
  store.subscribe((e) => swaps.push(e));
  await store.start();

  const snap = store.get();
  t.ok(snap, 'a snapshot after start');
  t.equal(greeting(snap), 'hello');
  t.equal(snap?.reference, LOCAL_REFERENCE);
  t.equal(snap?.builtAt, now.toISOString());
  const rev = (await createLocalSource({ ...STATE_LIMITS, path: dir }).refs()).get(LOCAL_REFERENCE)!;
  t.equal(snap?.revision, rev.id, 'the revision is the source revision');
  t.ok(Object.isFrozen(snap), 'frozen');
  t.equal(store.get(''), snap, 'empty reference = default');
  t.equal(store.get(LOCAL_REFERENCE), snap);
  t.equal(await store.resolve(), snap);
  t.equal(await store.resolve(LOCAL_REFERENCE), snap);

  const [status] = store.status();
  t.same(status, { reference: LOCAL_REFERENCE, revision: { id: rev.id, ref: LOCAL_REFERENCE }, loadedAt: now.toISOString() });
  t.equal(swaps.length, 1);
  t.match(swaps[0], { type: 'swap', reference: LOCAL_REFERENCE, snapshot: snap, durationMs: Number });

  const err = await store.resolve('main').catch((e: unknown) => e);
  t.ok(err instanceof VexilError, 'an unknown reference is a VexilError');
  t.equal((err as VexilError).code, 5, 'NotFound');
  t.equal((err as VexilError).message, 'reference "main" not found');
  t.equal(store.get('main'), undefined);
});

t.test('invalid initial state: start() throws the located problems and stops watching', async (t) => {
  const dir = tempState(t, 'broken');
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: createLocalSource({ ...STATE_LIMITS, path: dir }) });
  const err = await store.start().catch((e: unknown) => e);
  t.ok(err instanceof InvalidStateError, 'InvalidStateError');
  const problems = (err as InvalidStateError).problems;
  t.ok(problems.length > 0);
  const p = problems.find((x) => x.severity === 'error')!;
  t.equal(p.file, 'features.yml');
  t.ok(p.line > 1 && p.column > 0, 'located');
  t.match(p.message, /nobody-defined-this/);
  t.equal(store.get(), undefined, 'nothing served');
  // closed: a later fix is not picked up
  useFixture(dir, 'hello');
  await new Promise((r) => setTimeout(r, 250));
  t.equal(store.get(), undefined, 'not watching any more');
});

t.test('a missing state folder fails start()', async (t) => {
  const dir = tempState(t);
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: createLocalSource({ ...STATE_LIMITS, path: join(dir, 'missing') }) });
  await t.rejects(store.start(), /does not exist/);
});

t.test('the one-reference policy vexil serve gives local, oci and object: the reference is served, rebuilt and kept; other names are 404', async (t) => {
  const dir = tempState(t, 'hello');
  const store = createSnapshotStore({ ...STATE_LIMITS, ...ONE_REFERENCE, source: createLocalSource({ ...STATE_LIMITS, path: dir }), debounceMs: 20 });
  t.teardown(() => store.close());
  await store.start();
  t.equal(greeting(store.get()), 'hello');
  const swapped = nextEvent(store, 'swap');
  useFixture(dir, 'bonjour');
  t.equal(greeting((await swapped).snapshot), 'bonjour');
  await store.refresh();
  await store.refresh();
  t.equal(greeting(store.get()), 'bonjour', 'an idle TTL of 0 never drops the default reference');
  t.equal(greeting(await store.resolve(LOCAL_REFERENCE)), 'bonjour');
  for (const name of ['main', 'c'.repeat(40)]) {
    const err = await store.resolve(name).catch((e: unknown) => e);
    t.equal((err as VexilError).code, 5, `"${name.slice(0, 8)}": NotFound, not a capacity refusal`);
  }
  t.same(store.status().map((s) => s.reference), [LOCAL_REFERENCE], 'nothing else is kept');
});

t.test('hot reload: an edit of the real folder is swapped in, atomically', async (t) => {
  const dir = tempState(t, 'hello');
  const store = started(t, dir);
  await store.start();
  const before = store.get();
  t.equal(greeting(before), 'hello');

  const swapped = nextEvent(store, 'swap');
  useFixture(dir, 'bonjour');
  const e = await swapped;
  t.equal(greeting(e.snapshot), 'bonjour');
  t.equal(store.get(), e.snapshot, 'the new snapshot is served');
  t.not(e.snapshot.revision, before?.revision, 'with a new revision');
  t.equal(greeting(before), 'hello', 'a reader holding the old snapshot keeps a consistent view');
  t.equal(store.status()[0]?.revision?.id, e.snapshot.revision);
});

t.test('a broken edit keeps the last good snapshot, is reported, and a fix clears it', async (t) => {
  const dir = tempState(t, 'hello');
  const { logger, lines } = capturingLogger();
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: createLocalSource({ ...STATE_LIMITS, path: dir }), logger, debounceMs: 20 });
  t.teardown(() => store.close());
  await store.start();
  const good = store.get();

  const rejected = nextEvent(store, 'rejected');
  useFixture(dir, 'broken');
  const r = await rejected;
  t.equal(store.get(), good, 'the last good snapshot is still served');
  const status = store.status()[0]!;
  t.equal(status.revision?.id, good?.revision, 'status still names the served revision');
  t.ok(status.lastRejected, 'lastRejected is set');
  t.equal(status.lastRejected, r.rejected);
  t.not(status.lastRejected?.revision.id, good?.revision);
  const p = status.lastRejected!.problems.find((x) => x.severity === 'error')!;
  t.equal(p.file, 'features.yml');
  t.ok(p.line > 0 && p.column > 0, 'problems are located');
  const warn = lines.find((l) => l.msg === 'state change rejected; still serving the last good snapshot');
  t.ok(warn, 'logged');
  t.equal(warn?.level, 40, 'as a warning');
  t.match(String((warn?.problems as string[])[0]), /^features\.yml:\d+:\d+: error /);

  const swapped = nextEvent(store, 'swap');
  useFixture(dir, 'bonjour');
  const s = await swapped;
  t.equal(greeting(s.snapshot), 'bonjour');
  t.equal(store.status()[0]?.lastRejected, undefined, 'a good change clears lastRejected');
});

t.test('undoing a broken edit back to the served content clears lastRejected', async (t) => {
  const dir = tempState(t, 'hello');
  const store = started(t, dir);
  await store.start();
  const good = store.get();
  const rejected = nextEvent(store, 'rejected');
  useFixture(dir, 'broken');
  await rejected;
  useFixture(dir, 'hello');
  await store.refresh();
  t.equal(store.get(), good, 'same snapshot object: nothing was rebuilt');
  t.equal(store.status()[0]?.lastRejected, undefined);
});

t.test('rapid edits coalesce into few builds, and the last edit wins', async (t) => {
  const dir = tempState(t, 'hello');
  const store = started(t, dir, { debounceMs: 300 });
  await store.start();
  await store.refresh(); // settle the watcher's first look
  const swaps: Snapshot[] = [];
  store.subscribe((e) => {
    if (e.type === 'swap') swaps.push(e.snapshot);
  });
  const hello = fixture('hello/features.yml').toString();
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, 'features.yml'), `${hello}# edit ${i}\n`);
  useFixture(dir, 'bonjour');
  const final = (await createLocalSource({ ...STATE_LIMITS, path: dir }).refs()).get(LOCAL_REFERENCE)!.id;
  while (store.get()?.revision !== final) await nextEvent(store, 'swap');
  t.equal(greeting(store.get()), 'bonjour');
  t.ok(swaps.length >= 1 && swaps.length <= 3, `21 writes, ${swaps.length} build(s)`);
});

t.test('builds never overlap, and a change during a build gets one more build', async (t) => {
  const dir = tempState(t, 'hello');
  const local = createLocalSource({ ...STATE_LIMITS, path: dir });
  let active = 0;
  let maxActive = 0;
  let builds = 0;
  // The real source, observed: how many files() calls run at once.
  const observed: Source = {
    kind: 'local',
    refs: () => local.refs(),
    async files(rev) {
      active++;
      builds++;
      maxActive = Math.max(maxActive, active);
      try {
        await new Promise((r) => setTimeout(r, 30));
        return await local.files(rev);
      } finally {
        active--;
      }
    },
  };
  const store = started(t, dir, { source: observed });
  await store.start();
  const waits: Array<Promise<void>> = [];
  for (const name of ['bonjour', 'hello', 'bonjour']) {
    useFixture(dir, name);
    waits.push(store.refresh(), store.refresh());
  }
  await Promise.all(waits);
  t.equal(maxActive, 1, 'one build at a time');
  t.ok(builds <= 4, `${builds} builds for 1 start + 6 refresh calls`);
  t.equal(greeting(store.get()), 'bonjour', 'the last state is served');
});

t.test('the parse cache is reused across reloads: unchanged files are not parsed again', async (t) => {
  const dir = tempState(t, 'two-files');
  const store = started(t, dir);
  await store.start();
  const first = store.parseCacheStats();
  t.ok(first.entries >= 2, 'both files cached');

  const swapped = nextEvent(store, 'swap');
  const flags = fixture('two-files/flags.features.yml').toString();
  writeFileSync(join(dir, 'flags.features.yml'), flags.replace('name: Greeting', 'name: Greetings'));
  const e = await swapped;
  t.equal(e.snapshot.namespaces.get('default')?.flags.get('greeting')?.name, 'Greetings');
  const second = store.parseCacheStats();
  t.ok(second.hits > first.hits, 'the unchanged segments file came from the cache');
});

t.test('a source failure is reported and the last good snapshot stays', async (t) => {
  const state = join(tempState(t), 'state');
  cpSync(join(FIXTURES, 'hello'), state, { recursive: true });
  const store = started(t, state);
  await store.start();
  const good = store.get();
  const errored = nextEvent(store, 'error');
  rmSync(state, { recursive: true, force: true });
  await store.refresh();
  const e = await errored;
  t.match(e.message, /does not exist/);
  t.equal(store.get(), good);
  t.match(store.status()[0]?.lastError, { at: String, message: /does not exist/ });
});

t.test('after close() changes are ignored', async (t) => {
  const dir = tempState(t, 'hello');
  const store = started(t, dir);
  await store.start();
  const snap = store.get();
  await store.close();
  useFixture(dir, 'bonjour');
  await store.refresh();
  await new Promise((r) => setTimeout(r, 150));
  t.equal(store.get(), snap);
  await t.rejects(store.resolve('other'), { code: 14 });
});
