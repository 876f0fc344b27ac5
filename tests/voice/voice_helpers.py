"""Helpers for the voice tests: an event recorder, fake agents written as text generators, and
synthetic signals (FakeVAD hears > 0.02 RMS)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterator

import numpy as np

from edgevox.agents.base import AgentBase, AgentResult, AgentStream, context_or_new
from edgevox.agents.events import ReplyDelta
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event


class Recorder:
    """Collects every event on a bus; tests wait on a predicate instead of sleeping."""

    def __init__(self, bus: EventBus) -> None:
        self.events: list[Event] = []
        self._cond = threading.Condition()
        self._sub = bus.add_observer(self._on, name="test-recorder")

    def _on(self, event: Event) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def of(self, cls: type[Event], **fields: object) -> list[Event]:
        with self._cond:
            return [e for e in self.events if isinstance(e, cls) and all(getattr(e, k) == v for k, v in fields.items())]

    def wait_for(self, cls: type[Event], timeout_s: float = 5.0, **fields: object) -> Event:
        with self._cond:
            ok = self._cond.wait_for(lambda: self._match(cls, fields), timeout=timeout_s)
        if not ok:
            kinds = [e.kind for e in self.events]
            raise AssertionError(f"no {cls.__name__} {fields} within {timeout_s} s; saw {kinds}")
        return self.of(cls, **fields)[0]

    def wait_until(self, predicate: Callable[[], bool], timeout_s: float = 5.0) -> None:
        with self._cond:
            assert self._cond.wait_for(predicate, timeout=timeout_s), "condition not reached in time"

    def _match(self, cls: type[Event], fields: dict[str, object]) -> bool:
        return any(isinstance(e, cls) and all(getattr(e, k) == v for k, v in fields.items()) for e in self.events)


class TextAgent(AgentBase):
    """A fake agent written as a generator of reply text: subclasses implement ``reply(task, ctx)``;
    ``stream`` wraps its deltas as ``ReplyDelta`` events in an ``AgentStream`` (the one contract)."""

    name = "text"

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        deltas = self.reply(task, context_or_new(ctx))

        def run() -> Generator[ReplyDelta, None, AgentResult]:
            parts: list[str] = []
            for delta in deltas:
                parts.append(delta)
                yield ReplyDelta(text=delta)
            return AgentResult(text="".join(parts), agent=self.name)

        return AgentStream(run())

    def reply(self, task: str, ctx: AgentContext) -> Iterator[str]:
        raise NotImplementedError


def tone(duration_s: float, amplitude: float = 0.3, rate_hz: int = 16000, freq_hz: float = 300.0) -> np.ndarray:
    t = np.arange(int(duration_s * rate_hz), dtype=np.float32) / rate_hz
    return (amplitude * np.sin(2 * np.pi * freq_hz * t)).astype(np.float32)


def silence(duration_s: float, rate_hz: int = 16000) -> np.ndarray:
    return np.zeros(int(duration_s * rate_hz), dtype=np.float32)


class Quieter:
    """The real Piper voice with the robot's speaker turned down (a user near the microphone is
    louder than the robot, so the energy gate can hear them over it)."""

    def __init__(self, tts, gain: float) -> None:
        self.tts, self.gain, self.sample_rate_hz = tts, gain, tts.sample_rate_hz

    def synthesize(self, text: str):
        for audio in self.tts.synthesize(text):
            yield (self.gain * audio).astype(audio.dtype)
