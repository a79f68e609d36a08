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
  evaluate    Evaluate a flag against state files on disk (no server)
  test        Run flag test files (*.test.yml) against state files
  bundle      Build, list, push and pull OCI bundles of flag state
  diff        Compare two states (folders or Git revisions) and preview the impact
  stale       List flags serving one outcome to everyone, expired or unused in code
  comment     Post or update the one review comment of a pull/merge request
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
VEXIL_STORAGE_LOCAL_PATH=./flags). Only variables that name a config key are
read, and a value of the wrong type stops the start naming the variable. Other
VEXIL_* variables (such as VEXIL_PORT and VEXIL_SERVICE_HOST, which Kubernetes
sets for a Service named vexil) are ignored; with log.level debug each is
logged by name, never by value.

Options:
  -c, --config FILE  YAML config file (see docs/configuration.md)
  -h, --help         Show this help

Exit status: 0 after a clean shutdown (SIGTERM/SIGINT), 1 when the config or
the initial state is invalid (the located problems are printed on stderr).
`;

export const VALIDATE_USAGE = `Usage: vexil validate [PATH...] [--format text|json|github|sarif] [--strict] [--no-checks]
                      [--policy FILE] [--base REV [--repo PATH]]

Checks flag state the way "vexil serve" loads it and reports every problem with
its file, line and column. Each PATH is a state folder (its index file
.vexil.yml or .flipt.yml, or default discovery, selects the state files) or a
state file; all files given directly are checked together as one state.
Default PATH: the current folder. A state without errors also gets the semantic
checks (unreachable rules, segments that match nobody, ...) as warnings.

Options:
  -f, --format FMT  text (default): file:line:col: severity rule: message, the
                      offending line with a caret, the hint, and a summary line
                    json: an array of problems
                    github: GitHub Actions annotations (::error / ::warning / ::notice)
                    sarif: a SARIF 2.1.0 log (GitHub code scanning)
      --strict      Fail on warnings too (information never fails)
      --no-checks   Skip the semantic checks
      --policy FILE The policy file (rule severities, required metadata, key
                    patterns, guards); default: .vexil/policy.yml in each state folder
      --base REV    Also check the policy's guards on the change from the state
                    at Git revision REV to the folder (one folder only). The
                    guards' policy: --policy FILE, else REV's .vexil/policy.yml,
                    else the folder's (a change cannot loosen its own guards)
      --repo PATH   The Git repository holding REV (default: the one the folder
                    is in); the folder's path in it locates the state at REV
  -h, --help        Show this help

Exit status: 0 valid, 1 invalid, a guard failed (or warnings with --strict),
2 usage error.
`;

export const EVALUATE_USAGE = `Usage: vexil evaluate --flag KEY --entity ID [--namespace NS] [--context KEY=VALUE...]
                      [--dir PATH] [--reference REF] [--format text|json]

Evaluates one flag against the state files in a folder, loaded as "vexil serve"
loads them, without a server. The flag's type picks the evaluation (variant or
boolean).

Options:
      --flag KEY             Flag key (required)
      --entity ID            Entity id (required)
  -n, --namespace NS         Namespace (default: default)
  -c, --context KEY=VALUE    A context value; repeat for several
  -d, --dir PATH             State folder (default: the current folder)
  -r, --reference REF        Reference; a local folder has only "local"
  -f, --format FMT           text (default): the result, which rule/rollout
                               decided, and the trace (segments, constraints
                               with the values compared, bucket)
                             json: the HTTP API's response body (or its error
                               body) for this flag type
  -h, --help                 Show this help

Exit status: 0 evaluated, 1 evaluation error (flag or namespace not found,
unknown reference) or invalid state, 2 usage error.
`;

export const TEST_USAGE = `Usage: vexil test [PATH...] [--dir PATH] [--format text|json|junit|github]

Runs flag test cases (namespace, flag, entity, context, expected result)
against state files, without a server. Each PATH is a state folder (its
*.test.yml / *.test.yaml files and the tests: section of its .vexil.yml are
run against it) or a test file (run against the folder holding it). Default
PATH: the current folder. Format: schemas/flag-tests.schema.json.

Options:
  -d, --dir PATH     State folder to test against (instead of the folders above)
  -f, --format FMT   text (default): a line per case; a failing case shows the
                       expected and actual result and the explain trace
                     json: an array of case results
                     junit: JUnit XML for CI test reports
                     github: GitHub Actions annotations on failing cases
  -h, --help         Show this help

Exit status: 0 every case passed, 1 a case failed or a state or test file is
invalid (or no test case was found), 2 usage error.
`;

export const BUNDLE_USAGE = `Usage: vexil bundle build [--dir PATH] [options] NAME[:TAG]
       vexil bundle list [--format table|json] [options]
       vexil bundle push [options] NAME[:TAG] REMOTE
       vexil bundle pull [options] REMOTE

Packs flag state into OCI bundles kept in a local bundle directory, and copies
them to and from OCI registries ("vexil serve" with storage.type oci serves
them).

  build  Validates the state folder as "vexil validate" does; when it has no
         error, packs its index file and state files into the bundle NAME:TAG
         (e.g. flags:v1 or team/flags:v1; TAG defaults to latest). Invalid
         state: the located problems are printed and nothing is stored.
         The manifest records the build time, or SOURCE_DATE_EPOCH when set
         (same state and time: same digest).
  list   The bundles in the local directory: NAME, DIGEST, CREATED, SIZE.
  push   Copies the local bundle NAME:TAG to REMOTE (host[:port]/name[:tag],
         optionally written http://... or https://...); blobs the registry
         already has are skipped.
  pull   Fetches REMOTE's bundle, every blob's digest verified, into the local
         directory under the name host[:port]/name:tag.

Options:
  -d, --dir PATH            build: state folder (default: the current folder)
      --manifest-version V  build: OCI manifest 1.1 (default) or 1.0
  -f, --format FMT          list: table (default) or json
  -c, --config FILE         Take storage.oci.* (bundles_directory,
                              authentication, insecure, manifest_version) and
                              data_dir from this config file
      --bundles-dir PATH    Local bundle directory (default:
                              storage.oci.bundles_directory, else bundles/ in
                              the data folder)
      --username NAME       push/pull: registry user name
      --password-stdin      push/pull: read the password (or token) from stdin
      --insecure            push/pull: plain HTTP to the registry
  -h, --help                Show this help

Credentials also come from the config, or from the variables
VEXIL_STORAGE_OCI_AUTHENTICATION_USERNAME and _PASSWORD; a password is never
accepted as a command-line argument, and never printed. Push and pull report
progress on stderr and print the result (name and digest) on stdout.

Exit status: 0 done, 1 failed (invalid state or config, unknown bundle or tag,
credentials refused, registry unreachable, digest mismatch), 2 usage error.
`;

export const DIFF_USAGE = `Usage: vexil diff BASE HEAD [--repo PATH [--directory DIR]] [--format text|json|markdown]
                  [--impact N] [--contexts FILE] [--namespace NS] [--fail-on-change]
                  [--policy | --policy=FILE]

Compares two flag states and lists what changed, per namespace: flags and
segments added, removed and changed, each change in words (enabled toggled,
variant added, rule moved, rollout 50% → 60%, constraint changed...). BASE and
HEAD are two state folders, or with --repo two revisions of a local Git
repository (branches, tags, origin/main, HEAD, commit ids), read from its
object database as "vexil serve" reads a repository.

The impact preview evaluates each changed flag (and each flag reading a
changed segment) on both sides for a sample of entities and counts those whose
result changes, e.g. "12.4% of 10,000 entities move stripe → adyen". The
sample: N synthetic entity ids, each given in turn one of the contexts of
HEAD's flag test files (*.test.yml), or the entries of a contexts file.

Options:
      --repo PATH        Compare two revisions of the Git repository at PATH
      --directory DIR    With --repo: the state's sub-folder in the repository
  -f, --format FMT       text (default; coloured on a terminal unless NO_COLOR)
                         json: the API's diff document (schemas/diff.schema.json)
                         markdown: for a pull-request comment (summary table,
                           a collapsible section per flag, the impact)
      --impact N         Synthetic entities for the impact (default 10000,
                           at most 100000; 0: no impact preview)
      --contexts FILE    JSONL, one {"entityId": "...", "context": {...}} per
                           line (at most 100000 lines of 64 KiB): the sample
  -n, --namespace NS     Only this namespace
      --fail-on-change   Exit 1 when anything changed (CI gates)
      --policy           Judge the change by the guards of BASE's
                           .vexil/policy.yml (HEAD's when BASE has none):
                           largest rollout move, protected flags, largest
                           share of entities whose outcome changes
      --policy=FILE      The same with the guards of FILE
  -h, --help             Show this help

Exit status: 0 compared (changed or not), 1 a side or the policy is invalid,
a guard failed or, with --fail-on-change, something changed; 2 usage error
(also an unreadable or malformed contexts file).
`;

export const STALE_USAGE = `Usage: vexil stale [DIR] [--repo PATH [--rev REV] [--max-commits N]] [--code DIR]
                   [--format text|json|markdown] [--today YYYY-MM-DD]

Lists the flags that are ready to be removed:
- flags that serve one outcome to every entity (a disabled variant flag; one
  variant for all; a boolean flag always true or always false), decided from
  the evaluation semantics; with --repo, since which commit (the oldest commit
  of the unbroken run, on the first-parent history);
- temporary flags past their expiry date (metadata lifecycle: temporary and
  expires: YYYY-MM-DD or an RFC 3339 date-time);
- with --code, flags whose key is a whole word of no source file under DIR.

DIR is the state folder (default: the current folder), or with --repo the
state's sub-folder in the repository (default: its root).

Options:
      --repo PATH         Read the state from the Git repository at PATH and
                            walk its history for "since which commit"
      --rev REV           With --repo: the revision to read (default HEAD)
      --max-commits N     With --repo: commits read at most (default 200)
      --code DIR          Look for each flag key in the files under DIR
                            (honours .gitignore; skips .git, links, binaries)
      --max-files N       Files read (and folders listed) at most under
                            --code (default 20000)
      --max-file-bytes N  Larger files are skipped (default 1048576)
      --max-code-bytes N  Bytes read at most under --code (default 268435456)
  -f, --format FMT        text (default), json (schemas/stale.schema.json),
                            markdown (for a pull-request comment)
      --today DATE        The date to judge expiry at (default: today, UTC)
  -h, --help              Show this help

Exit status: 0 reported (stale flags or not), 1 the state is invalid or
cannot be read (not a Git repository, unknown revision, unreadable folder),
2 usage error.
`;

export const COMMENT_USAGE = `Usage: vexil comment --provider github|gitlab [--validate FILE]... [--test FILE]...
                     [--diff FILE] [--api-url URL] [--repository OWNER/NAME | --project ID]
                     [--number N] [--marker NAME] [--title TEXT] [--dry-run]

Writes ONE review comment on a pull request (GitHub) or merge request (GitLab)
from the JSON that "vexil validate --format json", "vexil test --format json"
and "vexil diff --format json" wrote earlier in the job: a verdict table, every
guard, validation error and failing test case, the warnings, and what changes
in words with the impact on sample entities (as "vexil diff --format
markdown"), at most 65,536 characters. The first run creates the comment; later
runs find it by a hidden <!-- NAME --> marker and replace its body. With
GITHUB_STEP_SUMMARY set, the report is also appended to the job summary. A
named file that is missing, empty or not the expected JSON is reported in the
comment (and on stderr), not fatal.

The token is read from the environment only and never printed: GITHUB_TOKEN
(GitHub), GITLAB_TOKEN (GitLab, sent as PRIVATE-TOKEN) or else CI_JOB_TOKEN
(sent as JOB-TOKEN).

Options:
      --provider P         github or gitlab
      --validate FILE      vexil validate --format json output (repeatable)
      --test FILE          vexil test --format json output (repeatable)
      --diff FILE          vexil diff --format json output
      --api-url URL        API base (default: GITHUB_API_URL or
                             https://api.github.com; CI_API_V4_URL or
                             https://gitlab.com/api/v4)
      --repository O/N     GitHub repository (default: GITHUB_REPOSITORY)
      --project ID         GitLab project id or path (default: CI_PROJECT_ID)
      --number N           Pull request number (default: pull_request.number
                             of GITHUB_EVENT_PATH) or merge request IID
                             (default: CI_MERGE_REQUEST_IID)
      --marker NAME        The hidden marker (default vexil-review); one
                             comment per marker, e.g. one per state folder
      --title TEXT         The comment's heading (default "vexil: flag review")
      --dry-run            Print the comment on stdout; post nothing
  -h, --help               Show this help

Exit status: 0 comment written (whatever it reports), 1 the API refused
(e.g. 401 bad token) or could not be reached, 2 usage error (also a missing
token, repository or pull request number).
`;

export const COMMAND_USAGE: Readonly<Record<string, string>> = {
  serve: SERVE_USAGE,
  validate: VALIDATE_USAGE,
  evaluate: EVALUATE_USAGE,
  test: TEST_USAGE,
  bundle: BUNDLE_USAGE,
  diff: DIFF_USAGE,
  stale: STALE_USAGE,
  comment: COMMENT_USAGE,
  help: MAIN_USAGE,
};
