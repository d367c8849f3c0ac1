#!/usr/bin/env bash
# Run the whole test suite, as CI does:
#   1. every test that needs no model, spread over several processes (pytest-xdist): most of
#      them wait on subprocesses, sockets and SQLite, so the cores are free for more than one;
#   2. the end-to-end tests on the embedded model (tests/e2e), one at a time: the model uses
#      every core, and two at once would only slow each other.
#
#   ./test.sh                 everything
#   ./test.sh -k sandbox      extra arguments go to both pytest runs
#   LAR_TEST_WORKERS=2 ./test.sh   processes for part 1 (default 4)
set -euo pipefail
cd "$(dirname "$0")"
# exit 5 means "no test selected" (a -k that matches tests of one part only)
fast=0
.venv/bin/python -m pytest --ignore=tests/e2e -n "${LAR_TEST_WORKERS:-4}" "$@" || fast=$?
e2e=0
.venv/bin/python -m pytest tests/e2e "$@" || e2e=$?
for code in "$fast" "$e2e"; do
  if [ "$code" -ne 0 ] && [ "$code" -ne 5 ]; then
    exit "$code"
  fi
done
if [ "$fast" -eq 5 ] && [ "$e2e" -eq 5 ]; then
  exit 5
fi
