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
    from edgevox.orchestration.coordinator import Coordinator
    from edgevox.orchestration.delivery import DeliveryStrategy, DeliveryWorker, Sink, VoiceActivityState
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
        sec = config.pipeline
        return Pipeline([_agent(agents, a, "pipeline.agents") for a in sec.agents], timeout_s=sec.timeout_s)
    if name == "swarm" and config.swarm:
        sw = config.swarm
        for alias_target in sw.aliases.values():
            _agent(agents, alias_target, "swarm.aliases")
        return Swarm(
            [_agent(agents, a, "swarm.agents") for a in sw.agents],
            sw.entry,
            max_handoffs=sw.max_handoffs,
            aliases=sw.aliases,
        )
    if name == "supervisor" and config.supervisor:
        su = config.supervisor
        return Supervisor(
            _agent(agents, su.supervisor, "supervisor.supervisor"),
            [_agent(agents, w, "supervisor.workers") for w in su.workers],
            strategy=su.strategy,
            auto_delegate=su.auto_delegate,
            refine_task=su.refine_task,
            async_delivery=su.async_delivery,
            delivery=delivery,
            max_concurrency=config.delegation.max_concurrency,
            max_depth=config.delegation.max_depth,
            timeout_s=su.timeout_s,
        )
    if name == "loop" and config.loop:
        lo = config.loop
        return Loop(
            _agent(agents, lo.agent, "loop.agent"),
            [_agent(agents, r, "loop.reviewers") for r in lo.reviewers],
            strategy=lo.strategy,
            max_iterations=lo.max_iterations,
            timeout_s=lo.timeout_s,
        )
    return None


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
        return Queued(buffer_s=d.buffer_s, sink=sink, publish=publish)
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
    from edgevox.orchestration.handoff import HandoffHandler
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
    router = handoff = None
    if config.conversation is not None:
        conv = config.conversation
        pipeline = ConversationPipeline(
            [PipelineStage(s.phase, s.agent, s.next, tuple(s.can_return_to)) for s in conv.stages], name="conversation"
        )
        router = pipeline.to_router(supervisor=conv.supervisor)
        router_agents = {n: agents[n] for n in router.agents}
        handoff = HandoffHandler(
            router_agents,
            store,
            aliases=conv.aliases,
            allowed_transitions=pipeline.agent_transitions(),
            phase_of=pipeline.phase_of,
            publish=publish,
        )
    elif main_agent is not None:
        _agent(agents, main_agent, "main agent")
        router = ConversationRouter(agents, default_agent=main_agent)
    coordinator = Coordinator(
        {n: agents[n] for n in router.agents} if router is not None else agents,
        router=router,
        handoff=handoff,
        store=store,
        strategy=build_strategy(config, config.strategy, agents, delivery=delivery),
        bus=bus,
        delivery=delivery,
    )
    for session_id, name in config.sessions.items():
        strategy = build_strategy(config, name, agents, delivery=delivery)
        coordinator.set_session_strategy(session_id, strategy if strategy is not None else Coordinator.ROUTE)
    return coordinator


@dataclass
class OrchestrationParts:
    """What ``orchestration:`` adds to an application: the coordinator that answers user turns,
    the worker that speaks background results and the voice-activity state it watches."""

    coordinator: Coordinator
    delivery: DeliveryWorker
    voice_activity: VoiceActivityState


def wants_orchestration(config: OrchestrationConfig) -> bool:
    """False when every turn simply goes to the main agent (``strategy: single``, no sessions)."""
    return config.strategy != "single" or bool(config.sessions) or config.conversation is not None


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
