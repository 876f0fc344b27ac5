"""The latency bench's live rig: a real-time microphone that plays clips into the app, busy-loop
processes beside it, and the utterances the app heard counted against the clips played.

:class:`LiveMic` is the app's ``AudioIn``: its ``read`` runs on the voice loop's capture thread.
:func:`count_turns` works on wall-clock windows, so a clip split in two by endpointing or two
clips heard as one turn show up in the figures.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from edgevox.cli.bench_clips import SAMPLE_RATE_HZ

BUSY_LOOP = "import os, sys\nwhile os.getppid() == int(sys.argv[1]):\n    for _ in range(1000000):\n        pass\n"
"""A busy process (``python -c BUSY_LOOP BENCH_PID``) that ends when the bench dies, even by SIGKILL:
it is then reparented. The bench's pid is given, not read at start, which may already be too late."""


# --- the microphone -----------------------------------------------------------------------------


@dataclass
class Playback:
    """One clip played by :class:`LiveMic`: wall-clock times of its first and last sample."""

    samples: int
    started_at: float = 0.0
    ended_at: float = 0.0
    done: threading.Event = field(default_factory=threading.Event)


class LiveMic:
    """A real-time microphone: silence, plus whatever :meth:`play` queues, paced by the clock.

    ``read`` runs on the voice loop's capture thread; ``play`` on the bench's.
    """

    def __init__(self, sample_rate_hz: int = SAMPLE_RATE_HZ, block_ms: int = 20) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.block = sample_rate_hz * block_ms // 1000
        self._pending: deque[tuple[np.ndarray, Playback, bool, bool]] = deque()
        self._lock = threading.Lock()
        self._start = 0.0
        self._k = 0
        self._stopped = threading.Event()

    def play(self, audio: np.ndarray) -> Playback:
        playback = Playback(samples=audio.shape[0])
        starts = range(0, max(audio.shape[0], 1), self.block)
        with self._lock:
            for n, i in enumerate(starts):
                part = audio[i : i + self.block].astype(np.float32)
                if part.shape[0] < self.block:
                    part = np.concatenate([part, np.zeros(self.block - part.shape[0], dtype=np.float32)])
                self._pending.append((part, playback, n == 0, n == len(starts) - 1))
        return playback

    def start(self) -> None:
        self._start = time.monotonic()
        self._k = 0
        self._stopped.clear()

    def read(self, timeout_s: float) -> np.ndarray | None:
        due = self._start + (self._k + 1) * self.block / self.sample_rate_hz
        wait_s = due - time.monotonic()
        if wait_s > timeout_s:
            self._stopped.wait(timeout_s)
            return None
        if wait_s > 0 and self._stopped.wait(wait_s):
            return None
        self._k += 1
        with self._lock:
            if not self._pending:
                return np.zeros(self.block, dtype=np.float32)
            block, playback, first, last = self._pending.popleft()
        now = time.time()  # the loop stamps a block as ending when read returns it
        if first:
            playback.started_at = now - self.block / self.sample_rate_hz
        if last:
            playback.ended_at = playback.started_at + playback.samples / self.sample_rate_hz
            playback.done.set()
        return block

    def stop(self) -> None:
        self._stopped.set()


# --- busy load ----------------------------------------------------------------------------------


class BusyLoad:
    """``with BusyLoad(n):`` runs ``n`` busy-loop Python processes (placed by the OS) and kills and
    reaps them on exit, also on an exception or Ctrl-C. They end by themselves if the bench dies."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self.procs: list[subprocess.Popen[bytes]] = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def __enter__(self) -> BusyLoad:
        try:
            for _ in range(self.processes):
                self.procs.append(
                    subprocess.Popen(
                        [sys.executable, "-c", BUSY_LOOP, str(os.getpid())],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait(timeout=10)


# --- turns against clips ------------------------------------------------------------------------


@dataclass
class TurnCount:
    """Utterances (turn ids) heard in each clip's window, and what does not match one per clip."""

    per_clip: list[list[int]]
    split: list[int]
    """Indices of clips heard as more than one utterance."""
    merged: list[int]
    """Turn ids of utterances that span more than one clip."""
    missed: list[int]
    """Indices of clips heard as no utterance."""


def count_turns(
    windows: list[tuple[float, float]], utterances: list[tuple[int, float, float | None]], tolerance_s: float = 0.25
) -> TurnCount:
    """Match utterances ``(turn_id, first_voiced_at, last_voiced_at or None)`` to clip windows
    ``(start, end)`` (wall-clock seconds); an utterance belongs to every window it overlaps."""
    per_clip: list[list[int]] = [[] for _ in windows]
    merged = []
    for turn_id, first, last in utterances:
        end = first if last is None else last
        hit = [i for i, (a, b) in enumerate(windows) if first <= b + tolerance_s and end >= a - tolerance_s]
        for i in hit:
            per_clip[i].append(turn_id)
        if len(hit) > 1:
            merged.append(turn_id)
    split = [i for i, ids in enumerate(per_clip) if len(ids) > 1]
    missed = [i for i, ids in enumerate(per_clip) if not ids]
    return TurnCount(per_clip, split, merged, missed)


def utterances(events: list[Any]) -> list[tuple[int, float, float | None]]:
    """``(turn_id, first_voiced_at, last_voiced_at or None)`` of each ``SpeechStarted`` in ``events``."""
    from edgevox.voice.events import SpeechEnded, SpeechStarted

    ended = {e.turn_id: e.last_voiced_at for e in events if isinstance(e, SpeechEnded)}
    return [(e.turn_id, e.first_voiced_at, ended.get(e.turn_id)) for e in events if isinstance(e, SpeechStarted)]
