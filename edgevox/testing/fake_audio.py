"""In-memory audio devices for tests: a microphone fed by the test, a speaker it can inspect.

:class:`FakeAudioIn` returns the blocks the test feeds (or an array cut into blocks)
and raises ``EOFError`` after :meth:`FakeAudioIn.close`. :class:`MemoryAudioOut`
records everything written and played; by default audio "plays" as soon as it is
written, but with ``auto_play=False`` nothing plays until the test calls
:meth:`MemoryAudioOut.advance`, so a test controls playback progress exactly
(e.g. "barge in after 0.3 s of the reply had played").
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np

from edgevox.errors import LifecycleError

_EOF = object()


class FakeAudioIn:
    """A microphone whose audio comes from the test.

    ``audio`` (optional) is cut into ``block_ms`` blocks up front (the last one
    zero-padded); :meth:`feed` adds more (any length, cut the same way);
    :meth:`close` marks the end, after which ``read`` raises ``EOFError``.
    """

    def __init__(
        self,
        audio: np.ndarray | None = None,
        *,
        sample_rate_hz: int = 16000,
        block_ms: int = 20,
        close_at_end: bool = False,
    ) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.block_samples = sample_rate_hz * block_ms // 1000
        self._queue: queue.Queue[object] = queue.Queue()
        self.started = False
        self.stopped = False
        self.blocks_read = 0
        if audio is not None:
            self.feed(audio)
        if close_at_end:
            self.close()

    def feed(self, audio: np.ndarray) -> None:
        x = np.asarray(audio, dtype=np.float32).reshape(-1)
        for i in range(0, x.shape[0], self.block_samples):
            block = x[i : i + self.block_samples]
            if block.shape[0] < self.block_samples:
                block = np.concatenate([block, np.zeros(self.block_samples - block.shape[0], dtype=np.float32)])
            self._queue.put(block)

    def feed_silence(self, duration_s: float) -> None:
        self.feed(np.zeros(int(duration_s * self.sample_rate_hz), dtype=np.float32))

    def close(self) -> None:
        self._queue.put(_EOF)

    def start(self) -> None:
        self.started = True

    def read(self, timeout_s: float) -> np.ndarray | None:
        if not self.started:
            raise LifecycleError("FakeAudioIn.read() before start()")
        try:
            item = self._queue.get(timeout=timeout_s)
        except queue.Empty:
            return None
        if item is _EOF:
            self._queue.put(_EOF)  # stay at end-of-file for later reads
            raise EOFError("FakeAudioIn closed")
        self.blocks_read += 1
        return item  # type: ignore[return-value]  # the queue holds blocks and the _EOF sentinel, handled above

    def stop(self) -> None:
        self.stopped = True


class MemoryAudioOut:
    """A speaker that records. ``auto_play=False``: audio plays only when the test calls :meth:`advance`."""

    def __init__(
        self,
        *,
        sample_rate_hz: int = 16000,
        auto_play: bool = True,
        on_play: Callable[[int, float], None] | None = None,
    ) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.auto_play = auto_play
        self.on_play = on_play
        self.writes: list[np.ndarray] = []
        """Every array passed to ``write``, in order."""
        self.clears: list[int] = []
        """Samples dropped by each ``clear()`` call."""
        self.started = False
        self.stopped = False
        self.first_write = threading.Event()
        self._cond = threading.Condition()
        self._queue: deque[np.ndarray] = deque()
        self._queued = 0
        self._played: list[np.ndarray] = []
        self._played_count = 0

    def start(self) -> None:
        self.started = True

    def write(self, samples: np.ndarray) -> None:
        if not self.started:
            raise LifecycleError("MemoryAudioOut.write() before start()")
        audio = np.asarray(samples, dtype=np.float32).reshape(-1).copy()
        with self._cond:
            self.writes.append(audio)
            self._queue.append(audio)
            self._queued += audio.shape[0]
            self._cond.notify_all()
        self.first_write.set()
        if self.auto_play:
            self.advance(audio.shape[0])

    def advance(self, samples: int) -> int:
        """Play up to ``samples`` queued samples; returns how many played."""
        played = 0
        with self._cond:
            while played < samples and self._queue:
                head = self._queue[0]
                n = min(samples - played, head.shape[0])
                self._played.append(head[:n])
                if n == head.shape[0]:
                    self._queue.popleft()
                else:
                    self._queue[0] = head[n:]
                played += n
            self._queued -= played
            self._played_count += played
            self._cond.notify_all()
        if played and self.on_play is not None:
            self.on_play(played, time.monotonic())
        return played

    def advance_s(self, seconds: float) -> int:
        return self.advance(int(round(seconds * self.sample_rate_hz)))

    def wait_for_queued(self, samples: int, timeout_s: float) -> bool:
        """Block until at least ``samples`` are queued (unplayed); True if so."""
        with self._cond:
            return self._cond.wait_for(lambda: self._queued >= samples, timeout=timeout_s)

    def clear(self) -> int:
        with self._cond:
            dropped = self._queued
            self._queue.clear()
            self._queued = 0
            self.clears.append(dropped)
            self._cond.notify_all()
            return dropped

    def drain(self, timeout_s: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._queued == 0, timeout=timeout_s)

    @property
    def playing(self) -> bool:
        return self._queued > 0

    @property
    def queued_samples(self) -> int:
        return self._queued

    @property
    def played_samples(self) -> int:
        return self._played_count

    def played_audio(self) -> np.ndarray:
        with self._cond:
            return np.concatenate(self._played) if self._played else np.zeros(0, dtype=np.float32)

    def written_audio(self) -> np.ndarray:
        with self._cond:
            return np.concatenate(self.writes) if self.writes else np.zeros(0, dtype=np.float32)

    def stop(self) -> None:
        self.stopped = True
