/**
 * Generates the matchers of a snapshot's flags (evaluation/codegen.ts prepareMatcher) in the
 * background once the store has swapped it in, so that no request pays for code generation: until
 * a flag's turn comes its evaluations are interpreted (same results), afterwards they run the
 * generated code.
 *
 * Why in the background rather than in the build: generating every matcher costs about half as
 * much as loading the state (10,000 flags: ~0.5 s of CPU; `npm run bench -- load` prints it), so
 * doing it in the build would delay every change served by that much. Why in slices: one long task would hold the event loop, health
 * checks included; between slices of at most `sliceMs` the loop serves I/O (setImmediate runs
 * after the poll phase). Flags already generated (shared with an earlier snapshot through the
 * build cache) cost a check each.
 *
 * One pending walk per reference: a newer snapshot of a reference replaces the walk of the older
 * one (whose flags it mostly shares). Snapshots are walked in the order they arrived.
 */
import { prepareMatcher } from '../evaluation/codegen.js';
import type { CompiledFlag } from '../model/compiled.js';
import type { Snapshot } from '../model/snapshot.js';

export interface MatcherWarmup {
  /** Schedules the flags of a snapshot just swapped in. */
  add(snapshot: Snapshot): void;
  /** Resolves once every scheduled flag has its matcher (or has been tried). */
  idle(): Promise<void>;
  /** Stops; pending work is dropped and idle() waiters are released. */
  close(): void;
}

export interface MatcherWarmupOptions {
  /** Longest run between two turns of the event loop (default 5 ms). */
  readonly sliceMs?: number;
}

const DEFAULT_SLICE_MS = 5;

export function createMatcherWarmup(opts: MatcherWarmupOptions = {}): MatcherWarmup {
  const sliceMs = opts.sliceMs ?? DEFAULT_SLICE_MS;
  /** Per reference, the flags still to visit (a Map iterates in insertion order: oldest first). */
  const pending = new Map<string, Iterator<CompiledFlag>>();
  let waiters: Array<() => void> = [];
  let scheduled: NodeJS.Immediate | undefined;
  let closed = false;

  function schedule(): void {
    if (scheduled !== undefined || closed) return;
    // Not unref'd: idle() must settle even in a process with nothing else to do; close() stops it.
    scheduled = setImmediate(runSlice);
  }

  function runSlice(): void {
    scheduled = undefined;
    const deadline = performance.now() + sliceMs;
    for (const [reference, flags] of pending) {
      for (;;) {
        const next = flags.next();
        if (next.done === true) {
          pending.delete(reference);
          break;
        }
        // A flag already generated costs one check: only real work counts against the slice.
        if (prepareMatcher(next.value) && performance.now() >= deadline) {
          schedule();
          return;
        }
      }
    }
    const done = waiters;
    waiters = [];
    for (const resolve of done) resolve();
  }

  return {
    add(snapshot) {
      if (closed) return;
      pending.delete(snapshot.reference); // re-inserted last: walks run in arrival order
      pending.set(snapshot.reference, compiledFlags(snapshot));
      schedule();
    },
    idle() {
      if (pending.size === 0 && scheduled === undefined) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    close() {
      closed = true;
      if (scheduled !== undefined) clearImmediate(scheduled);
      scheduled = undefined;
      pending.clear();
      const done = waiters;
      waiters = [];
      for (const resolve of done) resolve();
    },
  };
}

function* compiledFlags(snapshot: Snapshot): Generator<CompiledFlag> {
  for (const namespace of snapshot.namespaces.values()) {
    for (const flag of namespace.flags.values()) yield flag.compiled;
  }
}
