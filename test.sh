#!/usr/bin/env bash
# Run the whole test suite, as CI does:
#   1. every test that needs no model, spread over several processes (pytest-xdist): most of
#      them wait on subprocesses, sockets and SQLite, so the cores are free for more than one;
#   2. the tests marked serial, alone: they time themselves against the machine;
#   3. the end-to-end tests on the embedded model (tests/e2e), one at a time: the model uses
#      every core, and two at once would only slow each other.
#
#   ./test.sh                 everything
#   ./test.sh -k sandbox      extra arguments go to every pytest run
#   LAR_TEST_WORKERS=2 ./test.sh   processes for part 1 (default 4)
set -euo pipefail
cd "$(dirname "$0")"
# exit 5 means "no test selected" (a -k that matches tests of one part only)
codes=()
run() { .venv/bin/python -m pytest "$@" && codes+=(0) || codes+=($?); }
run --ignore=tests/e2e -m "not serial" -n "${LAR_TEST_WORKERS:-4}" "$@"
run --ignore=tests/e2e -m serial "$@"
run tests/e2e "$@"
all_empty=1
for code in "${codes[@]}"; do
  if [ "$code" -ne 0 ] && [ "$code" -ne 5 ]; then
    exit "$code"
  fi
  [ "$code" -eq 5 ] || all_empty=0
done
if [ "$all_empty" -eq 1 ]; then
  exit 5
fi
