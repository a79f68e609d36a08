/**
 * The diff core's long computations (the semantic diff of two large snapshots, the impact
 * preview over up to 100,000 entities) written as generators that yield between bounded units of
 * work: a few dozen flags compared, a few hundred entities evaluated. Pure: a yield carries no
 * value and nothing is read from outside between steps, so however the steps are spread over time
 * (all at once by `drain`, or in time slices by the server, server/diff/slices.ts) the result is the
 * same value. This lets the server answer other requests while a diff is computed, without a
 * second copy of the snapshots in a worker thread.
 */

/** A computation of T in steps: resume it until it is done. */
export type Steps<T> = Generator<void, T, void>;

/** Runs every step at once (the CLI, tests, and whatever needs the value now). */
export function drain<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}
