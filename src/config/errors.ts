/**
 * The one error `loadConfig` throws: every problem found (not just the first), each naming the
 * key's dotted path and what was expected, so `vexil serve` can print the message and exit 1.
 */

export interface ConfigProblem {
  /** Dotted key path (`server.http_port`); empty for problems of the file as a whole (unreadable, bad YAML). */
  path: string;
  /** What is wrong and what was expected, with where the value came from when known. */
  message: string;
  /** Where the value came from: a `VEXIL_*` variable name or `file:line:col`, when known. */
  source?: string;
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[]) {
    super(formatProblems(problems));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

function formatProblems(problems: readonly ConfigProblem[]): string {
  const lines = problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message));
  if (lines.length === 1) return `invalid configuration: ${lines[0]}`;
  return `invalid configuration (${lines.length} problems):\n${lines.map((l) => `  ${l}`).join('\n')}`;
}
