#!/usr/bin/env bash
# Runs tests on one of the other Node.js lines (scripts/node-lines.conf):
#   bash scripts/test-node.sh 24.21.0                       # that line's runtime suites
#   bash scripts/test-node.sh 26.12.1 test/cli/serve.test.ts  # chosen files
# scripts/node-install.sh installs that Node.js and its node_modules (cached); this script copies
# the checkout's sources (everything but node_modules and .git: src, test, the built dist/ui, ...)
# into that version's tree beside them, because Node.js resolves packages from a file's real path,
# then runs tap there with that version's node first on the PATH (tap starts each test file with
# it, and the tests start the CLI with it). The last line is "N passed, N failed, N skipped" for
# this version; scripts/test.sh adds it to the machine's run. When this version cannot be installed,
# that counts as one skipped test, or under a truthy CI as one failed test.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=node-lines.conf
source "$root/scripts/node-lines.conf"
v=${1:?usage: scripts/test-node.sh VERSION [test files]}
shift
files=("$@")
[ ${#files[@]} -eq 0 ] && files=("${NODE_LINES_SUITES[@]}")

ci=false
case "${CI:-}" in "" | 0 | false | no | off) ;; *) ci=true ;; esac
if ! bash "$root/scripts/node-install.sh" "$v"; then
  echo "Node.js $v could not be installed (above): its suites did not run"
  if $ci; then echo "0 passed, 1 failed, 0 skipped"; else echo "0 passed, 0 failed, 1 skipped"; fi
  exit 1
fi
node="$NODE_LINES_CACHE/$v/node"
tree="$NODE_LINES_CACHE/$v/tree"
# One run per version at a time: the tree is rewritten below.
exec 8>"$NODE_LINES_CACHE/$v/.run-lock"
flock 8

find "$tree" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
tar -C "$root" --exclude=./node_modules --exclude=./.git --exclude=./.tap --exclude=./tmp \
  --exclude=./test-output --exclude=./.scratch-state -cf - . | tar -C "$tree" -xf -

out=$(mktemp)
(cd "$tree" && PATH="$node/bin:$PATH" TEST_NODE_LINE="$v" node node_modules/tap/dist/esm/run.mjs "${files[@]}") 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
s=$(grep -E '^# \{ total' "$out" | tail -1)
rm -f "$out"
n() { echo "$s" | grep -oE "$1: [0-9]+" | grep -oE '[0-9]+' || echo 0; }
pass=$(n pass); fail=$(n fail); skip=$(n skip)
[ -z "$s" ] && [ "$fail" = "0" ] && fail=1
[ "$rc" != "0" ] && [ "$fail" = "0" ] && fail=1
echo "Node.js $v: ${#files[@]} test files"
echo "$pass passed, $fail failed, $skip skipped"
[ "$rc" = "0" ] && [ "$fail" = "0" ]
