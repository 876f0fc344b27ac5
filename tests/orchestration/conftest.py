"""Fixtures for the orchestration tests: scripted agents, a bus that records, a thread guard."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from edgevox.agents.base import AgentBase, AgentResult, AgentStream
from edgevox.agents.events import ReplyDelta
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext


class ScriptedAgent(AgentBase):
    """A deterministic agent: ``behaviour(task, ctx) -> str`` (or a fixed reply), answered in one piece.

    Records every task and context it was given. ``tool_calls`` lets a script call real
    tools: ``agent.call_tool(tool, args, ctx)`` returns the text the model would read.
    """

    def __init__(self, name: str, behaviour: str | Callable[[str, AgentContext], Any] = "ok") -> None:
        self.name = name
        self.behaviour = behaviour
        self.tasks: list[str] = []
        self.contexts: list[AgentContext] = []
        self.tool_results: list[str] = []
        self._lock = threading.Lock()

    def call_tool(self, tool: Any, args: dict[str, Any], ctx: AgentContext) -> str:
        result = tool.invoke(args, ctx)
        text = result.as_text()
        self.tool_results.append(text)
        return text

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        ctx = ctx or AgentContext()

        def answer() -> Iterator[ReplyDelta]:
            with self._lock:
                self.tasks.append(task)
                self.contexts.append(ctx)
            out = self.behaviour(task, ctx) if callable(self.behaviour) else self.behaviour
            result = out if isinstance(out, AgentResult) else AgentResult(text=str(out), agent=self.name)
            if result.text:
                yield ReplyDelta(source=self.name, text=result.text)
            return result

        return AgentStream(answer())


@pytest.fixture
def bus():
    b = EventBus("test")
    yield b
    assert b.close() == []


@pytest.fixture
def recorded(bus):
    """Every event published on ``bus``, in order."""
    events: list[Any] = []
    bus.add_observer(events.append)
    return events


@pytest.fixture(autouse=True)
def no_leaked_threads():
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    for t in leaked:
        t.join(2.0)
    leaked = [t.name for t in leaked if t.is_alive()]
    assert not leaked, f"threads leaked by the test: {leaked}"


@pytest.fixture
def Scripted():  # noqa: N802 - a class handed to tests
    return ScriptedAgent


@pytest.fixture
def of_kind():
    return lambda events, cls: [e for e in events if isinstance(e, cls)]
