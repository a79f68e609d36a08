/**
 * A problem found in a parsed document before it has a line and column: it names the document
 * (its index in the file's stream) and a path inside it (`flags/3/rules/0/segment`). Findings are
 * located only for files that have some, by `locate.ts`, so the happy path never pays for positions.
 */
import type { Severity } from '../model/problem.js';

import type { RuleId } from './rules.js';

export type PathSegment = string | number;

export interface Finding {
  readonly severity: Severity;
  readonly rule: RuleId;
  readonly message: string;
  readonly hint?: string;
  /** Index of the document in its file's stream (every document counts, empty ones included). */
  readonly doc: number;
  readonly path: readonly PathSegment[];
  /** Point at the key of the last path segment instead of its value (unknown fields, ignored keys). */
  readonly at?: 'key' | 'value';
}

/** Findings of one file, keyed by the file's path. */
export type FindingsByFile = Map<string, Finding[]>;

export function addFinding(byFile: FindingsByFile, file: string, finding: Finding): void {
  const list = byFile.get(file);
  if (list) list.push(finding);
  else byFile.set(file, [finding]);
}
