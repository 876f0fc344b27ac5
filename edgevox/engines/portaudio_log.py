"""ALSA's and PortAudio's own messages go to the ``logging`` log, not over the console.

libasound (under PortAudio on Linux) prints ``ALSA lib pcm.c:8568:(snd_pcm_recover) underrun
occurred`` and the like with C ``fprintf(stderr)``, and PortAudio prints ``Expression ...
failed in 'src/hostapi/alsa/pa_linux_alsa.c'`` while it probes devices: both land in the
middle of the console's status line. :class:`AudioLibraryLog` routes them to the log:

* ``route_alsa()`` installs a libasound error handler (``snd_lib_error_set_handler``, through
  ctypes, where ``libasound.so.2`` is present), process-wide until ``stop()``, which restores
  libasound's default. The handler runs on whatever thread libasound reports from (PortAudio's
  audio thread included), so it only formats the message and puts it on a
  ``queue.SimpleQueue`` (never blocks); the ``edgevox-audio-log`` thread logs it.
* ``capture_stderr()`` (a context manager) points file descriptor 2 at a pipe while devices are
  probed and opened (PortAudio's prints have no hook). A thread drains the pipe so a writer
  never blocks; what was read is logged once the descriptor is restored (logging during the
  window would write to the pipe again). Lines that are not ALSA/PortAudio chatter are logged as
  warnings, so nothing is lost.

Messages are logged at INFO under ``edgevox.audio.alsa`` / ``edgevox.audio.stderr`` (shown with
``--log-level INFO`` or in ``logging.file``). Only the CLI uses this (it changes process-wide
state); a library host keeps its own stderr.

The handler reads libasound's variadic arguments as the registers and stack slots a
non-variadic callback sees, which is how x86-64 and ARM (32 and 64 bit) Linux pass integers and
pointers to a variadic function; only ``%s``, ``%c`` and integer conversions are expanded, and a
message with any other conversion is logged with its format string as is.

Rejected: redirecting stderr for the whole run (it hides Python's own tracebacks and the
console's output on stderr), and a handler that logs directly (logging takes locks and writes
files on the audio thread).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import queue
import re
import sys
import threading
from collections.abc import Iterator
from typing import Any

ALSA_LOG = logging.getLogger("edgevox.audio.alsa")
STDERR_LOG = logging.getLogger("edgevox.audio.stderr")

_ARG_SLOTS = 4
"""Variadic arguments read per message (libasound's messages use at most three)."""
_CONVERSION = re.compile(r"%(?:%|[-+ #0]*\d*(?:\.\d+)?(?P<len>hh|h|ll|l|z|t|j)?(?P<conv>[a-zA-Z]))")
_CHATTER = re.compile(r"ALSA lib|Expression '|pa_linux_alsa|PaAlsa|alsa|jack|JackShm|Cannot connect to server", re.I)

_HANDLER_TYPE = ctypes.CFUNCTYPE(
    None,
    ctypes.c_char_p,
    ctypes.c_int,
    ctypes.c_char_p,
    ctypes.c_int,
    ctypes.c_char_p,
    *([ctypes.c_void_p] * _ARG_SLOTS),
)


def format_alsa(fmt: str, args: list[int | None]) -> str:
    """``fmt`` with its ``%s``/``%d``-style conversions filled from raw argument slots.
    Stops expanding (and keeps the rest as written) at any other conversion."""
    out: list[str] = []
    pos = 0
    slot = 0
    for match in _CONVERSION.finditer(fmt):
        out.append(fmt[pos : match.start()])
        pos = match.end()
        conv, length = match.group("conv"), match.group("len") or ""
        if match.group(0) == "%%":
            out.append("%")
            continue
        if slot >= len(args) or conv not in "sdiuxXcp" or length == "ll":
            out.append(fmt[match.start() :])
            return "".join(out)
        raw = args[slot] or 0
        slot += 1
        if conv == "s":
            out.append(ctypes.string_at(raw).decode("utf-8", "replace") if raw else "(null)")
        elif conv == "c":
            out.append(chr(raw & 0xFF))
        elif conv == "p":
            out.append(hex(raw))
        elif length in ("l", "z", "t", "j"):
            value = raw & ((1 << (8 * ctypes.sizeof(ctypes.c_void_p))) - 1)
            out.append(_int(value, conv, 8 * ctypes.sizeof(ctypes.c_long)))
        else:
            out.append(_int(raw & 0xFFFFFFFF, conv, 32))
    out.append(fmt[pos:])
    return "".join(out)


def _int(value: int, conv: str, bits: int) -> str:
    if conv in "di" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return format(value, "x" if conv == "x" else "X" if conv == "X" else "d")


class AudioLibraryLog:
    """Routes libasound's and PortAudio's prints to ``logging`` (see the module docstring)."""

    def __init__(self) -> None:
        self.alsa_messages = 0
        """Messages libasound reported through the handler since ``route_alsa()``."""
        self.captured_lines = 0
        """Lines written to stderr during ``capture_stderr()`` windows."""
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lib: Any = None
        self._handler: Any = None
        """The ctypes callback; kept after ``stop()``: a report already inside it must not find its code freed."""
        self._installed = False

    @property
    def routing_alsa(self) -> bool:
        """Whether the libasound handler is installed."""
        return self._installed

    def route_alsa(self) -> bool:
        """Install the libasound error handler; False where there is no libasound (not Linux)."""
        if self._installed:
            return True
        name = ctypes.util.find_library("asound") or "libasound.so.2"
        try:
            lib = ctypes.CDLL(name)
            setter = lib.snd_lib_error_set_handler
        except (OSError, AttributeError):
            return False
        setter.argtypes = [ctypes.c_void_p]
        setter.restype = ctypes.c_int
        self._thread = threading.Thread(target=self._drain, name="edgevox-audio-log", daemon=True)
        self._thread.start()
        self._handler = self._handler or _HANDLER_TYPE(self._on_alsa)
        setter(ctypes.cast(self._handler, ctypes.c_void_p))
        self._lib, self._installed = lib, True
        return True

    def stop(self) -> None:
        """Restore libasound's own handler and stop the logging thread (logs what was queued)."""
        if self._installed:
            self._lib.snd_lib_error_set_handler(None)
            self._installed = False
        thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout=5.0)

    def _on_alsa(
        self, file: bytes | None, line: int, function: bytes | None, err: int, fmt: bytes | None, *args: Any
    ) -> None:
        # Any thread, the audio callback's included: format and enqueue only.
        try:
            text = format_alsa((fmt or b"").decode("utf-8", "replace"), list(args))
            where = f"{(file or b'?').decode(errors='replace')}:{line}:({(function or b'?').decode(errors='replace')})"
            suffix = f": {os.strerror(-err) if err < 0 else os.strerror(err)}" if err else ""
            self.alsa_messages += 1
            self._queue.put(f"ALSA lib {where} {text}{suffix}")
        except Exception:  # noqa: BLE001, S110 - an exception must never propagate into C
            pass

    def _drain(self) -> None:
        while True:
            message = self._queue.get()
            if message is None:
                return
            ALSA_LOG.info("%s", message)

    @contextlib.contextmanager
    def capture_stderr(self) -> Iterator[None]:
        """Point fd 2 at a pipe for the block (device probing and opening); log what came."""
        try:
            saved = os.dup(2)
        except OSError:  # no stderr at all: nothing can print over the console
            yield
            return
        read_fd, write_fd = os.pipe()
        chunks: list[bytes] = []

        def drain() -> None:
            while block := os.read(read_fd, 65536):
                chunks.append(block)

        reader = threading.Thread(target=drain, name="edgevox-audio-stderr", daemon=True)
        reader.start()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os.dup2(write_fd, 2)
        os.close(write_fd)
        try:
            yield
        finally:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os.dup2(saved, 2)  # the pipe's last write end closes: the reader sees EOF
            os.close(saved)
            reader.join(timeout=5.0)
            os.close(read_fd)
            for line in b"".join(chunks).decode("utf-8", "replace").splitlines():
                if line.strip():
                    self.captured_lines += 1
                    (STDERR_LOG.info if _CHATTER.search(line) else STDERR_LOG.warning)("%s", line)
