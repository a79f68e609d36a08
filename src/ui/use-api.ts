/** Loads one API resource for a component; reloads when `path` changes, ignores stale answers. */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from './api.js';

export type Loaded<T> = { state: 'loading' } | { state: 'error'; error: ApiError } | { state: 'ok'; data: T };

export function useApi<T>(path: string | undefined): Loaded<T> {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  useEffect(() => {
    if (path === undefined) return;
    const ctl = new AbortController();
    setLoaded({ state: 'loading' });
    api<T>(path, { signal: ctl.signal }).then(
      (data) => setLoaded({ state: 'ok', data }),
      (err: unknown) => {
        if (ctl.signal.aborted) return;
        setLoaded({ state: 'error', error: err instanceof ApiError ? err : new ApiError(0, undefined, String(err)) });
      },
    );
    return () => ctl.abort();
  }, [path]);
  return loaded;
}
