#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh Debian machine, then lint and test.
# This is the README's test command and what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --dev
# shellcheck source=scripts/venv.sh
source scripts/venv.sh

echo "== lint (ruff)"
"$PY" -m ruff check edgevox tests scripts

echo "== types (mypy)"
"$PY" -m mypy edgevox

echo "== tests (pytest)"
EDGEVOX_NO_SKIPS=1 "$PY" -m pytest "$@"
