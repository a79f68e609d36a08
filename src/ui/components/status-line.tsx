/**
 * Loading and error states of a page, announced to screen readers. A reference with no valid
 * state (the store's 400) is said in words with a link to its Status entry, not as a bare code;
 * the server lists such a reference once this request has tried to build it, so the status is
 * read again then and the truth banner above the page says it too.
 */
import { useEffect, useRef } from 'preact/hooks';
import type { ApiError } from '../api.js';
import { useApp } from '../context.js';
import { noValidStateReference, statusHref } from '../lib/reference-truth.js';
import { Link } from '../router.js';

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function ErrorBox({ error }: { error: ApiError }) {
  const invalid = noValidStateReference(error);
  const { snapshots, reloadSnapshots } = useApp();
  const listed = invalid !== undefined && snapshots?.references.some((r) => r.reference === invalid && r.lastRejected !== undefined) === true;
  const reread = useRef<string | undefined>(undefined);
  useEffect(() => {
    // Once per reference: a server that does not list it (yet) is not asked in a loop.
    if (invalid === undefined || listed || reread.current === invalid) return;
    reread.current = invalid;
    reloadSnapshots();
  }, [invalid, listed, reloadSnapshots]);
  if (invalid !== undefined) {
    return (
      <div class="error-box" role="alert">
        <p>
          <strong>{invalid} has no valid state</strong>: vexil rejected its commits and never served a valid one, so there is nothing to show. The
          server said: {error.message}
        </p>
        <p>
          <Link href={statusHref(invalid)}>See why on the Status page</Link> (the rejected commit, who pushed it and each problem), or choose
          another reference.
        </p>
      </div>
    );
  }
  return (
    <div class="error-box" role="alert">
      <strong>{error.status === 404 ? 'Not found' : error.status === 0 ? 'No connection' : `Error ${error.status}`}</strong>: {error.message}
    </div>
  );
}
