"""Null engines: what a typed-input or silent application runs in place of a device or model.

Typed input (``audio.input.source: text``) and no audio output (``audio.output.sink:
none``) still run the same :class:`~edgevox.voice.loop.VoiceLoop`, so the safety stop, turn
ids and events are identical; these objects take the missing parts' places and load nothing.
(:class:`~edgevox.engines.audio_wav.NullOut` is the null speaker.)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import numpy as np

from edgevox.engines.base import Transcript
from edgevox.errors import EngineError


class NoAudioIn:
    """The audio input of a typed-input application: it never delivers audio.

    ``read`` waits (on the loop's capture thread) until ``stop()`` or the timeout and
    returns None; nothing is opened, so no sound card is needed.
    """

    def __init__(self, sample_rate_hz: int = 16000) -> None:
        self.sample_rate_hz = sample_rate_hz
        self._stopped = threading.Event()

    def start(self) -> None:
        self._stopped.clear()

    def read(self, timeout_s: float) -> np.ndarray | None:
        self._stopped.wait(timeout_s)
        return None

    def stop(self) -> None:
        self._stopped.set()


class NoSTT:
    """The recognizer of a typed-input application. It is never given audio (NoAudioIn has none)."""

    def __init__(self, sample_rate_hz: int = 16000) -> None:
        self.sample_rate_hz = sample_rate_hz

    def transcribe(self, audio: np.ndarray, *, vocabulary: Sequence[str] = ()) -> Transcript:
        raise EngineError("this application takes typed input (audio.input.source: text); it has no speech recognizer")


class NoTTS:
    """The voice of an application without audio output: replies are text only (no samples)."""

    sample_rate_hz = 16000

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        return iter(())
