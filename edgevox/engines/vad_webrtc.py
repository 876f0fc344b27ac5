"""VAD adapter over WebRTC's GMM voice activity detector (package ``webrtcvad-wheels``).

webrtcvad takes 16-bit PCM frames of exactly 10, 20 or 30 ms at 8/16/32/48 kHz;
this adapter accepts the float32 frames the rest of edgevox uses and converts.
It is cheap (~20 us per frame) and stateless enough to call from the segmenter's
thread for every frame. Not thread-safe: one instance per audio stream.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from edgevox.engines._util import as_mono_float32, float_to_pcm16, require

_RATES_HZ = (8000, 16000, 32000, 48000)
_FRAMES_MS = (10, 20, 30)
# Defaults of WebRtcVAD, which the config schema (``vad:``) takes as its own.
DEFAULT_FRAME_MS: Final = 20
DEFAULT_AGGRESSIVENESS: Final = 2


class WebRtcVAD:
    """``is_speech(frame)`` on float32 frames of ``frame_ms`` at ``sample_rate_hz``.

    ``aggressiveness`` 0..3: higher rejects more non-speech (and some quiet speech).
    """

    def __init__(
        self,
        *,
        sample_rate_hz: int = 16000,
        frame_ms: int = DEFAULT_FRAME_MS,
        aggressiveness: int = DEFAULT_AGGRESSIVENESS,
    ) -> None:
        if sample_rate_hz not in _RATES_HZ:
            raise ValueError(f"WebRtcVAD sample_rate_hz={sample_rate_hz}: must be one of {_RATES_HZ}")
        if frame_ms not in _FRAMES_MS:
            raise ValueError(f"WebRtcVAD frame_ms={frame_ms}: must be one of {_FRAMES_MS}")
        if aggressiveness not in (0, 1, 2, 3):
            raise ValueError(f"WebRtcVAD aggressiveness={aggressiveness}: must be 0, 1, 2 or 3")
        webrtcvad = require(
            "webrtcvad", package="webrtcvad-wheels", extra="vad", purpose="WebRTC voice activity detection"
        )
        self.sample_rate_hz = sample_rate_hz
        self.frame_ms = frame_ms
        self.aggressiveness = aggressiveness
        self.frame_samples = sample_rate_hz * frame_ms // 1000
        self._vad = webrtcvad.Vad(aggressiveness)

    def is_speech(self, frame: np.ndarray) -> bool:
        samples = as_mono_float32(frame)
        if samples.shape[0] != self.frame_samples:
            raise ValueError(
                f"WebRtcVAD.is_speech: frame has {samples.shape[0]} samples, expected {self.frame_samples} "
                f"({self.frame_ms} ms at {self.sample_rate_hz} Hz)"
            )
        return bool(self._vad.is_speech(float_to_pcm16(samples).tobytes(), self.sample_rate_hz))

    def speech_ratio(self, audio: np.ndarray) -> float:
        """Fraction of whole frames in ``audio`` judged speech (for tests and diagnostics)."""
        samples = as_mono_float32(audio)
        n = samples.shape[0] // self.frame_samples
        if n == 0:
            return 0.0
        hits = sum(self.is_speech(samples[i * self.frame_samples : (i + 1) * self.frame_samples]) for i in range(n))
        return hits / n
