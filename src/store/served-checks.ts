/**
 * The semantic checks (state/checks/) of the snapshots a store serves, for `GET .../checks` and the
 * UI's flag page. They are never computed by a build or on a request's evaluation path: on the first
 * ask for a snapshot, then kept with it (a WeakMap: they go when the snapshot goes) for the clock
 * hour they were computed in, since the lifecycle and request-time checks depend on "today".
 *
 * The computation is the one `vexil validate` runs: read-state.ts with `checks` over the snapshot's
 * revision, its files read again from the source and loaded through the store's parse and build
 * caches (unchanged files are not parsed again; the files with findings get their positions). It
 * runs as a job of the build queue's demand lane, so it never overlaps a build, a poll goes first,
 * and at most one runs at a time; concurrent asks for one snapshot share one computation.
 *
 * Policy: the snapshot's own policy file (`.vexil/policy.yml`, kept with it by state-policy.ts)
 * gives its demands (per-rule severities, metadata and key patterns), as in `vexil validate`;
 * without one, or when it does not parse, the checks run with the catalogue's severities (the
 * policy's problems are answered by the guards' users, `GET /api/v1/diff?policy=true`).
 */
import { Code, VexilError, stateMovedOn } from '../errors.js';
import type { Snapshot } from '../model/snapshot.js';
import type { Revision, Source } from '../sources/types.js';
import type { LocatedCheck } from '../state/load.js';
import { applySeverities } from '../state/policy/apply-severities.js';
import type { Policy } from '../state/policy/policy-file.js';
import type { BuildQueue } from './build-queue.js';
import type { GenerationalParseCache } from './parse-cache.js';
import { readState } from './read-state.js';
import { statePolicyOf } from './state-policy.js';
import type { RefTable } from './ref-table.js';
import { backendUnavailable } from './refusals.js';
import type { ServedChecks } from './types.js';

export type { ServedChecks } from './types.js';

export interface ServedChecksOptions {
  readonly source: Source;
  readonly refs: RefTable;
  readonly queue: BuildQueue;
  readonly parseCache: GenerationalParseCache;
  readonly now: () => Date;
  readonly maxFileSize: number;
  readonly maxStateSize: number;
  /** Retry-After (ms) of a refusal when the backend cannot be read. */
  readonly retryAfterMs: () => number;
}

export interface ServedChecksTable {
  /**
   * The checks of `snapshot` (a snapshot this store served). Throws VexilError Unavailable when the
   * source cannot be read or no longer holds the snapshot's revision (a local folder that changed:
   * the new state is being built), Internal when the revision does not load again.
   */
  of(snapshot: Snapshot): Promise<ServedChecks>;
}

const HOUR_MS = 3_600_000;

/** The policy file kept with `snapshot`, when it has one that parsed. */
function ownPolicy(snapshot: Snapshot): Policy | undefined {
  const kept = statePolicyOf(snapshot);
  return kept !== undefined && 'policy' in kept ? kept.policy : undefined;
}

export function createServedChecks(opts: ServedChecksOptions): ServedChecksTable {
  const kept = new WeakMap<Snapshot, { readonly hour: number; readonly result: Promise<ServedChecks> }>();

  async function compute(snapshot: Snapshot): Promise<ServedChecks> {
    const reference = snapshot.reference;
    const st = opts.refs.get(reference);
    const revision: Revision = st?.snapshot === snapshot && st.revision !== undefined ? st.revision : { id: snapshot.revision, ref: reference };
    const today = opts.now();
    const policy = ownPolicy(snapshot);
    let result;
    try {
      const fileSet = await opts.source.files(revision);
      if (fileSet.revision.id !== snapshot.revision) {
        throw stateMovedOn(reference, snapshot.revision);
      }
      result = await readState(fileSet, {
        reference,
        now: today,
        parseCache: opts.parseCache,
        buildCache: opts.parseCache.buildCache,
        maxFileSize: opts.maxFileSize,
        maxStateSize: opts.maxStateSize,
        testContexts: false,
        checks: { today, ...(policy !== undefined ? { policy } : {}), ...(policy?.timeProperties !== undefined ? { timeProperties: policy.timeProperties } : {}) },
      });
    } catch (err) {
      if (err instanceof VexilError) throw err;
      throw backendUnavailable(reference, err, opts.retryAfterMs());
    }
    if (result.snapshot === undefined) {
      throw new VexilError(Code.Internal, `revision ${snapshot.revision} of reference "${reference}" did not load again for its checks`);
    }
    const checks = result.checks ?? [];
    // applySeverities keeps each problem's other fields (it changes or drops, never rebuilds).
    const severities = policy?.severities;
    return {
      reference,
      revision: snapshot.revision,
      checkedAt: today.toISOString(),
      checks: severities !== undefined ? (applySeverities(checks, severities) as LocatedCheck[]) : checks,
    };
  }

  return {
    of(snapshot) {
      const hour = Math.floor(opts.now().getTime() / HOUR_MS);
      const hit = kept.get(snapshot);
      if (hit !== undefined && hit.hour === hour) return hit.result;
      const result = opts.queue.run('demand', () => compute(snapshot));
      kept.set(snapshot, { hour, result });
      // A failure is not kept: the next ask tries again.
      result.catch(() => {
        if (kept.get(snapshot)?.result === result) kept.delete(snapshot);
      });
      return result;
    },
  };
}
