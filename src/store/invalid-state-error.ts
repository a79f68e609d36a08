/** A build that produced located problems instead of a snapshot (what makes `vexil serve` exit 1). */
import type { ExcerptedProblem } from '../state/excerpt.js';

export class InvalidStateError extends Error {
  readonly reference: string;
  readonly revision: string;
  /** As RejectedRevision's: the first 50 located ones carry the lines they point at. */
  readonly problems: readonly ExcerptedProblem[];

  constructor(reference: string, revision: string, problems: readonly ExcerptedProblem[]) {
    const errors = problems.filter((p) => p.severity === 'error').length;
    super(`state of reference "${reference}" at revision ${revision} is invalid: ${errors} error(s)`);
    this.name = 'InvalidStateError';
    this.reference = reference;
    this.revision = revision;
    this.problems = problems;
  }
}
