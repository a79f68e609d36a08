/** The one snapshot a request reads, resolved once at the start of the handler. */
import type { ParameterizedContext } from 'koa';
import type { Snapshot } from '../../model/snapshot.js';
import type { SnapshotStore } from '../../store/types.js';
import type { AppState } from '../../http/context.js';

declare module '../../http/context.js' {
  interface AppState {
    /** The snapshot the request read, once resolved (one per request). */
    snapshot?: Snapshot;
  }
}

/** `reference` absent or "" reads the default reference; the store throws NotFound for an unknown one. */
export async function readSnapshot(
  ctx: ParameterizedContext<AppState>,
  store: SnapshotStore,
  reference: string | undefined,
): Promise<Snapshot> {
  const snapshot = await store.resolve(reference === undefined || reference === '' ? undefined : reference);
  ctx.state.snapshot = snapshot;
  return snapshot;
}
