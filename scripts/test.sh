#!/usr/bin/env bash
# The one test command (`npm test`): set up what the tests need, type-check, run every tap test,
# and end with the plain summary line CI reads: "N passed, N failed".
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
echo "$pass passed, $fail failed, $skip skipped"
[ "$rc" = "0" ] && [ "$fail" = "0" ]
