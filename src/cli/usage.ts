/** Help texts of the CLI and the error that makes it exit 2 (a usage error). */

export class UsageError extends Error {
  /** The help text to show with the message (the command's, or the general one). */
  readonly usage: string;
  constructor(message: string, usage: string) {
    super(message);
    this.name = 'UsageError';
    this.usage = usage;
  }
}

export const MAIN_USAGE = `Usage: vexil <command> [options]

A GitOps feature-flag server: serves Flipt-format flag state over Flipt's HTTP API.

Commands:
  serve       Serve the flag state over HTTP
  validate    Check state files and report located problems
  help [CMD]  Show help (for a command)

Options:
  -h, --help     Show this help
  -v, --version  Print the version

Run "vexil help <command>" or "vexil <command> --help" for a command's options.
`;

export const SERVE_USAGE = `Usage: vexil serve [--config FILE]

Loads the configured state, serves it over HTTP and reloads it when it changes
(local folder: watched; a change that does not validate is rejected and the
last good state stays served). Without --config, serves the bundled examples/
folder on http://127.0.0.1:8080.

Every config key can also be set by an environment variable: VEXIL_ + the key's
path, upper-cased, joined by _ (e.g. VEXIL_SERVER_HTTP_PORT=9000,
VEXIL_STORAGE_LOCAL_PATH=./flags).

Options:
  -c, --config FILE  YAML config file (see README, "Configuration")
  -h, --help         Show this help

Exit status: 0 after a clean shutdown (SIGTERM/SIGINT), 1 when the config or
the initial state is invalid (the located problems are printed on stderr).
`;

export const VALIDATE_USAGE = `Usage: vexil validate [PATH...] [--format text|json|github] [--strict]

Checks flag state the way "vexil serve" loads it and reports every problem with
its file, line and column. Each PATH is a state folder (its index file
.vexil.yml or .flipt.yml, or default discovery, selects the state files) or a
state file; all files given directly are checked together as one state.
Default PATH: the current folder.

Options:
  -f, --format FMT  text (default): file:line:col: severity rule: message, the
                      offending line with a caret, the hint, and a summary line
                    json: an array of problems
                    github: GitHub Actions annotations (::error / ::warning)
      --strict      Fail on warnings too
  -h, --help        Show this help

Exit status: 0 valid, 1 invalid (or warnings with --strict), 2 usage error.
`;

export const COMMAND_USAGE: Readonly<Record<string, string>> = {
  serve: SERVE_USAGE,
  validate: VALIDATE_USAGE,
  help: MAIN_USAGE,
};
