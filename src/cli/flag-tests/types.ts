/** The shapes `vexil test` passes between reading test files, running cases and reporting. */
import type { Explanation } from '../../evaluation/explain.js';
import type { EvaluationReason } from '../../model/evaluation-result.js';
import type { Expectation, TestCase } from '../../state/flag-tests/test-case.js';
import type { Problem } from '../../model/problem.js';

// A case as read from the state, shared with the server (src/store/test-contexts.ts).
export type { Expectation, TestCase } from '../../state/flag-tests/test-case.js';

/** The result in the vocabulary of `expect`. */
export type Actual =
  | {
      readonly type: 'variant';
      readonly variant: string;
      readonly match: boolean;
      readonly reason: EvaluationReason;
      readonly segments: readonly string[];
      readonly attachment: unknown;
    }
  | { readonly type: 'boolean'; readonly enabled: boolean; readonly reason: EvaluationReason; readonly segments: readonly string[] };

export interface Mismatch {
  readonly field: keyof Expectation;
  readonly expected: unknown;
  readonly actual: unknown;
}

/**
 * passed: every expectation held. failed: an expectation did not hold, or the flag/namespace is
 * missing, or the expectations are for the other flag type. error: the case could not run (the
 * state it runs against is invalid).
 */
export type CaseStatus = 'passed' | 'failed' | 'error';

export interface CaseResult {
  readonly case: TestCase;
  readonly status: CaseStatus;
  /** Absent when the flag could not be evaluated. */
  readonly actual?: Actual;
  readonly mismatches: readonly Mismatch[];
  /** Why it did not pass, in one line ('' when passed). */
  readonly message: string;
  /** Present when the flag was evaluated. */
  readonly explanation?: Explanation;
  /** For an error: the problems that stopped the case (e.g. the state's). */
  readonly problems?: readonly Problem[];
  readonly durationMs: number;
}

/** One test file (or the tests: section of an index file) and its results. */
export interface SuiteResult {
  readonly file: string;
  /** The state folder the cases ran against, as given. */
  readonly state: string;
  /** Problems of the test file itself (syntax, schema); cases with problems are not run. */
  readonly problems: readonly Problem[];
  readonly cases: readonly CaseResult[];
  readonly durationMs: number;
  /** The file's lines, to quote the line of a problem. */
  readonly lines: readonly string[];
}

/** The state folders with errors, and their problems (for the reports that show them once). */
export interface StateFailure {
  readonly state: string;
  readonly problems: readonly Problem[];
  /** Lines of the files the problems point into. */
  readonly lines: ReadonlyMap<string, readonly string[]>;
}

export interface TestRun {
  readonly suites: readonly SuiteResult[];
  readonly invalidStates: readonly StateFailure[];
}
