/**
 * The store's ref table: one entry per reference it keeps (built, being built, or failed), with
 * what the other parts need to know about it: the snapshot served and its revision, the last
 * rejected revision and the last backend error, when the source last confirmed it, when a request
 * last named it, and whether it is a pinned commit. Which references are prebuilt (the default one
 * and those matching the `prebuild` globs) is decided here too, since several parts ask.
 *
 * Bounds: the table holds only what the other parts put in it; they keep it bounded (admission.ts
 * caps references built on request, refresh.ts drops idle and deleted ones). No I/O, no timers.
 */
import { globMatch } from '../state/glob.js';
import type { Revision } from '../sources/types.js';
import type { Snapshot } from '../model/snapshot.js';
import type { RejectedRevision } from './types.js';

export interface RefState {
  snapshot?: Snapshot;
  revision?: Revision;
  loadedAt?: string;
  lastRejected?: RejectedRevision;
  lastError?: { at: string; message: string };
  /** Epoch ms the source last confirmed this reference (polled sources). */
  checkedAt?: number;
  /** Epoch ms of the last request naming it (idle eviction). */
  lastUsedAt: number;
  /** Came from `source.lookup` (a commit id): immutable, never refreshed. */
  pinned?: boolean;
  /** The poll generation of the last failure: a reference never built is not tried again on request before the next poll. */
  failedInPoll?: number;
}

export interface RefTable {
  /** The reference served when a request names none. */
  readonly defaultReference: string;
  /** `ref`, or the default reference when it is absent or empty. */
  keyOf(ref: string | undefined): string;
  get(ref: string): RefState | undefined;
  has(ref: string): boolean;
  /** The entry of `ref`, made (last used now) when there is none. */
  stateOf(ref: string): RefState;
  delete(ref: string): void;
  names(): IterableIterator<string>;
  /** Live entries: deleting the current one while iterating is allowed. */
  entries(): IterableIterator<[string, RefState]>;
  /** Built on every refresh: the default reference and those matching a `prebuild` glob. */
  isPrebuilt(ref: string): boolean;
}

export interface RefTableOptions {
  readonly defaultReference: string;
  /** Globs (`*` matches any characters) of references built on every refresh. */
  readonly prebuild: readonly string[];
  /** Epoch ms now. */
  readonly nowMs: () => number;
}

export function createRefTable(opts: RefTableOptions): RefTable {
  const { defaultReference, prebuild, nowMs } = opts;
  const refs = new Map<string, RefState>();
  return {
    defaultReference,
    keyOf: (ref) => (ref === undefined || ref === '' ? defaultReference : ref),
    get: (ref) => refs.get(ref),
    has: (ref) => refs.has(ref),
    stateOf(ref) {
      let st = refs.get(ref);
      if (st === undefined) {
        st = { lastUsedAt: nowMs() };
        refs.set(ref, st);
      }
      return st;
    },
    delete(ref) {
      refs.delete(ref);
    },
    names: () => refs.keys(),
    entries: () => refs.entries(),
    isPrebuilt: (ref) => ref === defaultReference || prebuild.some((p) => globMatch(p, ref)),
  };
}
