# Sourced by setup.sh, demo.sh and test.sh: the project's Python environment.
# Debian 12 and Raspberry Pi OS Bookworm have `python3` but no `python`, and their pip refuses
# to write into the system Python (PEP 668: "externally-managed-environment"). So edgevox lives
# in a virtual environment: the one already active ($VIRTUAL_ENV), else .venv in the repository.
# Nothing is ever installed into the system Python.
# Sets EDGEVOX_VENV (the environment's folder) and PY (its python); puts its bin/ first on PATH.
EDGEVOX_VENV="${VIRTUAL_ENV:-$PWD/.venv}"
PY="$EDGEVOX_VENV/bin/python"
export PATH="$EDGEVOX_VENV/bin:$PATH"
