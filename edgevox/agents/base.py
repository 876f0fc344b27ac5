"""The one agent contract: :class:`Agent`, its :class:`AgentResult`, and the :class:`AgentStream` a run yields.

Every agent (an :class:`~edgevox.agents.llm_agent.LLMAgent`, a workflow or strategy
of :mod:`edgevox.orchestration`, a handoff target, the voice loop's agent) offers::

    name: str
    stream(task, ctx=None) -> AgentStream     # iterate events as they happen
    run(task, ctx=None) -> AgentResult        # blocking; derived from stream

Agents write only ``stream``: :class:`AgentBase` derives ``run`` from it. ``stream``
yields the typed events of :mod:`edgevox.agents.events` in order (tool activity, then
``ReplyDelta`` pieces of the reply as the LLM generates them, then one ``AgentReply``);
after iteration, ``AgentStream.result()`` holds the :class:`AgentResult`. The voice
loop iterates ``stream(...).text_deltas()`` and speaks while the model is still generating.

Both run on the caller's thread. Cancelling ``ctx.cancel_token`` ends the run
promptly (mid-generation, mid-tool-loop) with ``result.cancelled = True``.

There is one result shape for every agent, workflow, strategy, delegation and
handoff: a composite's :class:`AgentResult` names the agent that actually spoke
(``agent``) and keeps the children's results in ``steps``. Running a child agent is
done in one place, :func:`edgevox.agents.run.run_child`.

This module imports nothing heavy and nothing from ``edgevox.runtime`` at import time
beyond the events base, so the runtime can refer to :class:`Agent` for typing
(``runtime/agent.py``) without an import cycle.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from edgevox.agents.events import ReplyDelta

if TYPE_CHECKING:
    from edgevox.agents.skills import GoalHandle
    from edgevox.agents.tools import ToolCall, ToolResult
    from edgevox.runtime.context import AgentContext
    from edgevox.runtime.events import Event


@dataclass
class AgentResult:
    """The outcome of one run of any agent, workflow or strategy."""

    text: str = ""
    """The reply (what would be spoken)."""
    agent: str = ""
    """The agent that actually spoke ``text`` (for a workflow: the child that answered)."""
    ok: bool = True
    error: str = ""
    """One line: ``"<agent>: <what went wrong>"`` when a child failed (see ``run_child``)."""
    cancelled: bool = False
    timed_out: bool = False
    duration_s: float = 0.0
    """Wall time of the run in seconds (set by ``run_child``)."""
    tool_calls: list[ToolResult] = field(default_factory=list)
    """Every tool call made, in order (``tool_calls[0].call`` is the first)."""
    skills: list[GoalHandle] = field(default_factory=list)
    """Goals started by skills; they may still be running."""
    handoff: str | None = None
    """Name of the agent the conversation was handed to, if any."""
    steps: list[AgentResult] = field(default_factory=list)
    """The child runs a composite made, in order."""
    data: dict[str, Any] = field(default_factory=dict)
    """Extra facts (``decided_by``, ``route``, ``approved``, ``missing``, ``why``...)."""

    @property
    def reply(self) -> str:
        """``text`` under its EdgeVox name (read-only)."""
        return self.text

    @property
    def first_call(self) -> ToolCall | None:
        return self.tool_calls[0].call if self.tool_calls else None


class AgentStream:
    """Iterable of events from one run; ``result()`` is the :class:`AgentResult` once iteration finished.

    Closing it early (``close()``, or leaving a ``for`` loop with ``break`` and
    dropping it) stops the run at its next step.
    """

    def __init__(self, gen: Generator[Event, None, AgentResult]) -> None:
        self._gen = gen
        self._result: AgentResult | None = None

    def __iter__(self) -> Iterator[Event]:
        self._result = yield from self._gen

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
        if self._result is None:
            raise TypeError("the agent's stream ended without returning an AgentResult")
        return self._result

    def close(self) -> None:
        self._gen.close()


HandoffTiming = Literal["same_turn", "next_turn"]
"""When the target answers: at once, to the same request (``handoff_to_<name>`` tools, a
Swarm), or from the user's next turn on (``handoff_conversation`` under a Coordinator)."""

CONTEXT_PREFIX = "Context from the previous agent: "
HANDOFF_HISTORY_TURNS = 6
"""Recent messages (user and assistant, each one turn) a handoff carries by default
(``orchestration.handoff.history_turns`` configures it for orchestrations)."""


@dataclass(frozen=True)
class Handoff:
    """One handoff, whichever tool asked for it: who hands to whom, when, and what the target
    needs to know. Produced by the ``handoff_to_<name>`` tools and by ``handoff_conversation``;
    a same-turn handoff is executed by :func:`edgevox.agents.run.stream_handoff`, a next-turn one
    is applied to the session by :class:`edgevox.orchestration.handoff.HandoffHandler`.

    It carries OmniForge's handoff message fields: the thread (``thread_id``, the session it
    belongs to), the user (``user_id``, "" if unknown), source and target agent, ``summary``,
    ``reason``, and the recent turns that travel with it (``history_count`` of them), plus
    ``return_expected`` (edgevox's ``with_return``) and ``preserve_state``.
    :meth:`message` is all of them as one dict."""

    from_agent: str
    target: str
    """The resolved agent name (``"human"`` for a person)."""
    timing: HandoffTiming
    reason: str = ""
    summary: str = ""
    """What the target needs to know, in the handing agent's words."""
    recent: tuple[str, ...] = ()
    """The last turns of the conversation, ``"role: text"``, oldest first (so the user never
    has to repeat what they said to the previous agent)."""
    next_phase: str | None = None
    with_return: bool = False
    """The conversation comes back to ``from_agent`` afterwards (OmniForge: ``return_expected``)."""
    thread_id: str = ""
    """The conversation (session) this handoff belongs to; "" = the one it is requested in."""
    user_id: str = ""
    """Who the user is, when known ("" otherwise)."""
    preserve_state: bool = False
    """With return: the handing agent's scratch state is kept and given back when the
    conversation returns (without it, that agent starts fresh)."""

    @property
    def return_expected(self) -> bool:
        """OmniForge's name for :attr:`with_return`."""
        return self.with_return

    @property
    def source_agent(self) -> str:
        return self.from_agent

    @property
    def target_agent(self) -> str:
        return self.target

    @property
    def history_count(self) -> int:
        """How many recent turns travel with the handoff."""
        return len(self.recent)

    def message(self) -> dict[str, Any]:
        """The handoff message, OmniForge's fields by their names (JSON-serialisable)."""
        return {
            "thread_id": self.thread_id,
            "user_id": self.user_id,
            "source_agent": self.from_agent,
            "target_agent": self.target,
            "summary": self.summary,
            "reason": self.reason,
            "history_count": self.history_count,
            "history": list(self.recent),
            "return_expected": self.with_return,
            "preserve_state": self.preserve_state,
            "next_phase": self.next_phase,
            "timing": self.timing,
        }

    @classmethod
    def from_message(cls, message: Mapping[str, Any]) -> Handoff:
        """A handoff from its message (:meth:`message`); OmniForge's names are accepted
        (``source_agent``, ``target_agent``, ``return_expected``) next to edgevox's."""
        timing = message.get("timing", "next_turn")
        return cls(
            from_agent=str(message.get("source_agent", message.get("from_agent", ""))),
            target=str(message.get("target_agent", message.get("target", ""))),
            timing="same_turn" if timing == "same_turn" else "next_turn",
            reason=str(message.get("reason", "")),
            summary=str(message.get("summary", "")),
            recent=tuple(str(t) for t in message.get("history", message.get("recent", ()))),
            next_phase=message.get("next_phase") or None,
            with_return=bool(message.get("return_expected", message.get("with_return", False))),
            thread_id=str(message.get("thread_id", "")),
            user_id=str(message.get("user_id", "")),
            preserve_state=bool(message.get("preserve_state", False)),
        )

    def brief(self) -> str:
        """What the target reads, in one line ("" if there is nothing): the summary, the user
        (when known) and the recent turns. The reason is for the record (events, logs)."""
        parts = [self.summary.strip()] if self.summary.strip() else []
        if self.user_id:
            parts.append(f"User id: {self.user_id}.")
        if self.recent:
            turns = "turn" if len(self.recent) == 1 else f"{len(self.recent)} turns"
            parts.append(f"The last {turns}: " + " | ".join(self.recent))
        return " ".join(parts)

    def context(self) -> str:
        """What the target reads before the request: ``"Context from the previous agent: <brief>"``."""
        brief = self.brief()
        return CONTEXT_PREFIX + brief if brief else ""


@runtime_checkable
class Agent(Protocol):
    """The agent contract. Implement ``stream``; inherit ``run`` from :class:`AgentBase`."""

    name: str

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream: ...

    def run(self, task: str, ctx: AgentContext | None = None) -> AgentResult: ...


class AgentBase:
    """Mixin: ``run`` derived from ``stream`` (the only method an agent writes)."""

    name: str = "agent"

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement stream(task, ctx)")

    def run(self, task: str, ctx: AgentContext | None = None) -> AgentResult:
        return self.stream(task, ctx).result()


class AgentRef(AgentBase):
    """An agent named now and looked up in ``agents`` when it runs.

    Config wiring uses it for the back edge of a handoff cycle (``a: [b]``, ``b: [a]``):
    one of the two agents must be referred to before it exists.
    """

    def __init__(self, name: str, agents: Mapping[str, Agent]) -> None:
        self.name = name
        self._agents = agents

    @property
    def target(self) -> Agent:
        try:
            return self._agents[self.name]
        except KeyError:
            raise KeyError(
                f"agent {self.name!r} was referred to but never built; built: {sorted(self._agents)}"
            ) from None

    @property
    def description(self) -> str:
        """The target's description once it is built ("" while it is not)."""
        agent = self._agents.get(self.name)
        return str(getattr(agent, "description", "") or "") if agent is not None else ""

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        return self.target.stream(task, ctx)


def context_or_new(ctx: AgentContext | None) -> AgentContext:
    """``ctx``, or a fresh root context when an agent is run without one."""
    if ctx is not None:
        return ctx
    from edgevox.runtime.context import AgentContext

    return AgentContext()
