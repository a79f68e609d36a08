#!/usr/bin/env bash
# The one test command (`npm test`): set up what the tests need, type-check, run every tap test on
# the machine's Node.js, then the runtime suites on each other Node.js line of
# scripts/node-lines.conf (scripts/test-node.sh), and end with the plain summary line CI reads,
# "N passed, N failed, N skipped", adding up every run. With arguments (`npm test -- FILES`) only
# those files run, on the machine's Node.js only; VEXIL_NODE_LINES=0 leaves the other lines out.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -f scripts/test-setup.sh ]; then
  bash scripts/test-setup.sh || { echo "test setup failed"; echo "0 passed, 1 failed"; exit 1; }
fi
if ! npx tsc -p tsconfig.json --noEmit || ! npx tsc -p src/ui/tsconfig.json --noEmit; then
  echo "type check failed"
  echo "0 passed, 1 failed"
  exit 1
fi
# The browser tests drive the UI built from the sources being tested.
if ! npm run --silent build:ui; then
  echo "UI build failed"
  echo "0 passed, 1 failed"
  exit 1
fi
out=$(mktemp)
npx tap "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
s=$(grep -E '^# \{ total' "$out" | tail -1)
rm -f "$out"
n() { echo "$s" | grep -oE "$1: [0-9]+" | grep -oE '[0-9]+' || echo 0; }
pass=$(n pass); fail=$(n fail); skip=$(n skip)
[ -z "$s" ] && [ "$fail" = "0" ] && fail=1
[ "$rc" != "0" ] && [ "$fail" = "0" ] && fail=1
# Per-run counts are worded differently from the summary so that only the last line matches it.
echo "Node.js $(node --version | tr -d v): pass $pass, fail $fail, skip $skip"

if [ $# -eq 0 ] && [ "${VEXIL_NODE_LINES:-1}" != "0" ]; then
  # shellcheck source=node-lines.conf
  source scripts/node-lines.conf
  for v in "${NODE_LINES[@]}"; do
    echo "== the runtime suites on Node.js $v (scripts/test-node.sh $v)"
    lines=$(mktemp)
    bash scripts/test-node.sh "$v" | tee "$lines" | grep --line-buffered -vE '^[0-9]+ passed, [0-9]+ failed'
    line=$(tail -1 "$lines")
    rm -f "$lines"
    read -r p _ f _ k _ <<<"$line"
    [[ "$p$f$k" =~ ^[0-9]+$ ]] || { p=0; f=1; k=0; }
    echo "Node.js $v: pass $p, fail $f, skip $k"
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + k))
    [ "$f" = "0" ] || rc=1
  done
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$rc" = "0" ] && [ "$fail" = "0" ]
