/**
 * Where `GET /api/v1/diff` does its work: on the serving thread, in time slices, never in one
 * block. The diff core computes in steps (diff/steps.ts: a generator that yields after a fraction
 * of a millisecond of work); this runner resumes the diffs in progress, in turns, for at most
 * `diff.slice` per turn of the event loop, then gives the loop back (setImmediate) so requests
 * that arrived meanwhile are answered before the next slice. However many diffs are in progress,
 * one slice at most runs between two passes of the loop over the sockets: the delay a diff adds
 * to an evaluation is one slice (plus one step), not the diff.
 *
 * Why not a worker thread: the two snapshots are immutable object graphs built on this thread; a
 * worker cannot share them, and copying or rebuilding 10,000 compiled flags would cost more than
 * the diff itself and make the first diff slow. The slices need no copy and give the same result
 * (the steps are pure), and an idle server loses almost nothing (one setImmediate per slice).
 *
 * Also here: the bound on diffs in progress (`diff.max_concurrent`, from the request to the answer,
 * building an unbuilt reference included); one more is refused 503 with Retry-After (errors.ts
 * `overloaded`), which costs nothing, so the work queued is bounded. A diff whose client has gone
 * (its `signal` aborted) is dropped at its next turn, so an abandoned diff costs one slice at most.
 */
import { clientGone, overloaded } from '../../errors.js';
import type { Steps } from '../../diff/steps.js';

export interface DiffSlicesOptions {
  /** Diffs in progress at once; one more is refused (≥ 1). */
  readonly maxConcurrent: number;
  /** Milliseconds of diff work per turn of the event loop (0: one step per turn). */
  readonly sliceMs: number;
}

export interface DiffSlices {
  /** Takes a place for one diff (release it once answered), or throws the 503 when all are taken. */
  admit(): () => void;
  /**
   * Computes `steps` in slices between other work; resolves with the value, rejects with what a
   * step threw, or with `clientGone` once `signal` is aborted (the steps are then abandoned).
   */
  run<T>(steps: Steps<T>, signal?: AbortSignal): Promise<T>;
  /** Diffs admitted and not yet released. */
  readonly inProgress: number;
}

interface Job {
  readonly steps: Steps<unknown>;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

export function createDiffSlices(opts: DiffSlicesOptions): DiffSlices {
  const max = Math.max(1, Math.floor(opts.maxConcurrent));
  let inProgress = 0;
  /** Jobs waiting for their next slice, in turn order. */
  const queue: Job[] = [];
  let scheduled = false;

  const schedule = () => {
    if (scheduled || queue.length === 0) return;
    scheduled = true;
    setImmediate(turn);
  };

  /** One turn: resume the first job until the slice is used up or it is done (then the next one). */
  function turn(): void {
    scheduled = false;
    const deadline = performance.now() + opts.sliceMs;
    while (queue.length > 0) {
      const job = queue[0]!;
      if (job.signal?.aborted === true) {
        queue.shift();
        job.steps.return(undefined);
        job.reject(clientGone());
        continue;
      }
      let r: IteratorResult<void, unknown>;
      try {
        r = job.steps.next();
      } catch (err) {
        queue.shift();
        job.reject(err);
        continue;
      }
      if (r.done === true) {
        queue.shift();
        job.resolve(r.value);
        continue;
      }
      if (performance.now() >= deadline) {
        // Round robin: the next slice goes to the next diff.
        queue.push(queue.shift()!);
        break;
      }
    }
    schedule();
  }

  return {
    admit() {
      if (inProgress >= max) {
        throw overloaded(`${inProgress} ${inProgress === 1 ? 'diff is' : 'diffs are'} already running (diff.max_concurrent); try again later`);
      }
      inProgress++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        inProgress--;
      };
    },
    run<T>(steps: Steps<T>, signal?: AbortSignal): Promise<T> {
      if (signal?.aborted === true) return Promise.reject(clientGone());
      return new Promise<T>((resolve, reject) => {
        queue.push({ steps, signal, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
    get inProgress() {
      return inProgress;
    },
  };
}
