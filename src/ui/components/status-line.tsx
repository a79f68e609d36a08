/** Loading and error states of a page, announced to screen readers. */
import type { ApiError } from '../api.js';

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function ErrorBox({ error }: { error: ApiError }) {
  return (
    <div class="error-box" role="alert">
      <strong>{error.status === 404 ? 'Not found' : error.status === 0 ? 'No connection' : `Error ${error.status}`}</strong>: {error.message}
    </div>
  );
}
