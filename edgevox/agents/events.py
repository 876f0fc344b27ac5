"""Typed events that agents publish on the bus (and yield from ``Agent.stream``).

Order within one agent run::

    AgentStarted, (ToolCallStarted, ToolCallFinished)*, (HandoffEvent)?,
    ReplyDelta*, AgentReply

``ReplyDelta`` carries each piece of the final reply as the LLM produces it (the
voice loop speaks it while it is generated). ``SkillStateEvent`` comes from the
skill's worker thread whenever a goal changes state, independently of the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from edgevox.runtime.events import Event


@dataclass(kw_only=True)
class AgentStarted(Event):
    kind: ClassVar[str] = "agent.started"
    agent: str = ""
    task: str = ""


@dataclass(kw_only=True)
class ToolCallStarted(Event):
    kind: ClassVar[str] = "agent.tool_call_started"
    agent: str = ""
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str = ""
    decided_by: str = ""
    """What chose the call: ``"schema"`` (fast path), ``"llm"`` or ``"hook"``."""


@dataclass(kw_only=True)
class ToolCallFinished(Event):
    kind: ClassVar[str] = "agent.tool_call_finished"
    agent: str = ""
    tool: str = ""
    call_id: str = ""
    ok: bool = True
    result: str = ""
    error: str = ""
    error_kind: str = ""
    """``"arguments"``, ``"execution"``, ``"unknown_tool"``, ``"cancelled"`` or ``""``."""
    duration_s: float = 0.0


@dataclass(kw_only=True)
class SkillStateEvent(Event):
    kind: ClassVar[str] = "agent.skill_state"
    skill: str = ""
    goal_id: str = ""
    state: str = ""
    """``pending``, ``running``, ``succeeded``, ``cancelled`` or ``failed``; ``lost`` when the
    robot running it left a Zenoh fleet before it ended (published by the starter's bridge)."""
    feedback: Any = None
    error: str = ""

    def is_stream(self) -> bool:
        """A feedback tick of a running goal is a stream event; a state change is not."""
        return self.state == "running" and self.feedback is not None


@dataclass(kw_only=True)
class HandoffEvent(Event):
    kind: ClassVar[str] = "agent.handoff"
    from_agent: str = ""
    to_agent: str = ""
    summary: str = ""


@dataclass(kw_only=True)
class HandoffLimitReached(Event):
    """A handoff was refused because the turn was already handed on ``max_handoffs`` times
    (``orchestration.handoff.max_handoffs_per_turn``): ``chain`` is who had the turn, oldest
    first, ``to_agent`` the target refused. The turn ends with an apology, not an answer."""

    kind: ClassVar[str] = "agent.handoff_limit_reached"
    chain: tuple[str, ...] = ()
    to_agent: str = ""
    max_handoffs: int = 0


@dataclass(kw_only=True)
class ReplyDelta(Event):
    """A piece of the final reply text, in generation order."""

    kind: ClassVar[str] = "agent.reply_delta"
    stream: ClassVar[bool] = True
    agent: str = ""
    text: str = ""


@dataclass(kw_only=True)
class AgentReply(Event):
    """The run finished; ``text`` is the whole reply."""

    kind: ClassVar[str] = "agent.reply"
    agent: str = ""
    text: str = ""
    ok: bool = True
    cancelled: bool = False
    error: str = ""
    handoff: str = ""
