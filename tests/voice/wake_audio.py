"""Real audio for the wake word tests: the embedded Piper voice saying a wake phrase and a command.

microWakeWord's embedded models fire on Piper's rendering of their phrases (measured: "Alexa."
0.996 at 0.9, 1.0 and 1.2 length scales; "Okay Nabu." 0.99; "Hey Jarvis." 0.996, but not "Hey,
Jarvis." with a comma: 0.1), so the tests speak "Alexa" and "Okay Nabu" without a comma.
"""

from __future__ import annotations

import numpy as np

from edgevox.engines.base import TTS
from edgevox.engines.resample import resample

RATE_HZ = 16000


def speak(tts: TTS, text: str, *, gain: float = 0.5, rate_hz: int = RATE_HZ) -> np.ndarray:
    """``text`` in the TTS voice at ``rate_hz``, its peak at ``gain`` (a person's level at the
    microphone, whatever the robot's own output gain: Piper no longer normalises each sentence)."""
    audio = resample(np.concatenate(list(tts.synthesize(text))).astype(np.float32), tts.sample_rate_hz, rate_hz)
    peak = float(np.max(np.abs(audio))) if audio.size else 0.0
    return (gain / peak * audio if peak > 0 else audio).astype(np.float32)


def silence(seconds: float, rate_hz: int = RATE_HZ) -> np.ndarray:
    return np.zeros(int(seconds * rate_hz), dtype=np.float32)


def joined(*parts: np.ndarray) -> np.ndarray:
    return np.concatenate(parts).astype(np.float32)
