"""Echo guard: keep the robot from hearing itself and interrupting its own reply.

Three modes (``VoiceSettings.echo_guard``):

``"half_duplex"`` (default; safe with any speaker and microphone)
    While the robot is speaking (and ``echo_tail_ms`` after, for room echo and
    device latency) speech is still segmented and transcribed, but *only* the
    safety stop check sees it: it never barges in and never becomes a turn. So
    "stop" always works, and the robot's own voice never starts a turn. The
    cost: the user cannot interrupt with anything but a stop phrase, and a reply
    that itself says "stop" would stop the robot (a harmless false stop; see
    ``stop_phrases.py`` for why stops err on that side).

``"energy_gate"`` (full duplex, barge-in enabled)
    A frame the VAD calls speech only counts if its RMS exceeds
    ``energy_gate_ratio`` times the RMS of what the microphone is hearing of the
    output right now (the playback reference, :class:`PlaybackReference`, max
    over ``energy_gate_window_ms`` either side of the echo's position). The echo
    of a reply is quieter than (or, on a loopback, equal to) the reply itself, so
    it is gated; a user talking over it is louder than the echo and gets through.

``"off"``
    No guard (headsets, or hardware echo cancellation upstream).

The echo's position: the microphone hears the output some time after the
device took it (output buffer, the sound server, the room, the input buffer, a
busy capture thread): 40-80 ms on a PulseAudio null sink here, 300 ms and more
with a Bluetooth speaker or once PulseAudio raises a stream's latency after an
underrun on a loaded CPU. :class:`EchoDelay` measures it while the robot speaks,
by matching the microphone's frame levels to the reference's, and follows it
when it changes. Until it has a measure, the gate compares with the loudest
output of the last ``MAX_ECHO_DELAY_MS`` (safe: the robot never hears itself,
the user must speak up a little more), and the echo tail (both guards) is
extended by the measured delay.

Threading: :class:`PlaybackReference` is written by the TTS thread and read by
the capture thread; a lock guards it. :class:`EchoDelay` belongs to the capture
thread.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

ECHO_GUARD_MODES = ("aec", "half_duplex", "energy_gate", "off")
MAX_ECHO_DELAY_MS = 500
"""The longest output->input delay :class:`EchoDelay` looks for (and the gate covers before it has a measure)."""


def rms(frame: np.ndarray) -> float:
    if frame.size == 0:
        return 0.0
    return float(np.sqrt(np.mean(np.square(frame, dtype=np.float64))))


class PlaybackReference:
    """The written output audio (samples, and RMS per block), indexed by absolute output sample
    position: the levels feed the energy gate and :class:`EchoDelay`, the samples the echo
    canceller (:mod:`edgevox.voice.aec`)."""

    def __init__(self, sample_rate_hz: int, block_ms: int = 10, keep_s: float = 30.0) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.block_samples = max(1, sample_rate_hz * block_ms // 1000)
        self._lock = threading.Lock()
        # (absolute start sample, per-block RMS array, the samples)
        self._spans: deque[tuple[int, np.ndarray, np.ndarray]] = deque()
        self._keep_samples = int(keep_s * sample_rate_hz)

    def add(self, start_pos: int, samples: np.ndarray, played_pos: int) -> None:
        """Record ``samples`` that will play from absolute output sample ``start_pos``; forget
        audio that finished playing ``keep_s`` before ``played_pos`` (the device's position now:
        a long reply is written far ahead of playback, and what is still to play must stay)."""
        n = samples.shape[0] // self.block_samples * self.block_samples
        if n == 0:
            blocks = np.array([rms(samples)], dtype=np.float32)
        else:
            body = samples[:n].astype(np.float64).reshape(-1, self.block_samples)
            blocks = np.sqrt(np.mean(body * body, axis=1)).astype(np.float32)
            if samples.shape[0] > n:
                blocks = np.append(blocks, np.float32(rms(samples[n:])))
        audio = np.asarray(samples, dtype=np.float32)
        with self._lock:
            self._spans.append((start_pos, blocks, audio))
            while self._spans and self._end(self._spans[0]) < played_pos - self._keep_samples:
                self._spans.popleft()

    def _end(self, span: tuple[int, np.ndarray, np.ndarray]) -> int:
        return span[0] + span[1].shape[0] * self.block_samples

    def forget_after(self, pos: int) -> None:
        """Drop references to audio after ``pos`` (it was cleared and will never play)."""
        with self._lock:
            kept: deque[tuple[int, np.ndarray, np.ndarray]] = deque()
            for start, blocks, audio in self._spans:
                if start >= pos:
                    continue
                keep_blocks = max(1, -(-(pos - start) // self.block_samples))
                kept.append((start, blocks[:keep_blocks], audio[: pos - start]))
            self._spans = kept

    def level(self, centre_pos: int, window_samples: int) -> float:
        """Max block RMS of audio playing within ``window_samples`` of ``centre_pos`` (0 if none)."""
        lo, hi = centre_pos - window_samples, centre_pos + window_samples
        best = 0.0
        with self._lock:
            for start, blocks, _ in self._spans:
                end = start + blocks.shape[0] * self.block_samples
                if end <= lo or start >= hi:
                    continue
                i0 = max(0, (lo - start) // self.block_samples)
                i1 = min(blocks.shape[0], -(-(hi - start) // self.block_samples))
                if i1 > i0:
                    best = max(best, float(blocks[i0:i1].max()))
        return best

    def envelope(self, lo: int, hi: int) -> tuple[int, np.ndarray]:
        """Block RMS of the audio written for positions ``lo``..``hi``: (first block's position,
        levels); positions nothing was written for are 0."""
        first = lo // self.block_samples * self.block_samples
        out = np.zeros(max(0, -(-(hi - first) // self.block_samples)), dtype=np.float32)
        with self._lock:
            for start, blocks, _ in self._spans:
                end = start + blocks.shape[0] * self.block_samples
                if end <= first or start >= hi:
                    continue
                # Spans start where the last one ended, not always on a block boundary: nearest block.
                offset = round((start - first) / self.block_samples)
                i0, i1 = max(0, offset), min(out.shape[0], offset + blocks.shape[0])
                if i1 > i0:
                    out[i0:i1] = blocks[i0 - offset : i1 - offset]
        return first, out

    def samples(self, lo: int, hi: int) -> np.ndarray:
        """The audio written for positions ``lo``..``hi`` (float32); positions nothing was written
        for (silence between replies, audio cleared) are 0."""
        out = np.zeros(max(0, hi - lo), dtype=np.float32)
        with self._lock:
            for start, _, audio in self._spans:
                i0, i1 = max(lo, start), min(hi, start + audio.shape[0])
                if i1 > i0:
                    out[i0 - lo : i1 - lo] = audio[i0 - start : i1 - start]
        return out


class EchoDelay:
    """The echo path's delay, in output samples: how far behind the device's read position the
    microphone hears the output (see the module docstring).

    :meth:`observe` takes each microphone frame heard while the output plays; every
    ``every_s`` it correlates the last ``history_s`` of frame levels (in dB) with the
    reference's at each candidate delay (0 to ``max_delay_ms`` in block steps) and keeps the
    best, when its correlation reaches ``min_correlation``. A user talking over the robot
    lowers the correlation for a while; the last good measure stays until a better one."""

    def __init__(
        self,
        reference: PlaybackReference,
        frame_ms: int,
        *,
        max_delay_ms: int = MAX_ECHO_DELAY_MS,
        history_s: float = 3.0,
        every_s: float = 1.0,
        min_correlation: float = 0.5,
    ) -> None:
        self.reference = reference
        block = reference.block_samples
        self.frame_blocks = max(1, round(reference.sample_rate_hz * frame_ms / 1000 / block))
        self.max_blocks = -(-reference.sample_rate_hz * max_delay_ms // 1000 // block)
        self.min_correlation = min_correlation
        self._every = max(1, round(every_s * 1000 / frame_ms))
        self._frames: deque[tuple[int, float]] = deque(maxlen=max(self._every, round(history_s * 1000 / frame_ms)))
        self._since = 0
        self.delay_samples: int | None = None
        """The measured delay; ``None`` until the first good measure."""
        self.correlation = 0.0
        """The correlation of the last measure taken."""

    @property
    def delay_ms(self) -> float | None:
        """The measured delay in milliseconds; ``None`` until the first good measure."""
        delay = self.delay_samples
        return None if delay is None else 1000 * delay / self.reference.sample_rate_hz

    def observe(self, played_pos: int, frame_rms: float) -> bool:
        """A microphone frame heard while the output was at ``played_pos`` (capture thread).
        True when this frame gave the first measure or a different one."""
        self._frames.append((played_pos, frame_rms))
        self._since += 1
        if self._since < self._every or len(self._frames) < (self._frames.maxlen or 0):
            return False
        self._since = 0
        before = self.delay_samples
        self._measure()
        return self.delay_samples != before

    def _measure(self) -> None:
        block = self.reference.block_samples
        positions = np.array([p for p, _ in self._frames], dtype=np.int64)
        mic = _db(np.array([r for _, r in self._frames], dtype=np.float64))
        lo = int(positions.min()) - (self.max_blocks + self.frame_blocks + 1) * block
        first, levels = self.reference.envelope(lo, int(positions.max()) + block)
        power = np.concatenate([[0.0], np.cumsum(np.square(levels, dtype=np.float64))])
        lags = np.arange(self.max_blocks + 1)
        # Frame i heard at delay d ends at block (position_i - first) // block - d.
        end = np.clip(
            (positions[:, None] - first + block // 2) // block - lags[None, :], self.frame_blocks, levels.shape[0]
        )
        ref = _db(np.sqrt((power[end] - power[end - self.frame_blocks]) / self.frame_blocks))
        mic_c = mic - mic.mean()
        ref_c = ref - ref.mean(axis=0)
        spread = np.sqrt(np.sum(mic_c**2) * np.sum(ref_c**2, axis=0))
        corr = np.where(spread > 0, (mic_c[:, None] * ref_c).sum(axis=0) / np.maximum(spread, 1e-12), 0.0)
        best = int(np.argmax(corr))
        self.correlation = float(corr[best])
        if self.correlation >= self.min_correlation:
            self.delay_samples = best * block


def _db(levels: np.ndarray) -> np.ndarray:
    return 20.0 * np.log10(np.maximum(levels, 1e-4))
