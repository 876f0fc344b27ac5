"""One small protocol per pluggable engine.

Adapters live in their own modules (``engines/stt_faster_whisper.py``,
``engines/llm_llama_cpp.py``...) and import their heavy library *inside* the
adapter, so ``import edgevox`` stays light; a missing library raises
:class:`~edgevox.errors.MissingDependencyError` naming the ``pip install``.
Fakes for every protocol live in :mod:`edgevox.testing`.

Audio convention everywhere: mono ``numpy.float32`` arrays in [-1, 1] with an
explicit sample rate in Hertz (``sample_rate_hz``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from edgevox.runtime.context import CancelToken


@runtime_checkable
class VAD(Protocol):
    """Voice activity detection on fixed-size frames."""

    sample_rate_hz: int
    frame_ms: int
    """Frame length in milliseconds (10, 20 or 30)."""

    def is_speech(self, frame: np.ndarray) -> bool:
        """``frame``: float32 mono, exactly ``sample_rate_hz * frame_ms / 1000`` samples."""
        ...


@dataclass
class Transcript:
    text: str
    language: str = "en"
    audio_duration_s: float = 0.0
    """Length of the transcribed audio in seconds."""
    segments: list[dict[str, Any]] = field(default_factory=list)


@runtime_checkable
class STT(Protocol):
    """Speech to text on a whole utterance."""

    sample_rate_hz: int

    def transcribe(self, audio: np.ndarray, *, vocabulary: Sequence[str] = ()) -> Transcript:
        """``audio``: float32 mono at ``sample_rate_hz``. ``vocabulary`` biases recognition."""
        ...


@runtime_checkable
class AlternativeHypotheses(Protocol):
    """An STT that can list several transcripts of the same audio (beam search), best first."""

    def alternatives(self, audio: np.ndarray, n: int = 5) -> list[tuple[str, float]]:
        """Up to ``n`` (text, length-normalised log-probability) pairs, best first."""
        ...


@runtime_checkable
class LLM(Protocol):
    """A chat model that streams text.

    ``messages`` are OpenAI-style dicts (``{"role": "system"|"user"|"assistant"|"tool",
    "content": str}``). ``grammar`` is a GBNF grammar constraining the output (llama.cpp);
    engines that cannot constrain raise ``EngineError`` if given one. Generation stops
    promptly (between tokens) when ``cancel`` is cancelled; the iterator then just ends.
    """

    def stream(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        grammar: str | None = None,
        cancel: CancelToken | None = None,
    ) -> Iterator[str]: ...

    def count_tokens(self, text: str) -> int: ...


@runtime_checkable
class TTS(Protocol):
    """Text to speech; yields audio as it is synthesised (one chunk or more per sentence)."""

    sample_rate_hz: int

    def synthesize(self, text: str) -> Iterator[np.ndarray]: ...


@runtime_checkable
class AudioIn(Protocol):
    """A source of microphone-like audio.

    ``start()`` opens the device; ``read(timeout_s)`` returns the next block of float32
    mono samples at ``sample_rate_hz`` (resampled from the device rate if needed), or
    ``None`` if nothing arrived in time; it raises ``EOFError`` when a finite source
    (a WAV file) is exhausted. ``stop()`` closes the device. A device callback only
    copies frames into a queue.
    """

    sample_rate_hz: int

    def start(self) -> None: ...

    def read(self, timeout_s: float) -> np.ndarray | None: ...

    def stop(self) -> None: ...


@runtime_checkable
class AudioOut(Protocol):
    """A sink for synthesised speech.

    ``write()`` queues samples and returns at once; ``clear()`` drops everything queued
    and stops sound within one device block (barge-in, safety stop) and returns the
    number of samples that were dropped unplayed; ``played_samples`` counts samples that
    actually left the output since ``start()``; ``drain(timeout_s)`` waits until the
    queue is empty; ``playing`` is True while queued audio remains.
    """

    sample_rate_hz: int

    def start(self) -> None: ...

    def write(self, samples: np.ndarray) -> None: ...

    def clear(self) -> int: ...

    def drain(self, timeout_s: float) -> bool: ...

    @property
    def playing(self) -> bool: ...

    @property
    def played_samples(self) -> int: ...

    def stop(self) -> None: ...


@runtime_checkable
class OutputTap(Protocol):
    """An output that keeps what it sent to the device, silence included, on one continuous
    clock: sample ``k`` of the tap left for the device ``k`` samples after the first. A linear
    echo canceller needs that clock (``played_samples`` counts written samples only, so it
    stands still between replies and each reply starts at another offset to the microphone)."""

    tap_rate_hz: int
    """The tap's rate (the device's); 0 before the stream opened."""

    @property
    def tapped_samples(self) -> int:
        """Samples sent to the device since the stream opened."""
        ...

    def tap(self, lo: int, hi: int) -> np.ndarray:
        """The samples sent at ``lo``..``hi`` (float32); zeros for positions no longer (or not yet) kept."""
        ...
