/**
 * The build of one revision of one reference: its files from the source, read and loaded
 * (read-state.ts, through the shared parse and build caches), then the outcome recorded in the ref
 * table. A valid snapshot is swapped in by a single assignment, announced (`swap`) and handed to
 * the matcher warm-up; an invalid one never replaces the served snapshot (last good wins): it is
 * kept as `lastRejected` with its located problems, the offending lines quoted, and announced
 * (`rejected`); a backend that cannot be read is recorded as `lastError` (`error`). At start there
 * is nothing to fall back on, so the first build throws instead of recording. With a history
 * (history/recorder.ts), a served or rejected revision of a tracked reference is written there
 * first: before the swap and the log line that announces it (a pinned commit, which a request named
 * by its id, is not: it never changes, and requests could otherwise flood the history).
 *
 * Bounds: one build at a time (callers run it in the build queue); the file texts of a rejected
 * revision are quoted here and not kept. Once the store is closed, a build abandoned by the source
 * closing records nothing and swaps nothing in.
 *
 * Each build is a `snapshot.build` span of the process's tracer (a no-op unless tracing is on),
 * with `vexil.reference` and `vexil.revision` and its outcome in `vexil.build.outcome`
 * (swapped, rejected, failed); the source's own spans (sources/traced-source.ts) are its children.
 */
import type { Revision, Source } from '../sources/types.js';
import { inSpan } from '../sources/traced-source.js';
import { withExcerpts } from '../state/excerpt.js';
import type { Snapshot } from '../model/snapshot.js';
import { InvalidStateError } from './invalid-state-error.js';
import type { MatcherWarmup } from './matcher-warmup.js';
import type { GenerationalParseCache } from './parse-cache.js';
import type { HistoryRecorder } from './history/recorder.js';
import { readState } from './read-state.js';
import type { RefTable } from './ref-table.js';
import { formatProblem } from './refusals.js';
import type { RejectedRevision, StoreEvent, StoreLogger } from './types.js';

export interface RevisionBuilder {
  /**
   * Reads and loads `rev`. On success swaps it in and returns it; otherwise records the rejection
   * (or, when `initial`, throws it: there is nothing to fall back on). `checkedAt`: when the source
   * confirmed `rev` (polled sources record it).
   */
  build(ref: string, rev: Revision, initial: boolean, checkedAt?: number): Promise<Snapshot | undefined>;
  /** A failed look at the backend for `ref`: kept as its lastError (the last good snapshot stays), logged, announced. */
  recordError(ref: string, message: string): void;
}

export interface RevisionBuilderOptions {
  readonly source: Source;
  readonly refs: RefTable;
  readonly parseCache: GenerationalParseCache;
  readonly warmup: MatcherWarmup;
  readonly logger: StoreLogger;
  readonly emit: (e: StoreEvent) => void;
  /** Build time of snapshots and status timestamps. */
  readonly now: () => Date;
  /** Whether the source is polled (then `checkedAt` is recorded). */
  readonly polled: boolean;
  readonly maxFileSize: number;
  readonly maxStateSize: number;
  readonly isClosed: () => boolean;
  /** The poll generation now (refresh.ts): a failure records it. */
  readonly pollGeneration: () => number;
  /** Where served and rejected revisions are recorded (awaited before the swap and its log line). */
  readonly history?: HistoryRecorder;
}

export function createRevisionBuilder(opts: RevisionBuilderOptions): RevisionBuilder {
  const { source, refs, parseCache, warmup, logger, emit, now, polled, isClosed } = opts;

  function recordError(ref: string, message: string): void {
    if (isClosed()) return; // backend work abandoned by close(): not a backend fault
    const at = now().toISOString();
    const st = refs.stateOf(ref);
    st.lastError = { at, message };
    st.failedInPoll = opts.pollGeneration();
    logger.error({ reference: ref, err: message }, 'reading state failed; still serving the last good snapshot');
    emit({ type: 'error', reference: ref, message });
  }

  function build(ref: string, rev: Revision, initial: boolean, checkedAt?: number): Promise<Snapshot | undefined> {
    return inSpan('snapshot.build', { 'vexil.reference': ref, 'vexil.revision': rev.id }, async (span) => {
      const snapshot = await buildRevision(ref, rev, initial, checkedAt);
      span.setAttribute('vexil.build.outcome', snapshot !== undefined ? 'swapped' : refs.stateOf(ref).lastError !== undefined ? 'failed' : 'rejected');
      if (snapshot !== undefined) span.setAttribute('vexil.revision', snapshot.revision);
      return snapshot;
    });
  }

  async function buildRevision(ref: string, rev: Revision, initial: boolean, checkedAt?: number): Promise<Snapshot | undefined> {
    const started = performance.now();
    const st = refs.stateOf(ref);
    let result;
    let revision = rev;
    try {
      const fileSet = await source.files(rev);
      revision = fileSet.revision;
      result = await readState(fileSet, {
        reference: ref,
        now: now(),
        parseCache,
        buildCache: parseCache.buildCache,
        maxFileSize: opts.maxFileSize,
        maxStateSize: opts.maxStateSize,
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (initial) throw err;
      recordError(ref, message);
      return undefined;
    }
    if (isClosed() && !initial) return undefined;
    const at = now().toISOString();
    st.lastError = undefined;
    if (polled && checkedAt !== undefined) st.checkedAt = checkedAt;
    if (result.snapshot === undefined) {
      // The offending lines, quoted while the file texts are at hand (they are not kept after).
      const problems = result.sourceText !== undefined ? withExcerpts(result.problems, result.sourceText) : result.problems;
      const rejected: RejectedRevision = { revision, at, problems };
      if (initial) throw new InvalidStateError(ref, revision.id, problems);
      // A pinned commit (a request naming a commit id) is no tracked reference: not history.
      if (opts.history !== undefined && st.pinned !== true) {
        await opts.history.rejected(ref, rejected, st.snapshot);
        if (isClosed()) return undefined;
      }
      st.lastRejected = rejected;
      logger.warn(
        { reference: ref, revision: revision.id, problems: result.problems.map(formatProblem) },
        'state change rejected; still serving the last good snapshot',
      );
      emit({ type: 'rejected', reference: ref, rejected });
      return undefined;
    }
    const snapshot = result.snapshot;
    if (opts.history !== undefined && st.pinned !== true) {
      await opts.history.served(ref, revision, Date.parse(at), { ...(st.snapshot !== undefined ? { previous: st.snapshot } : {}), next: snapshot });
      if (isClosed() && !initial) return undefined;
    }
    st.snapshot = snapshot;
    st.revision = revision;
    st.loadedAt = at;
    st.lastRejected = undefined;
    const durationMs = performance.now() - started;
    logger.info({ reference: ref, revision: revision.id, durationMs: Math.round(durationMs * 10) / 10 }, 'snapshot loaded');
    if (snapshot.warnings.length > 0) {
      logger.warn({ reference: ref, revision: revision.id, problems: snapshot.warnings.map(formatProblem) }, 'state loaded with warnings');
    }
    // After st.snapshot is set: a listener that tells clients to read again (the stream hub)
    // must find the new snapshot served when it does (StoreEvent 'swap', types.ts).
    emit({ type: 'swap', reference: ref, snapshot, durationMs });
    warmup.add(snapshot);
    return snapshot;
  }

  return { build, recordError };
}
