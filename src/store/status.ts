/**
 * The store's status rows (`/meta/snapshots`, `/ready`): one per reference kept, the default one
 * first, then by name, each with its served revision and load time, its last rejected revision and
 * last backend error, when the source last confirmed it, and whether it is stale. A reference of a
 * polled store with `maxStalenessMs` is stale once the source has not confirmed it for longer
 * (counted from start when never confirmed; a pinned commit never is). The staleness reason is
 * public (/ready), so it names no host or port: the error itself is only in lastError.
 *
 * Read-only over the ref table; owns only the start time staleness counts from.
 */
import type { RefState, RefTable } from './ref-table.js';
import type { RefStatus } from './types.js';

export interface StoreStatus {
  /** Staleness of a reference never confirmed counts from now. */
  markStarted(): void;
  rows(): RefStatus[];
}

export interface StoreStatusOptions {
  readonly refs: RefTable;
  /** Whether the source is polled (staleness applies to polled stores only). */
  readonly polled: boolean;
  /** A reference not confirmed by the source for this long is reported `stale`. */
  readonly maxStalenessMs?: number;
  /** Epoch ms now. */
  readonly nowMs: () => number;
}

export function createStoreStatus(opts: StoreStatusOptions): StoreStatus {
  const { refs, polled, maxStalenessMs, nowMs } = opts;
  const { defaultReference } = refs;
  let startedAt = nowMs();

  /** Why `ref` counts as stale (polled stores with maxStalenessMs only). */
  function staleness(ref: string, st: RefState, at: number): string | undefined {
    if (!polled || maxStalenessMs === undefined || st.pinned === true) return undefined;
    const since = st.checkedAt ?? startedAt;
    const age = at - since;
    if (age <= maxStalenessMs) return undefined;
    // Public (/ready): the error itself (hosts, ports) is only in lastError, which /meta/snapshots shows.
    const why = st.lastError !== undefined ? ': the state backend could not be read (lastError in /meta/snapshots)' : '';
    return (
      `reference "${ref}" has not been confirmed by the source for ${formatAge(age)} ` +
      `(limit ${formatAge(maxStalenessMs)})${why}`
    );
  }

  return {
    markStarted() {
      startedAt = nowMs();
    },
    rows(): RefStatus[] {
      const names = [...refs.names()].sort((a, b) =>
        a === defaultReference ? -1 : b === defaultReference ? 1 : a < b ? -1 : a > b ? 1 : 0,
      );
      const at = nowMs();
      return names.map((reference) => {
        const st = refs.get(reference) as RefState;
        const stale = staleness(reference, st, at);
        return {
          reference,
          ...(st.revision !== undefined ? { revision: st.revision } : {}),
          ...(st.loadedAt !== undefined ? { loadedAt: st.loadedAt } : {}),
          ...(st.lastRejected !== undefined ? { lastRejected: st.lastRejected } : {}),
          ...(st.lastError !== undefined ? { lastError: st.lastError } : {}),
          ...(st.checkedAt !== undefined ? { checkedAt: new Date(st.checkedAt).toISOString() } : {}),
          ...(stale !== undefined ? { stale } : {}),
        };
      });
    },
  };
}

/** `6m5s`, `45s`, `2h0m`: for status messages. */
function formatAge(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60}s`;
  return `${Math.floor(m / 60)}h${m % 60}m`;
}
