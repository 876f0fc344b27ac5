"""WAV-file audio: a microphone that plays a file, a speaker that records to a file, and a null speaker.

:class:`WavFileIn` yields fixed blocks at 16 kHz (resampled if the file is not),
either paced like a real microphone (``realtime=True``: block ``k`` is released at
``start + k * block_s``) or as fast as the reader asks. Trailing silence is appended
so the segmenter can see the end of the last utterance.

:class:`WavFileOut` and :class:`NullOut` implement the AudioOut contract
(``write``/``clear``/``drain``/``played_samples``). With ``realtime=False`` audio
"plays" the moment it is written (tests, batch evaluation); with ``realtime=True``
a named playback thread consumes it at the sample rate in ``block_ms`` blocks, so
``clear()`` interrupts within one block, exactly like a sound card. ``timeline=True``
also writes the silence between replies, so the output file lines up in time with
the input (for listening to a whole session, or measuring latency in the file).

Threads: ``WavFileIn.read`` runs on the caller's thread. ``WavFileOut``/``NullOut``
with ``realtime=True`` own one thread ``edgevox-<name>-playback`` from ``start()``
to ``stop()``; ``on_play(samples, t_monotonic)`` callbacks run on it.
"""

from __future__ import annotations

import threading
import time
import wave
from collections import deque
from collections.abc import Callable
from pathlib import Path

import numpy as np

from edgevox.engines._util import as_mono_float32, float_to_pcm16
from edgevox.engines.resample import resample
from edgevox.errors import EngineError, LifecycleError

OnPlay = Callable[[int, float], None]
"""``on_play(samples, t_monotonic)``: ``samples`` just left the output at ``t_monotonic``."""


MIN_RATE_HZ, MAX_RATE_HZ = 1000, 768_000
_FIX = "save it as 16-bit PCM WAV, e.g. `ffmpeg -i IN -ac 1 -ar 16000 -c:a pcm_s16le OUT.wav`"


def wav_info(path: str | Path) -> tuple[float, int]:
    """Check a WAV file's header without reading its audio: ``(duration_s, rate_hz)``.

    :class:`EngineError` (one line naming the file, the problem and the fix) when it cannot
    be opened, is not PCM, says 0 Hz or an absurd rate, or holds no audio at all.
    """
    path = Path(path)
    try:
        with wave.open(str(path), "rb") as w:
            rate, channels, frames = w.getframerate(), w.getnchannels(), w.getnframes()
    except FileNotFoundError:
        raise EngineError(f"{path}: no such file") from None
    except (OSError, wave.Error, EOFError) as exc:
        raise EngineError(f"{path}: cannot read WAV file ({exc}); {_FIX}") from None
    if not MIN_RATE_HZ <= rate <= MAX_RATE_HZ:
        raise EngineError(f"{path}: the WAV header says {rate} Hz, which no recording has; {_FIX}")
    if channels < 1:
        raise EngineError(f"{path}: the WAV header says {channels} channels; {_FIX}")
    if frames == 0:
        raise EngineError(f"{path}: the WAV file holds no audio (0 samples); record or choose a file with speech")
    return frames / rate, rate


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    """Read a PCM WAV file (8/16/24/32-bit, any channels) as float32 mono and its rate in Hz."""
    path = Path(path)
    wav_info(path)
    try:
        with wave.open(str(path), "rb") as w:
            rate, width, channels, n = w.getframerate(), w.getsampwidth(), w.getnchannels(), w.getnframes()
            raw = w.readframes(n)
    except (OSError, wave.Error, EOFError) as exc:
        raise EngineError(f"{path}: cannot read WAV file ({exc}); {_FIX}") from exc
    raw = raw[: len(raw) - len(raw) % (width * channels)]  # a truncated file ends mid-frame
    if not raw:
        raise EngineError(f"{path}: the WAV file holds no audio (its data is cut off); {_FIX}")
    if width == 1:
        data = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        data = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    elif width == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        v = np.where(v >= 1 << 23, v - (1 << 24), v)
        data = v.astype(np.float32) / float(1 << 23)
    elif width == 4:
        data = np.frombuffer(raw, dtype="<i4").astype(np.float32) / float(1 << 31)
    else:  # pragma: no cover - wave rejects other widths itself
        raise EngineError(f"{path}: unsupported sample width {width} bytes")
    if channels > 1:
        data = data.reshape(-1, channels).mean(axis=1)
    return data.astype(np.float32), rate


def write_wav(path: str | Path, audio: np.ndarray, sample_rate_hz: int) -> None:
    """Write float32 mono audio as a 16-bit PCM WAV file."""
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(int(sample_rate_hz))
        w.writeframes(float_to_pcm16(as_mono_float32(audio)).tobytes())


class WavFileIn:
    """A WAV file (or an array) read as a microphone: blocks of ``block_ms`` at ``sample_rate_hz``.

    ``read()`` raises ``EOFError`` after the last block (including the trailing silence).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        audio: np.ndarray | None = None,
        audio_rate_hz: int | None = None,
        sample_rate_hz: int = 16000,
        block_ms: int = 20,
        realtime: bool = False,
        leading_silence_s: float = 0.0,
        trailing_silence_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if path is not None and audio is None:
            data, rate = read_wav(path)
        elif audio is not None and path is None:
            if not audio_rate_hz:
                raise ValueError("WavFileIn(audio=...): audio_rate_hz is required")
            data, rate = as_mono_float32(audio), int(audio_rate_hz)
        else:
            raise ValueError("WavFileIn: give exactly one of path= or audio= (with audio_rate_hz=)")
        self.path = Path(path) if path is not None else None
        self.sample_rate_hz = sample_rate_hz
        self.block_samples = sample_rate_hz * block_ms // 1000
        self.realtime = realtime
        data = resample(data, rate, sample_rate_hz)
        lead = np.zeros(int(leading_silence_s * sample_rate_hz), dtype=np.float32)
        trail = np.zeros(int(trailing_silence_s * sample_rate_hz), dtype=np.float32)
        self._audio = np.concatenate([lead, data, trail])
        self._pos = 0
        self._clock = clock
        self._start_t: float | None = None
        self._stopped = threading.Event()

    @property
    def duration_s(self) -> float:
        """Total length, silences included, in seconds."""
        return self._audio.shape[0] / self.sample_rate_hz

    @property
    def position_s(self) -> float:
        """Audio time of the next block, in seconds from the start of the file."""
        return self._pos / self.sample_rate_hz

    def start(self) -> None:
        self._start_t = self._clock()
        self._stopped.clear()

    def read(self, timeout_s: float) -> np.ndarray | None:
        if self._start_t is None:
            raise LifecycleError("WavFileIn.read() before start()")
        if self._pos >= self._audio.shape[0]:
            raise EOFError(f"end of {self.path or 'audio'}")
        end = self._pos + self.block_samples
        if self.realtime:
            # A block is available once its last sample would have been captured.
            due = self._start_t + end / self.sample_rate_hz
            wait_s = due - self._clock()
            if wait_s > timeout_s:
                self._stopped.wait(max(0.0, timeout_s))
                return None
            if wait_s > 0 and self._stopped.wait(wait_s):
                return None
        block = self._audio[self._pos : end]
        self._pos = end
        if block.shape[0] < self.block_samples:
            block = np.concatenate([block, np.zeros(self.block_samples - block.shape[0], dtype=np.float32)])
        return block

    def stop(self) -> None:
        self._stopped.set()


class _PacedOut:
    """Shared AudioOut logic: a queue of arrays, optional real-time playback thread.

    Subclasses implement :meth:`_emit` (what happens to played audio).
    """

    def __init__(
        self,
        *,
        sample_rate_hz: int,
        realtime: bool,
        block_ms: int,
        timeline: bool,
        name: str,
        on_play: OnPlay | None,
    ) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.realtime = realtime
        self.timeline = timeline
        self.block_samples = max(1, sample_rate_hz * block_ms // 1000)
        self.on_play = on_play
        self._name = name
        self._cond = threading.Condition()
        self._queue: deque[np.ndarray] = deque()
        self._queued = 0
        self._played = 0
        self._thread: threading.Thread | None = None
        self._started = False
        self._stopping = False

    def start(self) -> None:
        with self._cond:
            if self._started:
                raise LifecycleError(f"{type(self).__name__}.start() called twice")
            self._started = True
            self._stopping = False
        self._open()
        if self.realtime:
            self._thread = threading.Thread(target=self._run, name=f"edgevox-{self._name}-playback", daemon=True)
            self._thread.start()

    def write(self, samples: np.ndarray) -> None:
        audio = as_mono_float32(samples)
        if not self._started:
            raise LifecycleError(f"{type(self).__name__}.write() before start()")
        if audio.size == 0:
            return
        if not self.realtime:
            with self._cond:
                self._played += audio.shape[0]
            self._emit(audio)
            if self.on_play is not None:
                self.on_play(audio.shape[0], time.monotonic())
            return
        with self._cond:
            self._queue.append(audio.copy())
            self._queued += audio.shape[0]
            self._cond.notify_all()

    def clear(self) -> int:
        with self._cond:
            dropped = self._queued
            self._queue.clear()
            self._queued = 0
            self._cond.notify_all()
            return dropped

    def drain(self, timeout_s: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._queued == 0, timeout=timeout_s)

    @property
    def playing(self) -> bool:
        return self._queued > 0

    @property
    def played_samples(self) -> int:
        return self._played

    def stop(self) -> None:
        with self._cond:
            if not self._started:
                return
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        self._close()
        with self._cond:
            self._started = False

    def _take(self, n: int) -> np.ndarray:
        """Up to ``n`` queued samples (caller holds the condition)."""
        parts: list[np.ndarray] = []
        need = n
        while need and self._queue:
            head = self._queue[0]
            if head.shape[0] <= need:
                parts.append(self._queue.popleft())
                need -= head.shape[0]
            else:
                parts.append(head[:need])
                self._queue[0] = head[need:]
                need = 0
        got = n - need
        self._queued -= got
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)

    def _run(self) -> None:
        block_s = self.block_samples / self.sample_rate_hz
        next_t = time.monotonic()
        while True:
            with self._cond:
                if self._stopping:
                    return
                if not self.timeline and self._queued == 0:
                    # Idle: wait for audio instead of ticking; restart the clock on wake-up.
                    self._cond.wait_for(lambda: self._queued > 0 or self._stopping)
                    if self._stopping:
                        return
                    next_t = time.monotonic()
                block = self._take(self.block_samples)
                self._played += block.shape[0]
                self._cond.notify_all()
            now = time.monotonic()
            if block.shape[0]:
                self._emit(block)
                if self.on_play is not None:
                    self.on_play(block.shape[0], now)
            if self.timeline and block.shape[0] < self.block_samples:
                self._emit(np.zeros(self.block_samples - block.shape[0], dtype=np.float32))
            next_t += block_s
            wait_s = next_t - time.monotonic()
            if wait_s > 0:
                with self._cond:
                    if self._cond.wait_for(lambda: self._stopping, timeout=wait_s):
                        return

    def _open(self) -> None:
        pass

    def _close(self) -> None:
        pass

    def _emit(self, audio: np.ndarray) -> None:
        pass


class WavFileOut(_PacedOut):
    """Writes what is played to a 16-bit mono WAV file at ``sample_rate_hz``."""

    def __init__(
        self,
        path: str | Path,
        *,
        sample_rate_hz: int = 22050,
        realtime: bool = False,
        block_ms: int = 20,
        timeline: bool = False,
        on_play: OnPlay | None = None,
    ) -> None:
        super().__init__(
            sample_rate_hz=sample_rate_hz,
            realtime=realtime,
            block_ms=block_ms,
            timeline=timeline,
            name="wavout",
            on_play=on_play,
        )
        self.path = Path(path)
        self._wav: wave.Wave_write | None = None
        self._file_lock = threading.Lock()

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        w = wave.open(str(self.path), "wb")
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(self.sample_rate_hz)
        self._wav = w

    def _emit(self, audio: np.ndarray) -> None:
        with self._file_lock:
            if self._wav is not None:
                self._wav.writeframes(float_to_pcm16(audio).tobytes())

    def _close(self) -> None:
        with self._file_lock:
            if self._wav is not None:
                self._wav.close()
                self._wav = None


class NullOut(_PacedOut):
    """Discards audio (still counts ``played_samples``, and paces it when ``realtime``)."""

    def __init__(
        self,
        *,
        sample_rate_hz: int = 22050,
        realtime: bool = False,
        block_ms: int = 20,
        on_play: OnPlay | None = None,
    ) -> None:
        super().__init__(
            sample_rate_hz=sample_rate_hz,
            realtime=realtime,
            block_ms=block_ms,
            timeline=False,
            name="nullout",
            on_play=on_play,
        )
