/** What every page may read: the reference browsed and the server's references. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiError } from './api.js';
import type { Snapshots } from './types.js';

export interface AppContextValue {
  /** The reference in the address (`ref`), undefined for the server's default. */
  reference: string | undefined;
  /** `/meta/snapshots`, refreshed on navigation; undefined until first loaded. */
  snapshots: Snapshots | undefined;
  /** Why the last read of `/meta/snapshots` failed (cleared by the next good one). */
  snapshotsError: ApiError | undefined;
  reloadSnapshots(): void;
}

export const AppContext = createContext<AppContextValue>({ reference: undefined, snapshots: undefined, snapshotsError: undefined, reloadSnapshots: () => {} });

export function useApp(): AppContextValue {
  return useContext(AppContext);
}
