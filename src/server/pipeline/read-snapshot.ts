/** The one snapshot a request reads, resolved once at the start of the handler. */
import type { ParameterizedContext } from 'koa';
import { notFound } from '../../errors.js';
import type { Snapshot } from '../../model/snapshot.js';
import type { SnapshotStore } from '../../store/types.js';
import type { AppState } from '../../http/context.js';
import { namespaceView, type NamespaceView } from '../management/answer.js';

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

export function namespaceOr404(snapshot: Snapshot, key: string): NamespaceView {
  const view = namespaceView(snapshot, key);
  if (!view) throw notFound(`namespace "${key}" not found`);
  return view;
}
