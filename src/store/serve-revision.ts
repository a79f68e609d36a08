/**
 * The store's entry for a cluster follower (src/store/coordination/): serve exactly revision R of
 * reference X, as another replica found it, without looking at the source's listing. The build is
 * the usual one (build-revision.ts: read, load, swap in or record the rejection, announce), queued
 * in the build queue's poll lane so it never overlaps a refresh. Also: mark a reference confirmed
 * when the cluster vouches for the revision it serves (a follower does not list the source, so
 * its staleness is counted from what the cluster confirmed), and list what each reference serves.
 *
 * Bounds: only references this store already keeps, or prebuilt ones, are built (a notification
 * never makes the store keep a reference nobody asked for); a revision already served or already
 * rejected is not read again; a pinned commit never moves.
 */
import type { RevisionBuilder } from './build-revision.js';
import type { BuildQueue } from './build-queue.js';
import type { RefTable } from './ref-table.js';

/** What `serveRevision` did. */
export type ServeOutcome =
  /** The revision is now served. */
  | 'served'
  /** It was served already. */
  | 'current'
  /** This store keeps no such reference and does not prebuild it: nothing read. */
  | 'untracked'
  /** Invalid (kept as lastRejected, last good stays) or unreadable (lastError); see the status. */
  | 'refused';

export interface RevisionEntry {
  /** Builds `revisionId` of `ref` and swaps it in (serialized with refreshes and other builds). */
  serveRevision(ref: string, revisionId: string): Promise<ServeOutcome>;
  /** Records that the cluster confirmed `ref` at `revisionId` at `atMs`, when that is what this store serves. */
  confirm(ref: string, revisionId: string, atMs: number): void;
  /** The revision id each kept reference serves (undefined: not built yet). */
  served(): Map<string, string | undefined>;
}

export interface RevisionEntryOptions {
  readonly refs: RefTable;
  readonly builder: RevisionBuilder;
  readonly queue: BuildQueue;
  /** Whether the source is polled (then `checkedAt` is recorded). */
  readonly polled: boolean;
  readonly isClosed: () => boolean;
  /** Epoch ms now. */
  readonly nowMs: () => number;
}

export function createRevisionEntry(opts: RevisionEntryOptions): RevisionEntry {
  const { refs, builder, queue, polled, isClosed, nowMs } = opts;

  async function buildIt(ref: string, revisionId: string): Promise<ServeOutcome> {
    if (isClosed()) return 'untracked';
    const st = refs.get(ref);
    if (st === undefined && !refs.isPrebuilt(ref)) return 'untracked';
    if (st?.pinned === true) return 'current';
    if (st?.revision?.id === revisionId) return 'current';
    if (st?.lastRejected?.revision.id === revisionId) return 'refused';
    const snapshot = await builder.build(ref, { id: revisionId, ref }, false, nowMs());
    return snapshot !== undefined ? 'served' : 'refused';
  }

  return {
    serveRevision: (ref, revisionId) => queue.run('poll', () => buildIt(ref, revisionId)),
    confirm(ref, revisionId, atMs) {
      const st = refs.get(ref);
      if (!polled || st === undefined || st.revision?.id !== revisionId) return;
      if (st.checkedAt === undefined || st.checkedAt < atMs) st.checkedAt = atMs;
    },
    served() {
      const out = new Map<string, string | undefined>();
      for (const [ref, st] of refs.entries()) out.set(ref, st.revision?.id);
      return out;
    },
  };
}
