/**
 * The store as the server sees it on a coordinated replica: the same snapshots, with the cluster
 * in the status (`clusterRevision`, `lagging`, `coordination()`), refreshes routed through the
 * coordinator (a follower asks the leader, so a webhook or `POST /meta/refresh` received by any
 * replica reaches all), and close leaving the cluster (leadership released) before the store
 * closes. Everything else is the store's own.
 */
import type { SnapshotStore } from '../types.js';
import type { Coordinator } from './coordinator.js';

export function coordinatedStore(store: SnapshotStore, coordinator: Coordinator): SnapshotStore {
  return {
    defaultReference: store.defaultReference,
    get: (ref) => store.get(ref),
    resolve: (ref) => store.resolve(ref),
    status: () => coordinator.decorate(store.status()),
    refresh: () => coordinator.refresh(),
    requestRefresh: (references) => coordinator.requestRefresh(references),
    ...(store.tracks !== undefined ? { tracks: (reference: string) => store.tracks!(reference) } : {}),
    isPinned: (ref) => store.isPinned(ref),
    ...(store.checks !== undefined ? { checks: (snapshot: Parameters<NonNullable<SnapshotStore['checks']>>[0]) => store.checks!(snapshot) } : {}),
    ...(store.lastChange !== undefined
      ? { lastChange: (...args: Parameters<NonNullable<SnapshotStore['lastChange']>>) => store.lastChange!(...args) }
      : {}),
    subscribe: (listener) => store.subscribe(listener),
    coordination: () => coordinator.status(),
    async close() {
      await coordinator.close();
      await store.close();
    },
  };
}
