#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh Debian machine, then lint and test.
# This is the README's test command and what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --dev

echo "== lint (ruff)"
python -m ruff check edgevox tests scripts

echo "== types (mypy)"
python -m mypy edgevox

echo "== tests (pytest)"
EDGEVOX_NO_SKIPS=1 python -m pytest "$@"
