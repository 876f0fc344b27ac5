"""A private PulseAudio daemon with a null sink: a real audio device for tests on machines without a sound card.

Audio played to the sink ``vspk`` can be recorded back from its monitor
``vspk.monitor``, so a test can drive real ``sounddevice`` streams end to end.

::

    with private_pulseaudio(rate_hz=16000) as pulse:
        # PULSE_SERVER etc. are set in os.environ for the duration of the block,
        # so PortAudio (sounddevice) finds the "pulse" and "default" devices.
        ...

Details (measured, see ../shared/docs/ENVIRONMENT.md): the daemon runs without a
session bus, as any user including root, with its runtime files in a temporary
folder; it is ready in well under a second. A low-latency ``parec`` reader is kept
on the monitor because otherwise a freshly opened capture stream gets no data for
0.7-2 s. Streams should use the sink's rate.

Because PortAudio reads ``PULSE_SERVER`` when it initialises, call this *before*
the first ``import sounddevice`` in the process, or reinitialise PortAudio (the
fixture does: ``sounddevice._terminate(); sounddevice._initialize()``).

This module changes ``os.environ`` while the context is active, so use it from
one test session at a time (not from parallel threads).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_ENV_KEYS = ("PULSE_SERVER", "PULSE_RUNTIME_PATH", "XDG_RUNTIME_DIR", "PULSE_SINK", "PULSE_SOURCE")


@dataclass(frozen=True)
class PulseServer:
    """A running private PulseAudio daemon."""

    runtime_dir: Path
    server: str
    """Value of ``PULSE_SERVER`` (``unix:<dir>/native``)."""
    sink: str
    """The null sink's name (the "speaker")."""
    monitor: str
    """Its monitor source (the "microphone" that hears the speaker)."""
    rate_hz: int
    pid: int

    def env(self) -> dict[str, str]:
        """Environment variables that point PulseAudio clients at this daemon."""
        return {
            "PULSE_SERVER": self.server,
            "PULSE_RUNTIME_PATH": str(self.runtime_dir),
            "XDG_RUNTIME_DIR": str(self.runtime_dir),
        }


class PulseUnavailable(RuntimeError):
    """PulseAudio is not installed or would not start (tests skip or fail with this reason)."""


def pulseaudio_installed() -> bool:
    return all(shutil.which(tool) for tool in ("pulseaudio", "pactl", "parec"))


@contextlib.contextmanager
def private_pulseaudio(
    rate_hz: int = 16000, *, sink: str = "vspk", start_timeout_s: float = 10.0
) -> Iterator[PulseServer]:
    """Start a private PulseAudio with a null sink, set the environment to use it, stop it on exit."""
    if not pulseaudio_installed():
        raise PulseUnavailable(
            "PulseAudio is not installed: apt-get install -y --no-install-recommends "
            "pulseaudio pulseaudio-utils libasound2-plugins libportaudio2"
        )
    runtime_dir = Path(tempfile.mkdtemp(prefix="edgevox-pulse-"))
    socket = runtime_dir / "native"
    env = dict(os.environ)
    server = PulseServer(
        runtime_dir=runtime_dir,
        server=f"unix:{socket}",
        sink=sink,
        monitor=f"{sink}.monitor",
        rate_hz=rate_hz,
        pid=0,
    )
    env.update(server.env())
    env["HOME"] = str(runtime_dir)  # keeps PulseAudio's cookie and state out of the real home
    log = open(runtime_dir / "pulseaudio.log", "wb")  # noqa: SIM115 - closed in finally
    daemon = subprocess.Popen(
        [
            "pulseaudio",
            "-n",
            "--daemonize=no",
            "--exit-idle-time=-1",
            "--disallow-exit",
            "--use-pid-file=no",
            "--system=false",
            "-L",
            f"module-native-protocol-unix auth-anonymous=1 socket={socket}",
            "-L",
            f"module-null-sink sink_name={sink} rate={rate_hz} channels=1 format=s16le",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    reader: subprocess.Popen[bytes] | None = None
    saved = {k: os.environ.get(k) for k in _ENV_KEYS}
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            if daemon.poll() is not None:
                raise PulseUnavailable(
                    f"pulseaudio exited with status {daemon.returncode}: "
                    + (runtime_dir / "pulseaudio.log").read_text(errors="replace")[-2000:]
                )
            ok = socket.exists() and _pactl(env, "info", check=False).returncode == 0
            if ok:
                break
            if time.monotonic() > deadline:
                raise PulseUnavailable(f"pulseaudio did not accept connections within {start_timeout_s} s")
            # Polling a socket that appears within ~0.1 s; no event to wait on.
            time.sleep(0.02)
        _pactl(env, "set-default-sink", sink)
        _pactl(env, "set-default-source", server.monitor)
        reader = subprocess.Popen(
            ["parec", "--latency-msec=10", "-d", server.monitor, "--raw", f"--rate={rate_hz}", "--channels=1"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.environ.update(server.env())
        yield PulseServer(
            runtime_dir=runtime_dir,
            server=server.server,
            sink=sink,
            monitor=server.monitor,
            rate_hz=rate_hz,
            pid=daemon.pid,
        )
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for proc in (reader, daemon):
            if proc is None:
                continue
            proc.terminate()
            try:
                proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5.0)
        log.close()
        shutil.rmtree(runtime_dir, ignore_errors=True)


def _pactl(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    result = subprocess.run(["pactl", *args], env=env, capture_output=True, timeout=10)
    if check and result.returncode != 0:
        raise PulseUnavailable(f"pactl {' '.join(args)} failed: {result.stderr.decode(errors='replace').strip()}")
    return result


def reinitialize_portaudio() -> None:
    """Make an already-imported ``sounddevice`` see the current PulseAudio server.

    PortAudio enumerates devices once, at initialisation; call this after entering
    :func:`private_pulseaudio` (and after leaving it) when ``sounddevice`` may have
    been imported before.
    """
    import sounddevice

    sounddevice._terminate()
    sounddevice._initialize()
