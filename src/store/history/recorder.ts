/**
 * What the snapshot store calls when a reference starts serving a revision or a revision is
 * rejected (build-revision.ts): turns the outcome into a history event and writes it, awaited
 * before the store swaps the snapshot in and logs it, so a swap that is logged is recorded.
 *
 * Who writes: replicas that coordinate record under the scope `cluster`, and a follower (which only
 * builds what the leader already recorded) does not write at all; the store's duplicate check makes
 * the rest (a leader handing over, replicas restarting) one row. Replicas that do not coordinate
 * record under their own instance id.
 *
 * A history store that fails (PostgreSQL down, a full disk) never stops serving: the failure is
 * logged and the swap goes on unrecorded.
 *
 * Listeners (`onRecorded`, the change notifications of ../notifications/) hear of each event this
 * recorder wrote, with the snapshots the store passed: only new events (not a restart serving what
 * is recorded, not a follower), so what the history records once per cluster is announced once.
 * They are called without being awaited: their work never delays a swap.
 */
import type { Snapshot } from '../../model/snapshot.js';
import type { Revision } from '../../sources/types.js';
import type { RejectedRevision, StoreLogger } from '../types.js';
import { MAX_PROBLEMS, type HistoryRetention, type HistoryStore, type NewHistoryEvent } from './types.js';

/** The scope of a cluster's records (replicas that coordinate). */
export const CLUSTER_SCOPE = 'cluster';

/** An event the recorder wrote, as its listeners hear it. */
export type RecordedEvent =
  | {
      readonly kind: 'served';
      readonly reference: string;
      readonly revision: Revision;
      readonly at: number;
      /** What the reference served before, when this process had it (absent on a first build). */
      readonly previous?: Snapshot;
      /** The revision served before: the previous snapshot's, else the history's (a first build after a restart). */
      readonly previousRevision?: string;
      readonly next?: Snapshot;
    }
  | { readonly kind: 'rejected'; readonly reference: string; readonly rejected: RejectedRevision; readonly at: number; readonly previous?: Snapshot };

export interface HistoryRecorder {
  served(reference: string, revision: Revision, atMs: number, snapshots?: { readonly previous?: Snapshot; readonly next: Snapshot }): Promise<void>;
  rejected(reference: string, rejected: RejectedRevision, previous?: Snapshot): Promise<void>;
  /** Calls `listener` (not awaited; a failure is logged) after each event written from now on. */
  onRecorded(listener: (e: RecordedEvent) => void | Promise<void>): void;
  /** Coordinated replicas: whether this one follows now (then it writes nothing). */
  followsWith(isFollower: () => boolean): void;
}

export interface HistoryRecorderOptions {
  readonly store: HistoryStore;
  /** CLUSTER_SCOPE when replicas coordinate, else this replica's instance id. */
  readonly scope: string;
  readonly retention: HistoryRetention;
  readonly logger: StoreLogger;
}

function revisionFields(revision: Revision) {
  const meta = revision.meta;
  return {
    revision: revision.id,
    ...(meta?.author !== undefined ? { author: meta.author } : {}),
    ...(meta?.message !== undefined ? { message: meta.message } : {}),
    ...(meta?.at !== undefined ? { committedAt: meta.at } : {}),
  };
}

export function createHistoryRecorder(opts: HistoryRecorderOptions): HistoryRecorder {
  const { store, scope, retention, logger } = opts;
  let isFollower = () => false;
  const listeners: Array<(e: RecordedEvent) => void | Promise<void>> = [];

  /** The served entry before the one just written for `reference`, from the history (none when it cannot be read). */
  async function previousServed(reference: string, revision: string): Promise<{ previousRevision?: string }> {
    try {
      const entries = await store.list(scope, { reference, limit: 20 });
      const before = entries.find((x) => x.kind === 'served' && x.revision !== revision);
      return before !== undefined ? { previousRevision: before.revision } : {};
    } catch {
      return {};
    }
  }

  async function write(e: NewHistoryEvent, heard: RecordedEvent): Promise<void> {
    if (isFollower()) return;
    let written = false;
    try {
      written = await store.record(scope, e, retention);
    } catch (err) {
      logger.error(
        { reference: e.reference, revision: e.revision, kind: e.kind, err: err instanceof Error ? err.message : String(err) },
        'recording the revision in the history failed; serving on',
      );
    }
    if (!written || listeners.length === 0) return;
    // Not awaited: the swap goes on while the previous revision is looked up.
    const ready: Promise<RecordedEvent> =
      heard.kind === 'served' && heard.previous === undefined ? previousServed(e.reference, e.revision).then((p) => ({ ...heard, ...p })) : Promise.resolve(heard);
    for (const listener of listeners) {
      ready
        .then((h) => listener(h))
        .catch((err: unknown) => logger.error({ reference: e.reference, revision: e.revision, err: err instanceof Error ? err.message : String(err) }, 'a history listener failed'));
    }
  }

  return {
    served: (reference, revision, atMs, snapshots) =>
      write(
        { kind: 'served', reference, ...revisionFields(revision), at: atMs },
        { kind: 'served', reference, revision, at: atMs, ...(snapshots?.previous !== undefined ? { previous: snapshots.previous } : {}), ...(snapshots !== undefined ? { next: snapshots.next } : {}) },
      ),
    rejected: (reference, rejected, previous) =>
      write({
        kind: 'rejected',
        reference,
        ...revisionFields(rejected.revision),
        at: Date.parse(rejected.at),
        problems: rejected.problems.slice(0, MAX_PROBLEMS).map((p) => ({
          severity: p.severity,
          rule: p.rule,
          file: p.file,
          line: p.line,
          column: p.column,
          message: p.message,
        })),
        problemCount: rejected.problems.length,
      }, { kind: 'rejected', reference, rejected, at: Date.parse(rejected.at), ...(previous !== undefined ? { previous } : {}) }),
    onRecorded(listener) {
      listeners.push(listener);
    },
    followsWith(fn) {
      isFollower = fn;
    },
  };
}
