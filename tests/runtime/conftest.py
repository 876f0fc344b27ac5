"""Shared helpers for runtime tests: a fake clock, simple agents and a bus fixture."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from edgevox.runtime.bus import EventBus
from edgevox.runtime.events import AgentStateEvent, Event


@dataclass(kw_only=True)
class Ping(Event):
    """A data event for tests."""

    kind: ClassVar[str] = "test.ping"
    n: int = 0


@dataclass(kw_only=True)
class Pong(Event):
    kind: ClassVar[str] = "test.pong"
    n: int = 0


@dataclass(kw_only=True)
class Tick(Event):
    """A stream event for tests (like a reply delta): yields to data events in a full mailbox."""

    kind: ClassVar[str] = "test.tick"
    stream: ClassVar[bool] = True
    n: int = 0


class FakeClock:
    """A manual monotonic clock: ``clock()`` reads it, ``advance(s)`` moves it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        self.now += seconds
        return self.now

    def set(self, value: float) -> None:
        self.now = value


class RecordingAgent:
    """Records tasks; ``behaviour(task, ctx)`` decides what run() does (default: return task)."""

    def __init__(self, name: str = "rec", behaviour: Any = None) -> None:
        self.name = name
        self.behaviour = behaviour
        self.tasks: list[Any] = []
        self.threads: list[threading.Thread] = []
        self.ctxs: list[Any] = []
        self.cond = threading.Condition()

    def run(self, task: Any, ctx: Any) -> Any:
        with self.cond:
            self.tasks.append(task)
            self.threads.append(threading.current_thread())
            self.ctxs.append(ctx)
            self.cond.notify_all()
        if self.behaviour is not None:
            return self.behaviour(task, ctx)
        return task

    def wait_for(self, count: int, timeout_s: float = 5.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.tasks) >= count, timeout_s)


class StateLog:
    """Records AgentStateEvents from a bus; tests wait on it (a condition, never a sleep)."""

    def __init__(self, bus: EventBus) -> None:
        self.events: list[AgentStateEvent] = []
        self.cond = threading.Condition()
        self.sub = bus.subscribe(AgentStateEvent, self._on)

    def _on(self, event: Event) -> None:
        with self.cond:
            self.events.append(event)  # type: ignore[arg-type]
            self.cond.notify_all()

    def states(self, agent: str) -> list[str]:
        with self.cond:
            return [e.state for e in self.events if e.agent == agent]

    def wait_for(self, agent: str, state: str, count: int = 1, timeout_s: float = 5.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: self.states_locked(agent).count(state) >= count, timeout_s)

    def states_locked(self, agent: str) -> list[str]:
        return [e.state for e in self.events if e.agent == agent]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def bus():
    b = EventBus("test")
    yield b
    assert b.close(2.0) == []
