/** A located problem in a state file (or in the index file, or in the set of files as a whole). */
/** `info` only for semantic checks that inform (never from loading alone); `--strict` fails on warnings, not on info. */
export type Severity = 'error' | 'warning' | 'info';

export interface Problem {
  readonly severity: Severity;
  /** Stable rule id, dotted, e.g. `distribution.variant.unknown`, `yaml.syntax`: one of the catalogue in `state/rules.ts`. */
  readonly rule: string;
  /** Path relative to the state root, `/`-separated. Empty string when the problem has no file. */
  readonly file: string;
  /** 1-based; 0 when unknown. */
  readonly line: number;
  /** 1-based; 0 when unknown. */
  readonly column: number;
  readonly message: string;
  readonly hint?: string;
}
