/**
 * What `vexil serve` needs from a configured backend: the source, the reference policy that goes
 * with it, and a description for messages. Each backend's `from-config.ts` returns one.
 *
 * The reference policy is declared here, by the sources, as the part of the snapshot store's
 * options a backend's configuration may set; the store's options (store/) take these fields with
 * the same names and meanings, so `vexil serve` hands the policy to the store as it is. Declaring it
 * here keeps sources below the store: a backend never imports the store.
 */
import type { Source } from './types.js';

/** How the store treats the references of one backend, as its `storage.<backend>.*` keys set it. */
export interface ReferencePolicy {
  /** The reference served when a request names none. */
  readonly defaultReference?: string;
  /** For sources without `watch`: look for changes this often (ms). No polling when absent. */
  readonly pollIntervalMs?: number;
  /** Globs (`*` matches any characters) of references built on every refresh; default [defaultReference]. */
  readonly prebuild?: readonly string[];
  /** Other references are dropped after this long without a request. */
  readonly idleTtlMs: number;
  /** Polled sources: a reference not confirmed by the source for this long is reported `stale`. */
  readonly maxStalenessMs?: number;
  /** At most this many references built because a request named them are kept at once. */
  readonly maxReferences: number;
  /** At most this many on-demand builds wait or run at once. */
  readonly maxPendingBuilds: number;
  /** Whether a name the source does not list but can look up (a Git commit id) may be served. */
  readonly allowUnlistedReferences: boolean;
}

/**
 * The on-demand part of the policy of a backend that lists exactly one reference (its default,
 * which is prebuilt) and looks nothing up (local, oci, object): no other reference can be named,
 * so nothing is ever built on request or dropped for idleness, and these caps are never reached.
 */
export const ONE_REFERENCE: Pick<ReferencePolicy, 'idleTtlMs' | 'maxReferences' | 'maxPendingBuilds' | 'allowUnlistedReferences'> = Object.freeze({
  idleTtlMs: 0,
  maxReferences: 0,
  maxPendingBuilds: 1,
  allowUnlistedReferences: false,
});

export interface Storage {
  readonly source: Source;
  /** Default reference, polling, prebuild, eviction and staleness rules of this backend. */
  readonly store: ReferencePolicy;
  /** For messages and problem locations, without credentials (e.g. `<repository>@<ref>`, `s3://bucket/prefix`). */
  readonly description: string;
}

export interface StorageContext {
  /** Relative paths in the config resolve against this folder (the config file's, else the working directory). */
  readonly baseDir: string;
  /** Set in a cluster worker: backends with an on-disk cache keep one per worker. */
  readonly workerSlot?: number;
  /** The resolved data folder (config data_dir or the OS default). */
  readonly dataDir: string;
}
