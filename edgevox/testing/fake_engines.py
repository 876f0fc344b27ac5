"""Deterministic fakes for the VAD, STT, LLM and TTS protocols.

They never sleep: anything that should take time is driven by the test through
``threading.Event``/``Semaphore`` gates, so tests are fast and exact. Every fake
records what it was called with.

Threads: each fake may be called from any thread; their records are guarded by a
lock. Gates block the *calling* thread (the engine worker), never the test.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from edgevox.engines.base import Transcript
from edgevox.errors import EngineError

if TYPE_CHECKING:
    from edgevox.runtime.context import CancelToken


class FakeVAD:
    """Speech = frame RMS above ``threshold_rms``. Validates the frame length like the real one."""

    def __init__(self, *, sample_rate_hz: int = 16000, frame_ms: int = 30, threshold_rms: float = 0.02) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.frame_ms = frame_ms
        self.threshold_rms = threshold_rms
        self.frame_samples = sample_rate_hz * frame_ms // 1000
        self.frames_seen = 0

    def is_speech(self, frame: np.ndarray) -> bool:
        x = np.asarray(frame, dtype=np.float32).reshape(-1)
        if x.shape[0] != self.frame_samples:
            raise ValueError(f"FakeVAD.is_speech: frame has {x.shape[0]} samples, expected {self.frame_samples}")
        self.frames_seen += 1
        return bool(np.sqrt(np.mean(x * x)) > self.threshold_rms)


@dataclass
class STTCall:
    samples: int
    vocabulary: tuple[str, ...]


class FakeSTT:
    """Scripted transcripts.

    ``script`` is one of: a sequence (consumed in order, one per call), a mapping
    from audio length in samples to text, or a function ``audio -> text``. When a
    sequence runs out, ``default`` is returned, or if ``default`` is None an
    :class:`EngineError` says so. ``gate``: if given, each call waits for it to be set
    (tests use it to hold a transcription "in progress").
    """

    def __init__(
        self,
        script: Sequence[str] | Mapping[int, str] | Callable[[np.ndarray], str] = (),
        *,
        sample_rate_hz: int = 16000,
        default: str | None = "",
        gate: threading.Event | None = None,
        gate_timeout_s: float = 10.0,
    ) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.default = default
        self.gate = gate
        self.gate_timeout_s = gate_timeout_s
        self.calls: list[STTCall] = []
        self.started = threading.Event()
        """Set when a call begins (before waiting on ``gate``)."""
        self._lock = threading.Lock()
        self._fn: Callable[[np.ndarray], str] | None = None
        self._map: Mapping[int, str] | None = None
        self._queue: deque[str] = deque()
        if callable(script):
            self._fn = script
        elif isinstance(script, Mapping):
            self._map = script
        else:
            self._queue.extend(script)

    def push(self, *texts: str) -> None:
        """Append transcripts to the queue."""
        with self._lock:
            self._queue.extend(texts)

    def transcribe(self, audio: np.ndarray, *, vocabulary: Sequence[str] = ()) -> Transcript:
        samples = int(np.asarray(audio).reshape(-1).shape[0])
        with self._lock:
            self.calls.append(STTCall(samples=samples, vocabulary=tuple(vocabulary)))
        self.started.set()
        if self.gate is not None and not self.gate.wait(self.gate_timeout_s):
            raise EngineError(f"FakeSTT: gate not opened within {self.gate_timeout_s} s")
        text = self._next_text(audio, samples)
        return Transcript(text=text, audio_duration_s=samples / self.sample_rate_hz)

    def _next_text(self, audio: np.ndarray, samples: int) -> str:
        if self._fn is not None:
            return self._fn(audio)
        if self._map is not None:
            if samples in self._map:
                return self._map[samples]
            if self.default is None:
                raise EngineError(f"FakeSTT: no transcript for {samples} samples; known lengths: {sorted(self._map)}")
            return self.default
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.default is None:
            raise EngineError(f"FakeSTT: scripted transcripts exhausted after {len(self.calls) - 1} calls")
        return self.default


@dataclass
class LLMCall:
    """What :class:`ScriptedLLM` received in one call."""

    messages: list[dict[str, Any]]
    grammar: str | None
    max_tokens: int
    temperature: float
    stop: tuple[str, ...]
    tokens_yielded: int = 0
    cancelled: bool = False
    finished: threading.Event = field(default_factory=threading.Event)


def split_tokens(text: str) -> list[str]:
    """Word-level "tokens" that concatenate back to ``text`` (leading spaces kept on words)."""
    return re.findall(r"\s*\S+|\s+$", text)


class ScriptedLLM:
    """An LLM that streams scripted replies word by word.

    ``replies``: a sequence consumed one per call, or a function ``(messages, grammar) -> str``.
    ``gate``: if given, each token waits for one ``gate.release()`` by the test (a
    cancel also wakes it), so a test can hold generation mid-stream without sleeping.
    ``token_delay_s``: each token takes this long, like a slow CPU (a cancel cuts the wait short).
    ``started`` is set when a call begins; ``token_event`` is set after every token.
    Cancellation is checked before and after every token, like the real engine.
    Calls are serialised by a lock (like the real engine); ``peak_concurrency`` lets a
    test assert nobody streamed twice at once.
    """

    def __init__(
        self,
        replies: Sequence[str] | Callable[[list[dict[str, Any]], str | None], str] = (),
        *,
        default: str | None = None,
        gate: threading.Semaphore | None = None,
        gate_timeout_s: float = 10.0,
        token_delay_s: float = 0.0,
    ) -> None:
        self._fn = replies if callable(replies) else None
        self.token_delay_s = token_delay_s
        self._queue: deque[str] = deque() if callable(replies) else deque(replies)
        self.default = default
        self.gate = gate
        self.gate_timeout_s = gate_timeout_s
        self.calls: list[LLMCall] = []
        self.started = threading.Event()
        self.token_event = threading.Event()
        self.peak_concurrency = 0
        self._active = 0
        self._lock = threading.Lock()
        self._inference = threading.Lock()

    def push(self, *replies: str) -> None:
        with self._lock:
            self._queue.extend(replies)

    def stream(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        grammar: str | None = None,
        cancel: CancelToken | None = None,
    ) -> Iterator[str]:
        call = LLMCall(
            messages=[dict(m) for m in messages],
            grammar=grammar,
            max_tokens=max_tokens,
            temperature=temperature,
            stop=tuple(stop),
        )
        return self._run(call, cancel)

    def _run(self, call: LLMCall, cancel: CancelToken | None) -> Iterator[str]:
        with self._inference:
            with self._lock:
                self.calls.append(call)
                self._active += 1
                self.peak_concurrency = max(self.peak_concurrency, self._active)
                reply = self._reply(call)
            self.started.set()
            gate = self.gate
            remove = cancel.on_cancel(lambda _r: gate.release()) if (cancel and gate) else None
            try:
                for stop_text in call.stop:
                    if stop_text and stop_text in reply:
                        reply = reply[: reply.index(stop_text)]
                for i, token in enumerate(split_tokens(reply)):
                    if i >= call.max_tokens or (cancel is not None and cancel.cancelled):
                        break
                    if self.gate is not None:
                        if not self.gate.acquire(timeout=self.gate_timeout_s):
                            raise EngineError(f"ScriptedLLM: gate not released within {self.gate_timeout_s} s")
                        if cancel is not None and cancel.cancelled:
                            break
                    if self.token_delay_s > 0:
                        if cancel is not None and cancel.wait(self.token_delay_s):
                            break
                        if cancel is None:
                            threading.Event().wait(self.token_delay_s)
                    call.tokens_yielded += 1
                    self.token_event.set()
                    yield token
                call.cancelled = bool(cancel is not None and cancel.cancelled)
            finally:
                if remove is not None:
                    remove()
                with self._lock:
                    self._active -= 1
                call.finished.set()

    def _reply(self, call: LLMCall) -> str:
        if self._fn is not None:
            return self._fn(call.messages, call.grammar)
        if self._queue:
            return self._queue.popleft()
        if self.default is None:
            raise EngineError(f"ScriptedLLM: no scripted reply left for call #{len(self.calls)}")
        return self.default

    def complete(self, messages: Sequence[dict[str, Any]], **kwargs: Any) -> str:
        return "".join(self.stream(messages, **kwargs))

    def count_tokens(self, text: str) -> int:
        return len(split_tokens(text))


@dataclass
class TTSCall:
    text: str
    samples: int = 0


class FakeTTS:
    """A deterministic tone whose length is proportional to the text (``ms_per_char``).

    Yields one array per sentence (split after ``.!?``), like Piper. ``gate``: each
    sentence waits for one ``release()``.
    """

    def __init__(
        self,
        *,
        sample_rate_hz: int = 16000,
        ms_per_char: float = 10.0,
        tone_hz: float = 220.0,
        amplitude: float = 0.3,
        gate: threading.Semaphore | None = None,
        gate_timeout_s: float = 10.0,
    ) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.ms_per_char = ms_per_char
        self.tone_hz = tone_hz
        self.amplitude = amplitude
        self.gate = gate
        self.gate_timeout_s = gate_timeout_s
        self.calls: list[TTSCall] = []
        self._lock = threading.Lock()

    def samples_for(self, text: str) -> int:
        return int(round(len(text) * self.ms_per_char * self.sample_rate_hz / 1000))

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        call = TTSCall(text=text)
        with self._lock:
            self.calls.append(call)
        for sentence in re.findall(r"[^.!?]+[.!?]*", text):
            if not sentence.strip():
                continue
            if self.gate is not None and not self.gate.acquire(timeout=self.gate_timeout_s):
                raise EngineError(f"FakeTTS: gate not released within {self.gate_timeout_s} s")
            n = self.samples_for(sentence.strip())
            t = np.arange(n, dtype=np.float32) / self.sample_rate_hz
            audio = (self.amplitude * np.sin(2 * np.pi * self.tone_hz * t)).astype(np.float32)
            call.samples += n
            yield audio
