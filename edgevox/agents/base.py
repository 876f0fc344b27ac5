"""The agent protocol, its result, and the stream a run yields.

Every agent (an :class:`~edgevox.agents.llm_agent.LLMAgent`, a workflow, a
handoff target) offers::

    run(task, ctx=None) -> AgentResult        # blocking
    stream(task, ctx=None) -> AgentStream     # iterate events as they happen

``stream`` yields the typed events of :mod:`edgevox.agents.events` in order
(tool activity, then ``ReplyDelta`` pieces of the reply as the LLM generates them,
then one ``AgentReply``); after iteration, ``AgentStream.result`` holds the
:class:`AgentResult`. The voice loop iterates ``stream(...).text_deltas()`` and
speaks while the model is still generating.

Both run on the caller's thread. Cancelling ``ctx.cancel_token`` ends the run
promptly (mid-generation, mid-tool-loop) with ``result.cancelled = True``.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from edgevox.agents.events import ReplyDelta

if TYPE_CHECKING:
    from edgevox.agents.skills import GoalHandle
    from edgevox.agents.tools import ToolResult
    from edgevox.runtime.context import AgentContext
    from edgevox.runtime.events import Event


@dataclass
class AgentResult:
    """The outcome of one run."""

    text: str = ""
    """The reply (what would be spoken)."""
    agent: str = ""
    tool_calls: list[ToolResult] = field(default_factory=list)
    """Every tool call made, in order (``tool_calls[0].call`` is the first)."""
    skills: list[GoalHandle] = field(default_factory=list)
    """Goals started by skills; they may still be running."""
    handoff: str | None = None
    """Name of the agent the conversation was handed to, if any."""
    ok: bool = True
    error: str = ""
    cancelled: bool = False
    data: dict[str, Any] = field(default_factory=dict)
    """Extra facts (``decided_by``, workflow details...)."""

    @property
    def first_call(self) -> Any:
        return self.tool_calls[0].call if self.tool_calls else None


class AgentStream:
    """Iterable of events from one run; ``result`` is set once iteration finished.

    Closing it early (``close()``, or leaving a ``for`` loop with ``break`` and
    dropping it) stops the run at its next step.
    """

    def __init__(self, gen: Generator[Event, None, AgentResult]) -> None:
        self._gen = gen
        self._result: AgentResult | None = None

    def __iter__(self) -> Iterator[Event]:
        try:
            while True:
                yield next(self._gen)
        except StopIteration as stop:
            self._result = stop.value

    def text_deltas(self) -> Iterator[str]:
        """Just the reply text pieces, in order."""
        for event in self:
            if isinstance(event, ReplyDelta):
                yield event.text

    def result(self) -> AgentResult:
        """Run to the end (if not yet) and return the result."""
        if self._result is None:
            for _ in self:
                pass
        assert self._result is not None
        return self._result

    def close(self) -> None:
        self._gen.close()


@runtime_checkable
class Agent(Protocol):
    name: str

    def run(self, task: str, ctx: AgentContext | None = None) -> AgentResult: ...

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream: ...


def run_via_stream(agent: Any, task: str, ctx: AgentContext | None = None) -> AgentResult:
    """``run`` for agents that implement ``stream``."""
    return agent.stream(task, ctx).result()
