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
    ``energy_gate_ratio`` times the RMS of what the output is playing right now
    (the playback reference, :class:`PlaybackReference`, max over a window that
    covers the device's output->input latency). The echo of a reply is quieter
    than (or, on a loopback, equal to) the reply itself, so it is gated; a user
    talking over it is louder than the echo and gets through.

``"off"``
    No guard (headsets, or hardware echo cancellation upstream).

Threading: :class:`PlaybackReference` is written by the TTS thread and read by
the capture thread; a lock guards it.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

ECHO_GUARD_MODES = ("half_duplex", "energy_gate", "off")


def rms(frame: np.ndarray) -> float:
    if frame.size == 0:
        return 0.0
    return float(np.sqrt(np.mean(np.square(frame, dtype=np.float64))))


class PlaybackReference:
    """RMS of written output audio per block, indexed by absolute output sample position."""

    def __init__(self, sample_rate_hz: int, block_ms: int = 10, keep_s: float = 30.0) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.block_samples = max(1, sample_rate_hz * block_ms // 1000)
        self._lock = threading.Lock()
        # (absolute start sample, per-block RMS array)
        self._spans: deque[tuple[int, np.ndarray]] = deque()
        self._keep_samples = int(keep_s * sample_rate_hz)

    def add(self, start_pos: int, samples: np.ndarray) -> None:
        """Record ``samples`` that will play from absolute output sample ``start_pos``."""
        n = samples.shape[0] // self.block_samples * self.block_samples
        if n == 0:
            blocks = np.array([rms(samples)], dtype=np.float32)
        else:
            body = samples[:n].astype(np.float64).reshape(-1, self.block_samples)
            blocks = np.sqrt(np.mean(body * body, axis=1)).astype(np.float32)
            if samples.shape[0] > n:
                blocks = np.append(blocks, np.float32(rms(samples[n:])))
        with self._lock:
            self._spans.append((start_pos, blocks))
            while self._spans and self._spans[0][0] < start_pos - self._keep_samples:
                self._spans.popleft()

    def forget_after(self, pos: int) -> None:
        """Drop references to audio after ``pos`` (it was cleared and will never play)."""
        with self._lock:
            kept: deque[tuple[int, np.ndarray]] = deque()
            for start, blocks in self._spans:
                if start >= pos:
                    continue
                keep_blocks = max(1, -(-(pos - start) // self.block_samples))
                kept.append((start, blocks[:keep_blocks]))
            self._spans = kept

    def level(self, centre_pos: int, window_samples: int) -> float:
        """Max block RMS of audio playing within ``window_samples`` of ``centre_pos`` (0 if none)."""
        lo, hi = centre_pos - window_samples, centre_pos + window_samples
        best = 0.0
        with self._lock:
            for start, blocks in self._spans:
                end = start + blocks.shape[0] * self.block_samples
                if end <= lo or start >= hi:
                    continue
                i0 = max(0, (lo - start) // self.block_samples)
                i1 = min(blocks.shape[0], -(-(hi - start) // self.block_samples))
                if i1 > i0:
                    best = max(best, float(blocks[i0:i1].max()))
        return best
