/** One case of a flag test file (`*.test.yml`, the index's `tests:`), as read from the state. */
import type { EvaluationReason } from '../../model/evaluation-result.js';

/** What a case compares; only the fields given. `reason` is always the long form here. */
export interface Expectation {
  readonly variant?: string;
  readonly match?: boolean;
  readonly enabled?: boolean;
  readonly reason?: EvaluationReason;
  readonly segments?: readonly string[];
  /** Compared as data with the parsed variantAttachment. */
  readonly attachment?: unknown;
}

export interface TestCase {
  /** The test file as the user would type it. */
  readonly file: string;
  /** Where the case starts in the file (1-based). */
  readonly line: number;
  readonly column: number;
  /** Position in its file's `tests` list (0-based). */
  readonly index: number;
  readonly name: string;
  readonly namespace: string;
  readonly flag: string;
  readonly entity: string;
  readonly context: Readonly<Record<string, string>>;
  readonly expect: Expectation;
}
