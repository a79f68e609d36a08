/** A build that produced located problems instead of a snapshot (what makes `vexil serve` exit 1). */
import type { Problem } from '../state/problem.js';

export class InvalidStateError extends Error {
  readonly reference: string;
  readonly revision: string;
  readonly problems: readonly Problem[];

  constructor(reference: string, revision: string, problems: readonly Problem[]) {
    const errors = problems.filter((p) => p.severity === 'error').length;
    super(`state of reference "${reference}" at revision ${revision} is invalid: ${errors} error(s)`);
    this.name = 'InvalidStateError';
    this.reference = reference;
    this.revision = revision;
    this.problems = problems;
  }
}
