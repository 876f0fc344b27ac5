"""Microphone and speaker through PortAudio (``sounddevice``).

Over 400 lines because the microphone and the speaker share one watched-stream base (opened at
the device's rate, watched, reopened) and the rules below apply to both; each of the three
classes is under 180 lines (the speaker also keeps its tap for the linear echo stage).

Rules that shaped this module (each is a bug seen in other voice frameworks):

* The PortAudio callback only copies frames (input) or pulls queued frames
  (output). Resampling, VAD and everything else happen on the reader's thread.
* Capture at the device's native rate (many USB microphones only do 44.1/48 kHz)
  and resample to 16 kHz with :class:`~edgevox.engines.resample.Resampler`.
* A stream that stops delivering (USB unplugged, PulseAudio restarted, a driver
  hiccup after hours) is noticed by a watchdog thread and reopened; every stall,
  reopen and failure is reported through ``on_event(message)`` and counted in
  ``reopen_count``.
* ``SoundDeviceOut.clear()`` empties the queue under the same lock the callback
  takes, so sound stops within one device block (barge-in, safety stop).

Threads: PortAudio's callback thread (copies only); ``edgevox-<name>-watchdog``
(reopens streams; ``on_event`` runs on it); the caller's thread for ``read`` /
``write`` (resampling). ``on_play(samples, t_monotonic)`` of :class:`SoundDeviceOut`
runs *inside the audio callback*: it must only record (append, set an Event).

``sd_module`` lets tests inject a fake ``sounddevice`` to exercise the watchdog.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Final

import numpy as np

from edgevox.engines._util import as_mono_float32, require
from edgevox.engines.resample import Resampler
from edgevox.errors import AudioDeviceError, LifecycleError

# Defaults of the streams, which the config schema (``audio.input`` / ``audio.output``) takes as its own.
INPUT_BLOCK_MS: Final = 20
OUTPUT_BLOCK_MS: Final = 10
TAP_KEEP_S: Final = 4.0
"""How much of what it sent the output keeps for a linear echo canceller (:class:`~edgevox.engines.base.OutputTap`)."""
TAP_GUARD: Final = 4096
"""Tap slots left out of a read at the old end of the ring: the callback may be overwriting them."""
"""Short playback blocks bound how fast audio stops (barge-in, the safety stop)."""
DEFAULT_LATENCY: Final = "low"

OnEvent = Callable[[str], None]
OnPlay = Callable[[int, float], None]


def _sounddevice() -> Any:
    return require("sounddevice", package="sounddevice", extra="audio", purpose="microphone and speaker access")


def find_device(sd: Any, spec: int | str | None, kind: str) -> int | None:
    """Index of the ``kind`` (``"input"``/``"output"``) device named by ``spec``.

    ``None`` = the system default; an int (or digits) = a device index; a string =
    exact name, else a case-insensitive substring. Errors list what exists.
    """
    if spec is None or spec == "" or spec == "default":
        return None
    channels_key = f"max_{kind}_channels"
    try:
        devices = list(sd.query_devices())
    except Exception as exc:  # noqa: BLE001 - PortAudio errors vary by platform
        raise AudioDeviceError(f"cannot list audio devices: {exc}") from exc
    usable = [(i, d) for i, d in enumerate(devices) if d.get(channels_key, 0) > 0]
    listing = ", ".join(f"{i}: {d['name']!r}" for i, d in usable) or "none"
    if isinstance(spec, int) or (isinstance(spec, str) and spec.strip().isdigit()):
        index = int(spec)
        if any(i == index for i, _ in usable):
            return index
        raise AudioDeviceError(
            f"audio {kind} device {index} does not exist or has no {kind} channels; {kind} devices: {listing}"
        )
    name = str(spec).strip().lower()
    exact = [i for i, d in usable if d["name"].lower() == name]
    if exact:
        return exact[0]
    partial = [i for i, d in usable if name in d["name"].lower()]
    if partial:
        return partial[0]
    raise AudioDeviceError(f"no audio {kind} device matches {spec!r}; {kind} devices: {listing}")


class _WatchedStream:
    """Opens a PortAudio stream and reopens it when its callback stops being called."""

    _kind = "input"

    def __init__(
        self,
        *,
        device: int | str | None,
        device_rate_hz: int | None,
        block_ms: int,
        watchdog_timeout_s: float,
        on_event: OnEvent | None,
        sd_module: Any,
        name: str,
        latency: str | float = "low",
    ) -> None:
        if not (latency in ("low", "high") or (isinstance(latency, (int, float)) and latency > 0)):
            raise ValueError(f"audio latency = {latency!r}: use 'low', 'high' or seconds > 0")
        self._sd = sd_module if sd_module is not None else _sounddevice()
        self.device_spec = device
        self.block_ms = block_ms
        self.latency = latency
        """PortAudio's suggested latency: ``"low"`` (default; barge-in and the safety stop cut
        audio sooner, first audio comes sooner), ``"high"`` (robust against underruns on a busy
        machine) or seconds."""
        self.watchdog_timeout_s = watchdog_timeout_s
        self.on_event = on_event
        self.reopen_count = 0
        self.status_flags = 0
        """Callbacks that reported an overflow/underflow status."""
        self._name = name
        self._requested_rate = device_rate_hz
        self.device_rate_hz = 0
        self._device_index: int | None = None
        self._stream: Any = None
        self._last_callback_t = 0.0
        self._stop = threading.Event()
        self._watchdog: threading.Thread | None = None
        self._started = False

    def start(self) -> None:
        if self._started:
            raise LifecycleError(f"{type(self).__name__}.start() called twice")
        self._device_index = find_device(self._sd, self.device_spec, self._kind)
        self._open()
        self._started = True
        self._stop.clear()
        if self.watchdog_timeout_s > 0:
            self._watchdog = threading.Thread(target=self._watch, name=f"edgevox-{self._name}-watchdog", daemon=True)
            self._watchdog.start()

    def stop(self) -> None:
        if not self._started:
            return
        self._stop.set()
        if self._watchdog is not None:
            self._watchdog.join(timeout=5.0)
            self._watchdog = None
        self._close()
        self._started = False

    def _device_rate(self) -> int:
        if self._requested_rate:
            return int(self._requested_rate)
        try:
            info = self._sd.query_devices(self._device_index, self._kind)
        except Exception as exc:  # noqa: BLE001
            raise AudioDeviceError(f"cannot query audio {self._kind} device {self.device_spec!r}: {exc}") from exc
        return int(info["default_samplerate"])

    def _open(self) -> None:
        rate = self._device_rate()
        stream_cls = self._sd.InputStream if self._kind == "input" else self._sd.OutputStream
        try:
            stream = stream_cls(
                samplerate=rate,
                blocksize=max(1, rate * self.block_ms // 1000),
                device=self._device_index,
                channels=1,
                dtype="float32",
                latency=self.latency,
                callback=self._callback,
            )
            stream.start()
        except Exception as exc:  # noqa: BLE001 - sounddevice.PortAudioError and OS errors
            raise AudioDeviceError(
                f"cannot open audio {self._kind} device {self.device_spec or 'default'!r} at {rate} Hz: {exc}"
            ) from exc
        self.device_rate_hz = rate
        self._on_opened(rate)
        self._last_callback_t = time.monotonic()
        self._stream = stream

    def _close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is None:
            return
        try:
            stream.abort()
            stream.close()
        except Exception:  # noqa: BLE001 - a dead device may fail to close; it is being replaced anyway
            pass

    def _watch(self) -> None:
        check_s = min(0.25, self.watchdog_timeout_s / 4)
        backoff_s = self.watchdog_timeout_s
        while not self._stop.wait(check_s):
            silent_s = time.monotonic() - self._last_callback_t
            stream = self._stream
            inactive = stream is not None and not getattr(stream, "active", True)
            if silent_s < self.watchdog_timeout_s and not inactive and stream is not None:
                continue
            why = "stream became inactive" if inactive else f"no audio callback for {silent_s:.1f} s"
            self._emit(f"audio {self._kind} {self.device_spec or 'default'!r}: {why}; reopening")
            self._close()
            try:
                self._device_index = find_device(self._sd, self.device_spec, self._kind)
                self._open()
            except AudioDeviceError as exc:
                self._emit(f"audio {self._kind}: reopen failed ({exc}); retrying in {backoff_s:.1f} s")
                if self._stop.wait(backoff_s):
                    return
                continue
            self.reopen_count += 1
            self._emit(f"audio {self._kind} {self.device_spec or 'default'!r}: reopened (reopen #{self.reopen_count})")

    def _emit(self, message: str) -> None:
        if self.on_event is not None:
            try:
                self.on_event(message)
            except Exception:  # noqa: BLE001 - a broken reporter must not kill the watchdog
                pass

    def _on_opened(self, device_rate_hz: int) -> None:
        pass

    def _callback(self, *args: Any) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class SoundDeviceIn(_WatchedStream):
    """A microphone: ``read()`` returns blocks of exactly ``block_ms`` at ``sample_rate_hz`` (16 kHz)."""

    _kind = "input"

    def __init__(
        self,
        *,
        device: int | str | None = None,
        sample_rate_hz: int = 16000,
        device_rate_hz: int | None = None,
        block_ms: int = INPUT_BLOCK_MS,
        max_queue_blocks: int = 250,
        watchdog_timeout_s: float = 3.0,
        on_event: OnEvent | None = None,
        sd_module: Any = None,
        latency: str | float = DEFAULT_LATENCY,
    ) -> None:
        super().__init__(
            device=device,
            device_rate_hz=device_rate_hz,
            block_ms=block_ms,
            watchdog_timeout_s=watchdog_timeout_s,
            on_event=on_event,
            sd_module=sd_module,
            name="mic",
            latency=latency,
        )
        self.sample_rate_hz = sample_rate_hz
        self.block_samples = sample_rate_hz * block_ms // 1000
        self.dropped_blocks = 0
        """Device blocks dropped because the reader fell behind (queue full; oldest dropped)."""
        self._queue: queue.Queue[tuple[int, np.ndarray]] = queue.Queue(maxsize=max_queue_blocks)
        self._generation = 0
        self._resampler: Resampler | None = None
        self._resampler_generation = -1
        self._pending = np.zeros(0, dtype=np.float32)

    def _on_opened(self, device_rate_hz: int) -> None:
        # A new stream starts a new generation: blocks still queued from the old one
        # are resampled with a fresh filter state (no click from stale history).
        self._generation += 1

    def _callback(self, indata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        # Audio thread: copy and enqueue only.
        self._last_callback_t = time.monotonic()
        if status:
            self.status_flags += 1
        item = (self._generation, indata[:, 0].copy())
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                pass
            self.dropped_blocks += 1
            try:
                self._queue.put_nowait(item)
            except queue.Full:
                pass

    def read(self, timeout_s: float) -> np.ndarray | None:
        """Next block (caller's thread); ``None`` when ``timeout_s`` passes without enough audio."""
        if not self._started:
            raise LifecycleError("SoundDeviceIn.read() before start()")
        deadline = time.monotonic() + timeout_s
        while self._pending.shape[0] < self.block_samples:
            remaining = deadline - time.monotonic()
            try:
                generation, block = self._queue.get(timeout=max(0.0, remaining))
            except queue.Empty:
                return None
            if self._resampler is None or generation != self._resampler_generation:
                self._resampler = Resampler(self.device_rate_hz, self.sample_rate_hz)
                self._resampler_generation = generation
            self._pending = np.concatenate([self._pending, self._resampler.process(block)])
        out = self._pending[: self.block_samples]
        self._pending = self._pending[self.block_samples :]
        return out


class SoundDeviceOut(_WatchedStream):
    """A speaker: ``write()`` queues audio at ``sample_rate_hz``; the callback plays it at the device rate."""

    _kind = "output"

    def __init__(
        self,
        *,
        device: int | str | None = None,
        sample_rate_hz: int = 22050,
        device_rate_hz: int | None = None,
        block_ms: int = OUTPUT_BLOCK_MS,
        watchdog_timeout_s: float = 3.0,
        on_event: OnEvent | None = None,
        on_play: OnPlay | None = None,
        sd_module: Any = None,
        latency: str | float = DEFAULT_LATENCY,
    ) -> None:
        super().__init__(
            device=device,
            device_rate_hz=device_rate_hz,
            block_ms=block_ms,
            watchdog_timeout_s=watchdog_timeout_s,
            on_event=on_event,
            sd_module=sd_module,
            name="speaker",
            latency=latency,
        )
        self.sample_rate_hz = sample_rate_hz
        self.on_play = on_play
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()
        self._queue: deque[np.ndarray] = deque()
        self._queued_dev = 0
        self._written_in = 0
        """Samples (at ``sample_rate_hz``) accepted by ``write`` since ``start()``."""
        self._dropped_in = 0
        """Of those, samples dropped unplayed by ``clear``."""
        self._played_in = 0
        self._resampler: Resampler | None = None
        self.tap_rate_hz = 0
        self._tap = np.zeros(0, dtype=np.float32)
        self._tapped = 0

    def _on_opened(self, device_rate_hz: int) -> None:
        with self._write_lock:
            self._resampler = Resampler(self.sample_rate_hz, device_rate_hz)
            self._tap = np.zeros(int(TAP_KEEP_S * device_rate_hz), dtype=np.float32)
            self._tapped = 0
            self.tap_rate_hz = device_rate_hz

    @property
    def tapped_samples(self) -> int:
        """Samples (at the device's rate, silence included) the callback sent since the stream opened."""
        return self._tapped

    def tap(self, lo: int, hi: int) -> np.ndarray:
        """What the callback sent at device positions ``lo``..``hi`` (:class:`~edgevox.engines.base.OutputTap`)."""
        out = np.zeros(max(0, hi - lo), dtype=np.float32)
        ring, end = self._tap, self._tapped
        size = ring.shape[0]
        # The oldest slots are the ones the callback overwrites next: leave a block's worth out.
        pos, b = max(lo, end - size + TAP_GUARD, 0), min(hi, end)
        while pos < b:
            n = min(b - pos, size - pos % size)
            out[pos - lo : pos - lo + n] = ring[pos % size : pos % size + n]
            pos += n
        return out

    def _callback(self, outdata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        # Audio thread: pull queued samples, pad with silence. No allocation beyond slicing.
        now = time.monotonic()
        self._last_callback_t = now
        if status:
            self.status_flags += 1
        filled = 0
        with self._cond:
            while filled < frames and self._queue:
                head = self._queue[0]
                n = min(frames - filled, head.shape[0])
                outdata[filled : filled + n, 0] = head[:n]
                if n == head.shape[0]:
                    self._queue.popleft()
                else:
                    self._queue[0] = head[n:]
                filled += n
            self._queued_dev -= filled
            if filled and self._queued_dev == 0:
                self._cond.notify_all()
        if filled < frames:
            outdata[filled:] = 0
        self._keep(outdata[:, 0])
        if filled and self.on_play is not None:
            # outputBufferDacTime - currentTime = how long until this block is audible.
            ahead_s = 0.0
            try:
                ahead_s = float(time_info.outputBufferDacTime - time_info.currentTime)
            except (AttributeError, TypeError):
                pass
            self.on_play(filled, now + (ahead_s if 0.0 < ahead_s < 1.0 else 0.0))

    def _keep(self, block: np.ndarray) -> None:
        """Audio thread: copy what was sent into the tap's ring (no allocation beyond slicing)."""
        ring = self._tap
        size, n = ring.shape[0], block.shape[0]
        if size == 0 or n > size:
            return
        i = self._tapped % size
        first = min(n, size - i)
        ring[i : i + first] = block[:first]
        ring[: n - first] = block[first:]
        self._tapped += n

    def write(self, samples: np.ndarray) -> None:
        """Queue audio (caller's thread: resampling happens here, not in the callback)."""
        if not self._started:
            raise LifecycleError("SoundDeviceOut.write() before start()")
        audio = as_mono_float32(samples)
        if audio.size == 0:
            return
        with self._write_lock:
            assert self._resampler is not None
            converted = self._resampler.process(audio)
            with self._cond:
                self._queue.append(converted)
                self._queued_dev += converted.shape[0]
                self._written_in += audio.shape[0]

    def clear(self) -> int:
        """Drop everything queued (sound stops within one block); returns dropped samples at ``sample_rate_hz``."""
        with self._write_lock:
            with self._cond:
                dropped = self._written_in - self._dropped_in - self._played_locked()
                self._dropped_in += dropped
                self._queue.clear()
                self._queued_dev = 0
                self._cond.notify_all()
            if self._resampler is not None:
                self._resampler.reset()
        return dropped

    def drain(self, timeout_s: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._queued_dev == 0, timeout=timeout_s)

    @property
    def playing(self) -> bool:
        return self._queued_dev > 0

    @property
    def played_samples(self) -> int:
        """Samples (at ``sample_rate_hz``) handed to the device since ``start()``.

        Counted in the caller's samples, not converted back from the device's: once the
        queue is empty it equals every sample written minus those cleared, exactly. (Converting
        device samples back rounds, and the resampler holds a few samples of filter delay, so
        the count could stop one short of a turn's end and the turn never finish.)"""
        with self._cond:
            return self._played_locked()

    def _played_locked(self) -> int:
        handed = self._written_in - self._dropped_in
        waiting = self._to_input_units(self._queued_dev)
        self._played_in = max(self._played_in, handed - waiting)  # never goes back
        return self._played_in

    def _to_input_units(self, device_samples: int) -> int:
        if not self.device_rate_hz:
            return device_samples
        return int(round(device_samples * self.sample_rate_hz / self.device_rate_hz))

    def stop(self) -> None:
        super().stop()
        with self._cond:
            self._queue.clear()
            self._queued_dev = 0
            self._cond.notify_all()
