"""Routing: which agent answers an incoming user turn.

Order of decision (first that applies wins):

0. A session handed to a **human** (handoff target "human") goes to no agent.
1. **Affinity** - the session's active agent keeps the conversation when it was
   given the conversation (a handoff, a workflow, a strategy; target "human" clears
   it). An agent that is active only because this router chose it for an earlier
   turn (a rule or the default) does not: as in RoomKit, where routing never sets
   the active agent, rules decide every turn until a handoff, so a ``channel_types``
   rule sends the next ROS turn to its agent even after a spoken turn went elsewhere.
2. **Rules** in ascending ``priority`` (lower numbers first, as in RoomKit; ties keep
   declaration order). A rule matches when *all* its conditions hold (phase, intent,
   source, channel, custom predicate); unset conditions match anything.
   Before issue 13 the highest priority went first, so RoomKit's own example
   (``priority=-1`` for the rule that must win) routed to the other agent.
3. **Default** agent.

Events produced by agents (their ``source`` is an agent name, their kind is
``agent.*``, or they are :class:`~edgevox.orchestration.events.TurnAnswered`) are never routed: an agent
must not answer its own, or another agent's, output.

Rejected alternative: scoring all rules and taking the best score - harder to
predict than "first match in priority order", and a robot operator must be able
to read a config and know who will answer.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, get_args

from edgevox.agents.base import Agent, AgentResult
from edgevox.agents.run import run_child
from edgevox.orchestration.config import ChannelName
from edgevox.orchestration.events import SupervisorObserved, TurnAnswered
from edgevox.orchestration.state import ConversationPhase, ConversationState, phase_name

if TYPE_CHECKING:
    from edgevox.runtime.context import AgentContext
    from edgevox.runtime.events import Event

CHANNELS: tuple[str, ...] = get_args(ChannelName)
"""The channels edgevox itself names a user turn by: the voice loop's spoken and typed turns,
and text that arrived over a ROS bridge (``channel_types`` in code accepts other names too,
for an application's own front-end; YAML accepts these)."""

HUMAN_KEY = "human_takeover"
"""``ConversationState.data`` flag set by a handoff to "human": no agent answers until cleared."""


def _as_set(value: Any) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, (str, ConversationPhase)):
        return frozenset({phase_name(value)})
    return frozenset(phase_name(v) for v in value)


@dataclass(frozen=True)
class RoutingConditions:
    """Conditions of one rule; every one that is set must hold (AND).

    ``phase``/``intent``/``source``/``channel_types`` take one value or a collection of
    accepted values. ``channel_types`` (RoomKit's name) is the channel the turn came from:
    ``"voice"`` (spoken), ``"text"`` (typed), ``"ros2"``/``"ros1"`` (a bridge's
    ``text_input``) or an application's own name (:data:`CHANNELS`); it is the ``channel``
    of the :class:`~edgevox.orchestration.events.UserTurn`, which the
    :class:`~edgevox.orchestration.coordinator.Coordinator` takes from ``ctx.channel``.
    ``predicate(event, state)`` is any custom check.
    """

    phase: str | Collection[str] | None = None
    intent: str | Collection[str] | None = None
    source: str | Collection[str] | None = None
    predicate: Callable[[Any, ConversationState], bool] | None = None
    channel_types: str | Collection[str] | None = None

    def __post_init__(self) -> None:
        channels = _as_set(self.channel_types)
        if channels is not None and (not channels or "" in channels):
            raise ValueError(
                f"RoutingConditions channel_types = {self.channel_types!r}: name at least one channel "
                f"({', '.join(CHANNELS)} or your own), or leave it None to match any"
            )

    def matches(self, *, event: Any, state: ConversationState, intent: str | None) -> bool:
        phases = _as_set(self.phase)
        if phases is not None and state.phase not in phases:
            return False
        intents = _as_set(self.intent)
        if intents is not None and (intent is None or intent not in intents):
            return False
        sources = _as_set(self.source)
        if sources is not None and getattr(event, "source", "") not in sources:
            return False
        channels = _as_set(self.channel_types)
        if channels is not None and getattr(event, "channel", "") not in channels:
            return False
        return not (self.predicate is not None and not self.predicate(event, state))


@dataclass(frozen=True)
class RoutingRule:
    """Send matching turns to ``agent``. Lower ``priority`` is tried first (RoomKit's order:
    a negative priority goes before the default 0); equal priorities keep declaration order."""

    agent: str
    conditions: RoutingConditions = field(default_factory=RoutingConditions)
    priority: int = 0
    name: str = ""

    @property
    def label(self) -> str:
        return self.name or f"{self.agent}@{self.priority}"


def _routed(reason: str) -> bool:
    """True for the ``why`` of a rule or default decision (what the Coordinator records as the
    reason when it makes the routed agent active)."""
    return reason == "default" or reason.startswith("rule:")


def _given(state: ConversationState) -> bool:
    """Was the active agent given the conversation (handoff, workflow...), rather than picked by
    routing for an earlier turn? Reads the transition that made it active."""
    for step in reversed(state.history):
        if step.to_agent == state.active_agent and step.from_agent != step.to_agent:
            return not _routed(step.reason)
    return True  # made active without a recorded step (set directly): keep it


@dataclass(frozen=True)
class RouteDecision:
    agent: str | None
    """The chosen agent, or None when the turn must not go to an agent."""
    why: str
    """``affinity``, ``rule:<name>``, ``default``, ``agent-output``, ``human`` or ``no-agent``."""


class ConversationRouter:
    """Picks the agent for each user turn. Pure and thread-safe: all session data comes in
    through the ``state`` argument.

    ``supervisor`` names an agent that observes every exchange (see
    :class:`~edgevox.orchestration.coordinator.Coordinator`); it is never routed to.
    ``intent_classifier(text) -> str | None`` labels turns whose event carries no intent.
    """

    def __init__(
        self,
        agents: Collection[str],
        *,
        rules: Collection[RoutingRule] = (),
        default_agent: str | None = None,
        supervisor: str | None = None,
        affinity: bool = True,
        intent_classifier: Callable[[str], str | None] | None = None,
    ) -> None:
        self.agents = frozenset(agents)
        if not self.agents:
            raise ValueError("ConversationRouter needs at least one agent name")
        for rule in rules:
            if rule.agent not in self.agents:
                raise ValueError(
                    f"routing rule {rule.label!r}: unknown agent {rule.agent!r}; known: {sorted(self.agents)}"
                )
        if default_agent is not None and default_agent not in self.agents:
            raise ValueError(f"default_agent {default_agent!r} is not one of {sorted(self.agents)}")
        if supervisor is not None and supervisor not in self.agents:
            raise ValueError(f"supervisor {supervisor!r} is not one of {sorted(self.agents)}")
        # Ascending, as RoomKit; a stable sort, so equal priorities keep declaration order.
        self.rules: tuple[RoutingRule, ...] = tuple(sorted(rules, key=lambda r: r.priority))
        self.default_agent = default_agent
        self.supervisor = supervisor
        self.affinity = affinity
        self.intent_classifier = intent_classifier

    def with_rules(self, rules: Collection[RoutingRule], *, default_agent: str | None = None) -> ConversationRouter:
        """A router with ``rules`` added to this one's (all tried together in ascending priority;
        at equal priority ``rules`` come first) and their agents; ``default_agent`` replaces the
        default when given. Everything else (supervisor, affinity, classifier) is kept."""
        return ConversationRouter(
            self.agents | {r.agent for r in rules} | ({default_agent} if default_agent else set()),
            rules=[*rules, *self.rules],
            default_agent=default_agent or self.default_agent,
            supervisor=self.supervisor,
            affinity=self.affinity,
            intent_classifier=self.intent_classifier,
        )

    def is_agent_output(self, event: Any) -> bool:
        if isinstance(event, TurnAnswered) or str(getattr(event, "kind", "")).startswith("agent."):
            return True
        return getattr(event, "source", "") in self.agents

    def route(self, event: Any, state: ConversationState) -> RouteDecision:
        """Choose the agent for ``event`` (anything with ``text``/``source``/``intent``)."""
        if self.is_agent_output(event):
            return RouteDecision(None, "agent-output")
        if state.data.get(HUMAN_KEY):
            return RouteDecision(None, "human")
        if self.affinity and state.active_agent and state.active_agent in self.agents and _given(state):
            return RouteDecision(state.active_agent, "affinity")
        intent = getattr(event, "intent", None)
        if intent is None and self.intent_classifier is not None:
            intent = self.intent_classifier(getattr(event, "text", ""))
        for rule in self.rules:
            if rule.conditions.matches(event=event, state=state, intent=intent):
                return RouteDecision(rule.agent, f"rule:{rule.label}")
        if self.default_agent is not None:
            return RouteDecision(self.default_agent, "default")
        return RouteDecision(None, "no-agent")


def observe_exchange(
    supervisor: Agent,
    name: str,
    text: str,
    agent: str,
    outcome: AgentResult,
    ctx: AgentContext,
    *,
    publish: Callable[[Event], None],
    timeout_s: float | None = None,
) -> None:
    """The observing supervisor ``name`` (RoomKit's ``supervisor_id``; a Coordinator's router
    supervisor or a Pipeline's) notes one exchange in a sentence, published as
    :class:`SupervisorObserved` and never spoken."""
    what = "" if outcome.ok else f" [failed: {outcome.error}]"
    note = run_child(
        supervisor,
        f"Observe this exchange and note any problem in one sentence.\nUser: {text}\n{agent}: {outcome.text}{what}",
        ctx,
        timeout_s=timeout_s,
    )
    publish(SupervisorObserved(source=name, session_id=ctx.session_id, supervisor=name, agent=agent, note=note.text))
