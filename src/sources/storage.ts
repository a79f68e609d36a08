/**
 * What `vexil serve` needs from a configured backend: the source, the snapshot-store options that
 * go with it, and a description for messages. Each backend's `from-config.ts` returns one.
 */
import type { SnapshotStoreOptions } from '../store/snapshot-store.js';
import type { Source } from './types.js';

export interface Storage {
  readonly source: Source;
  /** Default reference, polling, prebuild, eviction and staleness rules of this backend. */
  readonly store: Pick<
    SnapshotStoreOptions,
    'defaultReference' | 'pollIntervalMs' | 'prebuild' | 'idleTtlMs' | 'maxStalenessMs' | 'maxReferences' | 'maxPendingBuilds' | 'allowUnlistedReferences'
  >;
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
