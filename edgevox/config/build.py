"""From a validated :class:`~edgevox.config.schema.AppConfig` to objects: the one place wiring happens.

Every config section becomes objects here, one concept per module of this package:

* :mod:`edgevox.config.build_engines`: engines and audio devices (``make_llm``, ``make_stt``,
  ``make_tts``, ``make_vad``, ``make_audio_in``/``out``, the set an app needs: ``make_engines``);
* this module: agents and workflows, background agents, the voice loop and bridges;
* :mod:`edgevox.config.build_orchestration`: strategies, delivery and the coordinator.

Each ``make_*`` function turns one section into the object it describes and imports the
adapter (and so its heavy library) only when that section is used: a text config never
imports faster-whisper, piper or sounddevice. :class:`edgevox.app.App` calls them in order
and owns the lifecycle of what they return; ``edgevox.voice.defaults`` and the benchmarks
build through the same functions. The engine functions are re-exported here, so
``from edgevox.config.build import make_llm`` names the whole wiring API.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from edgevox.agents.base import Agent, AgentBase
from edgevox.config.build_engines import (
    Engines,
    LoadedEngines,
    Progress,
    Steps,
    engine_factory,
    is_ref,
    make_audio_in,
    make_audio_out,
    make_engines,
    make_llm,
    make_stt,
    make_tts,
    make_vad,
)
from edgevox.config.refs import import_ref
from edgevox.config.schema import (
    AgentConfig,
    AppConfig,
    BackgroundAgentConfig,
    WorkflowConfig,
)
from edgevox.errors import ConfigError

if TYPE_CHECKING:
    from edgevox.agents.base import AgentResult, AgentStream
    from edgevox.integrations.config import BridgesConfig
    from edgevox.runtime.background import BackgroundAgent
    from edgevox.runtime.context import AgentContext
    from edgevox.runtime.lifecycle import Component as Bridge
    from edgevox.runtime.pool import AgentPool
    from edgevox.runtime.runtime import Runtime
    from edgevox.voice.loop import VoiceLoop

__all__ = [
    "Engines",
    "LoadedEngines",
    "Progress",
    "Steps",
    "TemplateTrigger",
    "engine_factory",
    "import_ref",
    "is_ref",
    "make_agent",
    "make_agents",
    "make_audio_in",
    "make_audio_out",
    "make_bridges",
    "make_engines",
    "make_llm",
    "make_stt",
    "make_trigger",
    "make_tts",
    "make_vad",
    "make_voice_loop",
    "make_workflow",
    "register_agents",
    "warm_up",
    "WarmsUp",
    "resolve_tools",
    "start_background_agent",
    "check_bridges",
]

# --- agents --------------------------------------------------------------------------------------


def resolve_tools(refs: Iterable[str], *, where: str) -> list[Any]:
    """Import tool references; a reference may name one tool or a list/tuple of tools.

    Plain functions are turned into tools with :func:`edgevox.agents.tools.build_tool`;
    ``@tool`` and ``@skill`` objects are kept as they are.
    """
    from edgevox.agents.skills import Skill
    from edgevox.agents.tools import Tool, build_tool

    out: list[Any] = []
    for i, ref in enumerate(refs):
        obj = import_ref(ref, where=f"{where}.{i}")
        items = list(obj) if isinstance(obj, (list, tuple)) else [obj]
        for item in items:
            if isinstance(item, (Tool, Skill)):  # a @skill stays a skill: cancellable, with a goal handle
                out.append(item)
            elif callable(item):
                try:
                    out.append(build_tool(item))
                except TypeError as exc:
                    raise ConfigError(f"{where}.{i}: {ref!r} cannot be a tool: {exc}") from None
            else:
                raise ConfigError(f"{where}.{i}: {ref!r} is a {type(item).__name__}, not a function or a @tool")
    return out


def make_agent(name: str, cfg: AgentConfig, llm: Any, app: AppConfig, *, others: dict[str, Any] | None = None) -> Any:
    """One agent: from its factory, or an LLMAgent (without tools and handoffs, the plain chat agent)."""
    where = f"agents.{name}"
    max_tokens = cfg.max_tokens or app.llm.max_tokens
    temperature = app.llm.temperature if cfg.temperature is None else cfg.temperature
    if cfg.factory:
        factory = import_ref(cfg.factory, where=f"{where}.factory")
        try:
            agent = factory(llm=llm, **cfg.options)
        except TypeError as exc:
            raise ConfigError(f"{where}.factory: {cfg.factory}(llm=..., **options) failed: {exc}") from None
        if "tool_timeout_s" not in cfg.options and hasattr(agent, "tool_timeout_s"):
            agent.tool_timeout_s = app.safety.tool_timeout_s
        _set_speak_tool_results(agent, cfg, where)
        return agent
    tools = resolve_tools(cfg.tools, where=f"{where}.tools") + resolve_tools(cfg.skills, where=f"{where}.skills")
    try:
        from edgevox.agents.base import AgentRef
        from edgevox.agents.llm_agent import LLMAgent
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"{where}: agents need edgevox.agents.llm_agent, which is missing: {exc}"
        ) from None
    # A target not built yet is the back edge of a handoff cycle: looked up by name when it runs.
    known = others if others is not None else {}
    handoffs = [known[h] if h in known else AgentRef(h, known) for h in cfg.handoffs]
    return LLMAgent(
        name,
        instructions=cfg.instructions,
        tools=tools,
        llm=llm,
        handoffs=handoffs,
        max_tool_hops=cfg.max_tool_hops,
        # A tool's own sentence is what is said unless the config asks for an LLM reply: on the
        # embedded 135M model, a reply written after a tool call is often unrelated to its result.
        speak_tool_results=True if cfg.speak_tool_results is None else cfg.speak_tool_results,
        tool_timeout_s=app.safety.tool_timeout_s,
        reply_max_tokens=max_tokens,
        temperature=temperature,
    )


def _set_speak_tool_results(agent: Any, cfg: AgentConfig, where: str) -> None:
    """``agents.<name>.speak_tool_results`` on an agent a factory built."""
    if cfg.speak_tool_results is None or "speak_tool_results" in cfg.options:
        return
    if not hasattr(agent, "speak_tool_results"):
        raise ConfigError(
            f"{where}.speak_tool_results: the agent built by {cfg.factory} has no speak_tool_results setting"
        )
    agent.speak_tool_results = cfg.speak_tool_results


def make_agents(app: AppConfig, llm: Any) -> dict[str, Any]:
    """Every agent and workflow by name. Handoff targets are built before the agents that use them."""
    built: dict[str, Any] = {}
    pending = dict(app.agents)
    visiting: set[str] = set()

    def build(name: str) -> Any:
        if name in built:
            return built[name]
        if name in visiting:  # a handoff cycle: make_agent refers to the back edge by name (AgentRef)
            return None
        visiting.add(name)
        cfg = pending[name]
        for target in cfg.handoffs:
            build(target)
        built[name] = make_agent(name, cfg, llm, app, others=built)
        visiting.discard(name)
        return built[name]

    for name in app.agents:
        build(name)
    for name in app.workflows:
        built[name] = make_workflow(name, app.workflows, built)
    return built


def make_workflow(name: str, workflows: dict[str, WorkflowConfig], built: dict[str, Any]) -> Any:
    if name in built:
        return built[name]
    cfg = workflows[name]
    where = f"workflows.{name}"
    steps = []
    for step in cfg.steps:
        if step not in built:
            built[step] = make_workflow(step, workflows, built)
        steps.append(built[step])
    try:
        from edgevox.orchestration import workflows as wf
    except ModuleNotFoundError as exc:
        raise ConfigError(f"{where}: workflows need edgevox.orchestration.workflows, which is missing: {exc}") from None
    if cfg.type == "sequence":
        return wf.Sequence(steps, name=name)
    if cfg.type == "fallback":
        return wf.Fallback(steps, name=name)
    if cfg.type == "loop":
        until = import_ref(cfg.until, where=f"{where}.until") if cfg.until else None
        return wf.Repeat(steps[0], until=until, max_iterations=cfg.max_iterations, name=name)
    if cfg.type == "retry":
        return wf.Retry(steps[0], attempts=cfg.attempts, name=name)
    if cfg.type == "timeout":
        return wf.Timeout(steps[0], timeout_s=cfg.timeout_s, name=name)
    if cfg.type == "router":
        return wf.Router(steps, name=name)
    reduce = import_ref(cfg.reduce, where=f"{where}.reduce") if cfg.reduce else None
    return wf.Parallel(steps, reduce=reduce, name=name)


class _Named(AgentBase):
    """Registers an agent in the pool under its config name (a factory's agent may differ)."""

    def __init__(self, name: str, agent: Agent) -> None:
        self.name = name
        self.agent = agent

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        return self.agent.stream(task, ctx)

    def run(self, task: str, ctx: AgentContext | None = None) -> AgentResult:
        return self.agent.run(task, ctx)


def register_agents(app: AppConfig, agents: Mapping[str, Agent], pool: AgentPool) -> None:
    """``pool.agents`` (default: every agent and workflow) registered in ``pool`` by config name."""
    for name in app.pool.agents or list(agents):
        pool.register(_Named(name, agents[name]))


# --- the voice loop --------------------------------------------------------------------------------


def make_voice_loop(app: AppConfig, runtime: Runtime, engines: LoadedEngines, agent: Agent) -> VoiceLoop:
    """The voice loop of ``app`` driving ``agent`` with ``engines`` on ``runtime``'s bus.

    Turns run in a context of the runtime: the shared blackboard and its activity registry,
    so a stop from any source reaches what every turn started.
    """
    from edgevox.voice.chunker import ChunkerSettings
    from edgevox.voice.loop import VoiceLoop
    from edgevox.voice.segmenter import SegmenterSettings
    from edgevox.voice.settings import VoiceSettings

    ep = app.endpointing
    segmenter = SegmenterSettings(
        frame_ms=app.vad.frame_ms,
        pre_roll_ms=ep.pre_roll_ms,
        min_speech_ms=ep.min_speech_ms,
        end_silence_ms=ep.end_silence_ms,
        hold_silence_ms=ep.hold_silence_ms,  # the loop turns it off without speculative STT
        statement_silence_ms=ep.statement_silence_ms,
        max_utterance_s=ep.max_utterance_s,
        pause_ms=ep.pause_ms,
    )
    live_input = app.audio.input.source not in ("text", "file")
    settings = VoiceSettings(
        segmenter=segmenter,
        chunker=ChunkerSettings(first_fragment_max_words=app.voice.first_fragment_words),
        speculative_stt=app.voice.speculative_stt,
        speculative_reply=app.voice.speculative_reply,
        tts_priority_ms=app.voice.tts_priority_ms,
        echo_guard=app.voice.echo_guard,
        echo_tail_ms=app.voice.echo_tail_ms,
        energy_gate_ratio=app.voice.energy_gate_ratio,
        barge_in=app.voice.barge_in,
        stop_phrases=tuple(app.safety.stop_phrases) if app.safety.enabled else (),
        stop_confirmation=app.safety.confirmation,
        vocabulary=tuple(app.stt.vocabulary),
        session_id=app.voice.session_id,
        input_stall_s=2.0 if live_input else None,
    )
    context = runtime.pool.make_ctx(session_id=app.voice.session_id, agent_name=agent.name)
    return VoiceLoop(
        runtime.bus,
        engines.vad,
        engines.stt,
        agent,
        engines.tts,
        engines.audio_in,
        engines.audio_out,
        settings,
        context=context,
        name=app.name,
    )


@runtime_checkable
class WarmsUp(Protocol):
    """An agent or engine that can pay its first-call costs ahead of the first turn."""

    def warmup(self) -> object: ...


def warm_up(main: Agent, engines: LoadedEngines, step: Steps) -> None:
    """Warm the main agent's prompt cache and the engines this app loaded itself (not ones
    passed in, e.g. scripted): the first turn should not pay first-call allocations (~0.5 s
    for Whisper on 2 cores)."""
    if isinstance(main, WarmsUp):
        step("prompt cache", main.warmup)
    for engine in engines.loaded:
        if isinstance(engine, WarmsUp):
            step(f"warm up {type(engine).__name__}", engine.warmup)


# --- background agents ---------------------------------------------------------------------------


@dataclass
class TemplateTrigger:
    """``event -> task``: fills ``{field}`` placeholders of ``template`` from the event's fields.

    Fields are those of ``Event.to_dict()`` (``kind``, ``source``, ``text``...). A missing
    field leaves the event unanswered (None) rather than running a half-filled task, and
    is counted in ``missing``.
    """

    template: str
    fields: tuple[str, ...] = field(init=False)
    missing: int = 0

    def __post_init__(self) -> None:
        try:
            self.fields = tuple(f for _, f, _, _ in string.Formatter().parse(self.template) if f)
        except ValueError as exc:
            raise ConfigError(f"trigger task template {self.template!r}: {exc}") from None

    def __call__(self, event: Any) -> str | None:
        data = event.to_dict() if hasattr(event, "to_dict") else dict(event)
        try:
            return self.template.format_map(data)
        except (KeyError, IndexError, AttributeError, ValueError, TypeError):  # a field missing or of another type
            self.missing += 1
            return None


def make_trigger(cfg: BackgroundAgentConfig) -> Callable[[Any], Any]:
    where = f"background_agents.{cfg.name}.trigger"
    trigger: Callable[[Any], Any]
    if cfg.trigger.function:
        trigger = import_ref(cfg.trigger.function, where=f"{where}.function")
        if not callable(trigger):
            raise ConfigError(f"{where}.function: {cfg.trigger.function!r} is not callable")
    else:
        trigger = TemplateTrigger(cfg.trigger.task or "")
    if cfg.trigger.debounce_s > 0:
        from edgevox.runtime import debounce_trigger

        trigger = debounce_trigger(trigger, cfg.trigger.debounce_s, edge="trailing")
    return trigger


def start_background_agent(cfg: BackgroundAgentConfig, agents: dict[str, Any], pool: AgentPool) -> BackgroundAgent:
    """Add the background agent to ``pool`` (supervised by the pool's supervisor; it starts
    with the runtime). Returns the :class:`~edgevox.runtime.BackgroundAgent`."""
    patterns = tuple(cfg.trigger.events)
    agent = agents[cfg.agent]
    return pool.start_background(
        cfg.name,
        trigger=make_trigger(cfg),
        subscribe_to=patterns if len(patterns) > 1 else patterns[0],
        max_queue=cfg.max_queue,
        overflow=cfg.overflow,
        restart=cfg.restart,
        max_restarts=cfg.max_restarts,
        restart_window_s=cfg.restart_window_s,
        factory=lambda: agent,  # the configured agent object; each incarnation gets a fresh context
    )


# --- bridges -------------------------------------------------------------------------------------


def make_bridges(
    cfg: BridgesConfig,
    runtime: Runtime,
    *,
    on_text: Callable[[str], object] | None = None,
    on_say: Callable[[str], object] | None = None,
    main: Agent | None = None,
    main_name: str = "",
) -> list[tuple[str, Bridge]]:
    """The enabled bridges on ``runtime``'s bus and blackboard, built but not started
    (``App.start`` starts them).

    ROS bridges get the text handlers (a user turn; words to speak as they are), the main
    agent's skills with its executor when it is an LLMAgent with skills (so a safety stop on
    the bus cancels goals that ROS clients started, like the agent's own) and a context on
    the runtime's bus and blackboard.
    """
    from edgevox.agents.llm_agent import LLMAgent

    bus, blackboard = runtime.bus, runtime.blackboard
    ctx = runtime.pool.make_ctx(agent_name=main_name)
    skills = list(main.skills.values()) if isinstance(main, LLMAgent) else []
    executor = main.executor if isinstance(main, LLMAgent) and skills else None
    out: list[tuple[str, Bridge]] = []
    if cfg.zenoh.enabled:
        from edgevox.integrations.zenoh_bridge import ZenohBridge

        out.append(("zenoh", ZenohBridge(bus, cfg.zenoh, blackboard=blackboard)))
    if cfg.ros2.enabled:
        from edgevox.integrations.ros2 import Ros2Bridge

        ros2 = Ros2Bridge(bus, cfg.ros2, on_text=on_text, on_say=on_say, skills=skills, executor=executor, ctx=ctx)
        out.append(("ros2", ros2))
    if cfg.ros1.enabled:
        try:
            from edgevox.integrations.ros1 import Ros1Bridge
        except ModuleNotFoundError as exc:
            raise ConfigError(f"bridges.ros1.enabled: the ROS 1 bridge is not available here: {exc}") from None
        ros1 = Ros1Bridge(bus, cfg.ros1, on_text=on_text, on_say=on_say, skills=skills, executor=executor, ctx=ctx)
        out.append(("ros1", ros1))
    return out


def check_bridges(cfg: BridgesConfig) -> list[tuple[str, str, str]]:
    """``(bridge, status, detail)`` for ``edgevox check``: ``off`` for a disabled bridge, else
    ``ok``/``fail`` from :func:`edgevox.integrations.check_bridges` (which really opens a Zenoh
    session, initialises a private rclpy context, or asks the ROS 1 master)."""
    from edgevox.integrations import check_bridges as check_enabled

    results = {name: ("ok" if ok else "fail", detail) for name, ok, detail in check_enabled(cfg)}
    return [(name, *results.get(name, ("off", "disabled"))) for name in ("zenoh", "ros2", "ros1")]
