#!/usr/bin/env bash
# The steps of the vexil GitHub Action (action.yml at the repository root runs this file): validate
# the state (with the policy's guards on the change from the pull request's base branch), run its
# flag tests, diff it against the base branch with the impact preview, then write the one review comment (and the job summary) with `vexil comment`. Each
# command writes JSON into a folder of the runner's temp space; `vexil comment` reads them. The job
# fails when validation (a failed guard included) or the flag tests fail; a comment the token may not write (a pull request
# from a fork has a read-only token) is a warning, and the job summary is written regardless.
#
# Inputs (environment): VEXIL (the command that runs vexil: action.yml builds it from the action's
# checkout), STATE_DIR, BASE_REF, IMPACT, STRICT, REQUIRE_TESTS, COMMENT, MARKER, GITHUB_TOKEN.
set -euo pipefail

vexil() {
  # shellcheck disable=SC2086 # VEXIL is a command line on purpose
  ${VEXIL:?} "$@"
}
state="${STATE_DIR:-.}"
out="${RUNNER_TEMP:-/tmp}/vexil-review"
mkdir -p "$out"
rm -f "$out"/*.json

strict=()
[ "${STRICT:-false}" = "true" ] && strict=(--strict)

# The base branch first: validation judges the change against it by the policy's guards (--base).
base="${BASE_REF:-${GITHUB_BASE_REF:-}}"
guards=()
if [ -n "$base" ]; then
  if ! git rev-parse --verify -q "origin/$base^{commit}" >/dev/null; then
    git fetch --no-tags --depth=1 origin "+refs/heads/$base:refs/remotes/origin/$base"
  fi
  guards=(--base "origin/$base")
fi

echo "::group::vexil validate $state"
vexil validate "$state" --format github "${strict[@]}" "${guards[@]}" || true
vexil validate "$state" --format json "${strict[@]}" "${guards[@]}" >"$out/validate.json" && validated=0 || validated=$?
echo "::endgroup::"

echo "::group::vexil test $state"
vexil test "$state" --format json >"$out/test.json" && tested=0 || tested=$?
if [ "$tested" -ne 0 ] && [ "${REQUIRE_TESTS:-false}" != "true" ] && [ "$(tr -d ' \n' <"$out/test.json")" = "[]" ]; then
  echo "no flag test case found (set require-tests: true to fail on that)"
  tested=0
fi
echo "::endgroup::"

diff=()
if [ -n "$base" ]; then
  echo "::group::vexil diff origin/$base HEAD"
  directory=()
  [ "$state" != "." ] && directory=(--directory "$state")
  if vexil diff --repo . "${directory[@]}" --format json --impact "${IMPACT:-10000}" "origin/$base" HEAD >"$out/diff.json"; then
    diff=(--diff "$out/diff.json")
  else
    echo "::warning::vexil diff against origin/$base failed: the comment has no list of changes"
  fi
  echo "::endgroup::"
fi

report=(--validate "$out/validate.json" --test "$out/test.json" "${diff[@]}" --marker "${MARKER:-vexil-review}")
if [ "${COMMENT:-true}" = "true" ] && { [ "${GITHUB_EVENT_NAME:-}" = "pull_request" ] || [ "${GITHUB_EVENT_NAME:-}" = "pull_request_target" ]; }; then
  vexil comment --provider github "${report[@]}" || echo "::warning::the review comment could not be written (see above); the job summary has the report"
else
  vexil comment --dry-run "${report[@]}" >/dev/null
fi

if [ "$validated" -ne 0 ] || [ "$tested" -ne 0 ]; then
  echo "vexil: validation exited $validated, flag tests exited $tested"
  exit 1
fi
