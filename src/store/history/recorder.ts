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
 */
import type { Revision } from '../../sources/types.js';
import type { RejectedRevision, StoreLogger } from '../types.js';
import { MAX_PROBLEMS, type HistoryRetention, type HistoryStore, type NewHistoryEvent } from './types.js';

/** The scope of a cluster's records (replicas that coordinate). */
export const CLUSTER_SCOPE = 'cluster';

export interface HistoryRecorder {
  served(reference: string, revision: Revision, atMs: number): Promise<void>;
  rejected(reference: string, rejected: RejectedRevision): Promise<void>;
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

  async function write(e: NewHistoryEvent): Promise<void> {
    if (isFollower()) return;
    try {
      await store.record(scope, e, retention);
    } catch (err) {
      logger.error(
        { reference: e.reference, revision: e.revision, kind: e.kind, err: err instanceof Error ? err.message : String(err) },
        'recording the revision in the history failed; serving on',
      );
    }
  }

  return {
    served: (reference, revision, atMs) => write({ kind: 'served', reference, ...revisionFields(revision), at: atMs }),
    rejected: (reference, rejected) =>
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
      }),
    followsWith(fn) {
      isFollower = fn;
    },
  };
}
