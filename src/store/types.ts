/**
 * The store's shapes seen from outside: the SnapshotStore the server reads, the status rows
 * (/meta/snapshots, /ready), the events it announces (metrics, logs, streams) and the logger it
 * takes. Types only; the store itself is snapshot-store.ts.
 */
import type { Snapshot } from '../model/snapshot.js';
import type { ExcerptedProblem } from '../state/excerpt.js';
import type { Revision } from '../sources/types.js';
import type { LocatedCheck } from '../state/load.js';


/** The subset of a pino logger the store uses. */
export interface StoreLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface RejectedRevision {
  readonly revision: Revision;
  /** RFC 3339. */
  readonly at: string;
  /** Sorted by file, line, column; the first 50 located ones carry the lines they point at. */
  readonly problems: readonly ExcerptedProblem[];
}

export interface RefStatus {
  readonly reference: string;
  /** Revision currently served (undefined until a first good build). */
  readonly revision?: Revision;
  /** RFC 3339 time the served snapshot was swapped in. */
  readonly loadedAt?: string;
  /** The last revision that failed to load (while it is newer than the one served). */
  readonly lastRejected?: RejectedRevision;
  /** A fetch/IO error from the last attempt (backend down, auth refused...). */
  readonly lastError?: { readonly at: string; readonly message: string };
  /** Polled sources: RFC 3339 time the backend last confirmed what this reference points at. */
  readonly checkedAt?: string;
  /** Set when the reference has not been confirmed for longer than the store's max staleness: why. */
  readonly stale?: string;
  /** Coordinated replicas: the revision the cluster's leader published for this reference. */
  readonly clusterRevision?: string;
  /** Coordinated replicas with `max_lag`: set (why) while this replica has served another revision than the cluster's for longer. */
  readonly lagging?: string;
}

/** `/meta/snapshots`' `coordination`: how this replica takes part in the cluster. */
export interface CoordinationStatus {
  readonly type: 'postgres' | 'redis';
  /** leader: polls the source and publishes; follower: builds what the leader publishes; standalone: polls on its own (engine unreachable). */
  readonly role: 'leader' | 'follower' | 'standalone';
  /** Whether the engine answers. */
  readonly healthy: boolean;
}

export type StoreEvent =
  /**
   * `snapshot` is served from now on: emitted only once get() and resolve() of the reference
   * return it, so a listener that tells clients to read again (the stream hub) never tells them
   * before the new state can be read.
   */
  | { readonly type: 'swap'; readonly reference: string; readonly snapshot: Snapshot; readonly durationMs: number }
  | { readonly type: 'rejected'; readonly reference: string; readonly rejected: RejectedRevision }
  | { readonly type: 'error'; readonly reference: string; readonly message: string }
  /** The reference is no longer kept (idle, or gone from the source): its metric series go too. */
  | { readonly type: 'dropped'; readonly reference: string };

/** The semantic checks of one served snapshot (served-checks.ts). */
export interface ServedChecks {
  readonly reference: string;
  /** The revision id of the snapshot checked. */
  readonly revision: string;
  /** RFC 3339: the "today" the date-dependent checks were computed with. */
  readonly checkedAt: string;
  /** Sorted by file, line, column. */
  readonly checks: readonly LocatedCheck[];
}

/** The newest commit that changed one flag's definition (last-change.ts), or why it is not known. */
export type LastChange =
  | {
      readonly revision: string;
      /** Its first parent (the diff's base); absent for a root commit. */
      readonly parent?: string;
      /** `Name <email>`. */
      readonly author: string;
      readonly message: string;
      /** RFC 3339. */
      readonly committedAt: string;
    }
  | { readonly revision: null; readonly reason: string };

export interface SnapshotStore {
  /** The reference served when a request names none. */
  readonly defaultReference: string;
  /** The current snapshot of a built reference; never waits for I/O. */
  get(ref?: string): Snapshot | undefined;
  /**
   * Builds an unbuilt reference on demand; throws VexilError NotFound `reference "<ref>" not found`,
   * FailedPrecondition when it has no valid state, Unavailable (with Retry-After) when the backend
   * cannot be read or the caps on references built on request are reached.
   */
  resolve(ref?: string): Promise<Snapshot>;
  status(): RefStatus[];
  /**
   * Whether `ref` is a pinned commit: a revision the source looked up by its id (not a branch, tag
   * or the default reference), whose snapshot never changes and is never refreshed.
   */
  isPinned(ref: string): boolean;
  /** Look at the backend now and rebuild what changed; resolves when done. */
  refresh?(): Promise<void>;
  /**
   * Asks for a look at the backend for `references` (undefined: every tracked one), coalesced
   * with other asks and at most one look a second per reference (refresh-gate.ts); resolves once
   * a look started after the ask has covered them.
   */
  requestRefresh?(references?: readonly string[]): Promise<void>;
  /** Whether a refresh would look at `reference`: it is kept (built, or being built) or prebuilt. */
  tracks?(reference: string): boolean;
  /** Listen to swaps, rejections and errors (metrics, logs). Returns an unsubscribe function. */
  subscribe(listener: (event: StoreEvent) => void): () => void;
  /**
   * The semantic checks of a snapshot this store served (served-checks.ts): computed on first ask,
   * off the evaluation path, and kept with the snapshot.
   */
  checks?(snapshot: Snapshot): Promise<ServedChecks>;
  /**
   * The newest commit that changed a flag's definition, from the first-parent history of the
   * snapshot's revision (last-change.ts); `revision: null` with a reason when not found or the
   * source keeps no history. 404 when the snapshot lacks the flag.
   */
  lastChange?(snapshot: Snapshot, namespace: string, flagKey: string): Promise<LastChange>;
  /** Coordinated replicas only (cluster.coordination). */
  coordination?(): CoordinationStatus;
  close(): Promise<void>;
}
