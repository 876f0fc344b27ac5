#!/usr/bin/env bash
# The README's main command (bash scripts/demo.sh) on a stock Debian 12, which is what Raspberry Pi
# OS Bookworm is: no pyenv, no `python` command, only Debian's python3, and pip refusing to write
# into the system Python (PEP 668). CI runs this (.ci/run) after the test suite.
#
# It builds a minimal Debian root with debootstrap, installs only python3 (as the stock image has),
# copies in this checkout's committed files, runs the demo there with chroot in a clean
# environment, and checks that the reply was written and that the system Python got nothing.
# Needs root, debootstrap (installed if missing) and the network rule of these machines (Debian
# apt and PyPI). The machine's pip cache is shared with the root so llama-cpp-python is compiled
# once per machine, not on every run (the build tools are still installed by setup.sh there).
#   sudo bash scripts/check_stock_debian.sh [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
KEEP=0
[ "${1:-}" = "--keep" ] && KEEP=1

if [ "$(id -u)" -ne 0 ]; then
  echo "check_stock_debian: needs root for debootstrap and chroot; run it with sudo" >&2
  exit 2
fi
command -v debootstrap >/dev/null || {
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
}

ROOT="$(mktemp -d /var/tmp/edgevox-bookworm.XXXXXX)"
MOUNTS=(proc sys dev root/.cache/pip)
cleanup() {
  for m in "${MOUNTS[@]}"; do
    if mountpoint -q "$ROOT/$m"; then umount -R "$ROOT/$m" || umount -R -l "$ROOT/$m"; fi
  done
  # Never delete through a mount that is still there (it would delete the machine's /dev).
  if grep -q " $ROOT/" /proc/mounts; then
    echo "check_stock_debian: something is still mounted under $ROOT; left it in place" >&2
  elif [ "$KEEP" -eq 0 ]; then
    rm -rf "$ROOT"
  else
    echo "kept the root: $ROOT"
  fi
}
trap cleanup EXIT

SECONDS=0
echo "== debootstrap: a minimal Debian 12 (bookworm) in $ROOT"
debootstrap --variant=minbase bookworm "$ROOT" http://deb.debian.org/debian >"$ROOT.log" 2>&1 || {
  tail -5 "$ROOT.log" >&2
  echo "check_stock_debian: debootstrap failed (log above)" >&2
  exit 1
}
rm -f "$ROOT.log"
cp /etc/resolv.conf "$ROOT/etc/"
# This machine reaches PyPI through a TLS proxy with its own CA: trust the same CAs as the host.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$ROOT/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
fi
# No service may start inside the root (pulseaudio's package would try).
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
chmod +x "$ROOT/usr/sbin/policy-rc.d"
mount -t proc proc "$ROOT/proc"
mount -t sysfs sys "$ROOT/sys"
mount --rbind /dev "$ROOT/dev"
mount --make-rslave "$ROOT/dev"
mkdir -p "$ROOT/root/.cache/pip" "$HOME/.cache/pip"
mount --bind "$HOME/.cache/pip" "$ROOT/root/.cache/pip"

IN_ROOT=(chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
echo "== the stock image: Debian's python3 and sudo, nothing else"
"${IN_ROOT[@]}" bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 ca-certificates sudo >/dev/null && update-ca-certificates >/dev/null'
if "${IN_ROOT[@]}" bash -c 'command -v python' >/dev/null; then
  echo "check_stock_debian: the root has a python command; it is not a stock image" >&2
  exit 1
fi
SYSTEM_BEFORE="$("${IN_ROOT[@]}" python3 -m pip --version 2>&1 || true)"

echo "== this checkout's committed files"
git -C "$REPO" archive --format=tar --prefix=edgevox/ HEAD | tar -x -C "$ROOT/root"

echo "== bash scripts/demo.sh on the stock root (${SECONDS} s so far)"
"${IN_ROOT[@]}" bash -c 'cd /root/edgevox && bash scripts/demo.sh "What is two plus two?"' 2>&1 |
  grep -v "is ignored: it is neither a file nor a directory" | tail -25

fail() { echo "check_stock_debian: $*" >&2; exit 1; }
[ -s "$ROOT/root/edgevox/out/reply.wav" ] || fail "demo.sh wrote no out/reply.wav"
"${IN_ROOT[@]}" test -x /root/edgevox/.venv/bin/edgevox || fail "no .venv/bin/edgevox after setup"
[ "$("${IN_ROOT[@]}" python3 -m pip --version 2>&1 || true)" = "$SYSTEM_BEFORE" ] ||
  fail "setup changed the system Python's pip"
"${IN_ROOT[@]}" python3 -c 'import edgevox' 2>/dev/null && fail "edgevox was installed into the system Python"

echo "== setup.sh again: idempotent"
AGAIN="$("${IN_ROOT[@]}" bash -c 'cd /root/edgevox && bash scripts/setup.sh' 2>&1)" || fail "a second setup.sh failed: $AGAIN"
grep -q "already installed" <<<"$AGAIN" || fail "a second setup.sh did not find everything installed: $AGAIN"
echo "stock Debian 12: demo ran, reply written, system Python untouched, setup idempotent (${SECONDS} s)"
