"""The ``orchestration`` section built into objects: strategies, delivery, the coordinator.

:func:`build_orchestration` turns a validated
:class:`~edgevox.orchestration.config.OrchestrationConfig` and a ``{name: agent}`` dict into
a :class:`~edgevox.orchestration.coordinator.Coordinator`; :func:`make_orchestration` adds
what an application runs around it (the delivery worker and the voice-activity state that
``wait_for_idle`` delivery watches). The section models stay in
:mod:`edgevox.orchestration.config` (the schema imports them; this module imports the
orchestration classes, so it must not be imported by the schema).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from edgevox.errors import ConfigError
from edgevox.orchestration.config import OrchestrationConfig

if TYPE_CHECKING:
    from edgevox.agents.base import Agent
    from edgevox.agents.tools import Tool
    from edgevox.orchestration.coordinator import Coordinator
    from edgevox.orchestration.delegation import Delegator
    from edgevox.orchestration.delivery import DeliveryStrategy, DeliveryWorker, Sink, VoiceActivityState
    from edgevox.orchestration.handoff_context import HandoffOptions
    from edgevox.orchestration.routing import ConversationRouter
    from edgevox.runtime.blackboard import Blackboard
    from edgevox.runtime.bus import EventBus
    from edgevox.runtime.events import Event
    from edgevox.runtime.runtime import Runtime


def _agent(agents: Mapping[str, Agent], name: str, where: str) -> Agent:
    if name in agents:
        return agents[name]
    close = difflib.get_close_matches(name, list(agents), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"orchestration.{where}: no agent named {name!r}{hint} (defined: {', '.join(agents) or 'none'})")


def build_strategy(
    config: OrchestrationConfig, name: str, agents: Mapping[str, Agent], *, delivery: DeliveryStrategy | None = None
) -> Agent | None:
    """Build the strategy ``name`` from its section (None for single/conversation)."""
    from edgevox.orchestration.strategies import Loop, Pipeline, Supervisor, Swarm

    if name == "pipeline" and config.pipeline:
        from edgevox.orchestration.pipeline import PipelineStage

        sec = config.pipeline
        members = [_agent(agents, a, "pipeline.agents") for a in sec.stage_agents()]
        if sec.supervisor_id:
            members.append(_agent(agents, sec.supervisor_id, "pipeline.supervisor_id"))
        for alias_target in sec.aliases.values():
            _agent(agents, alias_target, "pipeline.aliases")
        try:
            return Pipeline(
                members,
                sec.routing or None,
                stages=[PipelineStage(s.phase, s.agent, s.next, tuple(s.can_return_to)) for s in sec.stages] or None,
                supervisor_id=sec.supervisor_id,
                aliases=sec.aliases,
                entry=sec.entry,
                handoff_options=handoff_options(config),
                timeout_s=sec.timeout_s,
            )
        except ValueError as exc:
            raise ConfigError(f"orchestration.pipeline: {exc}") from None
    if name == "swarm" and config.swarm:
        sw = config.swarm
        for alias_target in sw.aliases.values():
            _agent(agents, alias_target, "swarm.aliases")
        return Swarm(
            [_agent(agents, a, "swarm.agents") for a in sw.agents],
            sw.entry,
            max_handoffs=sw.max_handoffs,
            aliases=sw.aliases,
            handoff_options=handoff_options(config),
        )
    if name == "supervisor" and config.supervisor:
        su = config.supervisor
        return Supervisor(
            _agent(agents, su.supervisor, "supervisor.supervisor"),
            [_agent(agents, w, "supervisor.workers") for w in su.workers],
            strategy=su.strategy,
            auto_delegate=su.auto_delegate,
            refine_task=su.refine_task,
            refine_instruction=su.refine_instruction,
            async_delivery=su.async_delivery,
            delegation_message=su.delegation_message,
            wait_for_result=su.wait_for_result,
            delivery=delivery,
            max_concurrency=config.delegation.max_concurrency,
            max_depth=config.delegation.max_depth,
            timeout_s=su.timeout_s,
        )
    if name == "loop" and config.loop:
        lo = config.loop
        return Loop(
            _agent(agents, lo.agent, "loop.agent"),
            [_agent(agents, r, "loop.reviewers") for r in lo.reviewer_names()],
            strategy=lo.strategy,
            approval=lo.approval,
            max_iterations=lo.max_iterations,
            timeout_s=lo.timeout_s,
        )
    return None


def handoff_options(config: OrchestrationConfig) -> HandoffOptions:
    """The ``handoff:`` section as :class:`HandoffOptions` (recent turns, the notification)."""
    from edgevox.orchestration.handoff_context import HandoffOptions

    h = config.handoff
    return HandoffOptions(
        history_turns=h.history_turns,
        notify=h.notify,
        notification=h.notification,
        names=dict(h.names),
        max_handoffs_per_turn=h.max_handoffs_per_turn,
    )


def build_delivery(
    config: OrchestrationConfig,
    *,
    sink: Sink | None = None,
    voice: VoiceActivityState | None = None,
    publish: Callable[[Event], object] | None = None,
) -> DeliveryStrategy:
    from edgevox.orchestration.delivery import Immediate, Queued, WaitForIdle

    d = config.delivery
    if d.strategy == "immediate":
        return Immediate(sink, publish=publish)
    if d.strategy == "queued":
        return Queued(voice, buffer_s=d.buffer_s, timeout_s=d.timeout_s, sink=sink, publish=publish)
    return WaitForIdle(voice, buffer_s=d.buffer_s, timeout_s=d.timeout_s, sink=sink, publish=publish)


def build_orchestration(
    config: OrchestrationConfig | Mapping[str, object],
    agents: Mapping[str, Agent],
    *,
    main_agent: str | None = None,
    bus: EventBus | None = None,
    blackboard: Blackboard | None = None,
    sink: Sink | None = None,
    voice: VoiceActivityState | None = None,
) -> Coordinator:
    """A :class:`Coordinator` for ``config`` over ``agents`` (``{name: agent}``).

    ``main_agent`` answers under ``strategy: single`` (default: the first agent).
    ``bus``/``blackboard``: the runtime's (events, per-session state). ``sink(items)``
    speaks background results; ``voice`` is a :class:`VoiceActivityState` for
    ``wait_for_idle`` delivery. Raises :class:`ConfigError` for unknown agent names.
    """
    from pydantic import ValidationError

    from edgevox.orchestration.coordinator import Coordinator
    from edgevox.orchestration.pipeline import ConversationPipeline, PipelineStage
    from edgevox.orchestration.routing import ConversationRouter
    from edgevox.orchestration.state import SessionStore

    if not isinstance(config, OrchestrationConfig):
        try:
            config = OrchestrationConfig.model_validate(dict(config))
        except ValidationError as exc:
            raise ConfigError(f"orchestration: {exc}") from exc
    if not agents:
        raise ConfigError("orchestration: no agents were given to orchestrate")
    for name in sorted(config.agent_names()):
        _agent(agents, name, "agents")
    publish = bus.publish if bus is not None else None
    delivery = build_delivery(config, sink=sink, voice=voice, publish=publish)
    store = SessionStore(blackboard)
    router = handoff = handoff_tools = None
    if config.conversation is not None:
        conv = config.conversation
        pipeline = ConversationPipeline(
            [PipelineStage(s.phase, s.agent, s.next, tuple(s.can_return_to)) for s in conv.stages], name="conversation"
        )
        router = pipeline.to_router(supervisor=conv.supervisor)
        handoff = pipeline.handoff_handler(store, agents=list(router.agents), aliases=conv.aliases, publish=publish)
        handoff_tools = pipeline.handoff_tools(
            descriptions={n: str(getattr(agents[n], "description", "") or "") for n in router.agents},
            owner="conversation",
            human=conv.escalation,
        )
    elif main_agent is not None:
        _agent(agents, main_agent, "main agent")
        router = ConversationRouter(agents, default_agent=main_agent)
    if config.routing is not None:
        router = _with_routing(config, agents, router, main_agent)
    members = {n: agents[n] for n in router.agents} if router is not None else dict(agents)
    if main_agent is not None:
        members.setdefault(main_agent, _agent(agents, main_agent, "main agent"))  # answers `single` sessions
    turns = config.coordinator
    coordinator = Coordinator(
        members,
        router=router,
        main_agent=main_agent,
        timeout_s=turns.timeout_s,
        progress_interval_s=turns.progress_interval_s,
        still_working=turns.still_working,
        cancel_phrases=turns.cancel_phrases,
        handoff=handoff,
        store=store,
        strategy=build_strategy(config, config.strategy, agents, delivery=delivery),
        bus=bus,
        delivery=delivery,
        handoff_tools=handoff_tools,
    )
    coordinator.handoff.configure(handoff_options(config))
    for session_id, name in config.sessions.items():
        strategy = build_strategy(config, name, agents, delivery=delivery)
        if name == "single":
            coordinator.disable_orchestration(session_id)  # RoomKit: a room with orchestration=None
        else:
            coordinator.set_session_strategy(session_id, strategy if strategy is not None else Coordinator.ROUTE)
    return coordinator


def _with_routing(
    config: OrchestrationConfig, agents: Mapping[str, Agent], router: ConversationRouter | None, main_agent: str | None
) -> ConversationRouter:
    """The ``routing:`` rules added to the conversation's router (or to one over every agent)."""
    from edgevox.orchestration.routing import ConversationRouter, RoutingConditions, RoutingRule

    section = config.routing
    assert section is not None
    rules = [
        RoutingRule(
            r.agent,
            RoutingConditions(
                phase=r.phases or None, intent=r.intents or None, channel_types=list(r.channel_types) or None
            ),
            priority=r.priority,
            name=r.name,
        )
        for r in section.rules
    ]
    if router is None:
        default = section.default or main_agent or next(iter(agents))
        return ConversationRouter(agents, rules=rules, default_agent=default)
    return router.with_rules(rules, default_agent=section.default)


@dataclass
class OrchestrationParts:
    """What ``orchestration:`` adds to an application: the coordinator that answers user turns,
    the worker that speaks background results and the voice-activity state it watches."""

    coordinator: Coordinator
    delivery: DeliveryWorker
    voice_activity: VoiceActivityState


def make_delegator(config: OrchestrationConfig, delegates: Mapping[str, list[str]]) -> Delegator | None:
    """The delegator of the agents given ``delegates:`` lists (``{agent: [targets]}``), with
    ``orchestration.delegation``'s limits; None when no agent delegates. Its ``agents`` are
    filled in once every agent is built (``delegator.agents.update(built)``)."""
    from edgevox.orchestration.delegation import Delegator

    lists = {name: list(targets) for name, targets in delegates.items() if targets}
    if not lists:
        return None
    d = config.delegation
    return Delegator(
        {}, delegates=lists, max_depth=d.max_depth, max_concurrency=d.max_concurrency, timeout_s=d.timeout_s
    )


def delegation_tools_for(delegator: Delegator | None, agent: str) -> list[Tool]:
    """``agent``'s ``delegate`` tool (an enum of exactly its ``delegates``) and process tools."""
    from edgevox.orchestration.delegation_tools import delegation_tools

    return delegation_tools(delegator, agent) if delegator is not None else []


def wants_orchestration(config: OrchestrationConfig) -> bool:
    """False when every turn simply goes to the main agent (``strategy: single``, no sessions)."""
    return (
        config.strategy != "single"
        or bool(config.sessions)
        or config.conversation is not None
        or config.routing is not None
    )


def make_orchestration(
    config: OrchestrationConfig,
    agents: Mapping[str, Agent],
    *,
    main_agent: str,
    runtime: Runtime,
    speak: Sink,
) -> OrchestrationParts:
    """The coordinator over ``agents`` on ``runtime``'s bus and blackboard; delivered results go
    to ``speak(items)``."""
    from edgevox.orchestration.delivery import DeliveryWorker, VoiceActivityState

    voice_activity = VoiceActivityState()
    coordinator = build_orchestration(
        config,
        agents,
        main_agent=main_agent,
        bus=runtime.bus,
        blackboard=runtime.blackboard,
        sink=speak,
        voice=voice_activity,
    )
    assert coordinator.delivery is not None  # build_orchestration always gives it one
    return OrchestrationParts(coordinator, DeliveryWorker(coordinator.delivery, voice=voice_activity), voice_activity)
