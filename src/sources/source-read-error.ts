/**
 * Thrown by `SourceFile.bytes()` when the backend, not the file, failed: the state reader lets it
 * through instead of turning it into a located problem on the file, so the whole read fails like
 * an unreachable backend (the last good snapshot stays served, the revision is tried again at the
 * next poll) and a revision is never quarantined for what was our own fault or a passing outage.
 */
export class SourceReadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SourceReadError';
  }
}
