"""From a validated :class:`~edgevox.config.schema.AppConfig` to objects: the one place wiring happens.

Every config section becomes objects here, one concept per module of this package:

* :mod:`edgevox.config.build_engines`: engines and audio devices (``make_llm``, ``make_stt``,
  ``make_tts``, ``make_vad``, ``make_audio_in``/``out``, the set an app needs: ``make_engines``);
* this module: agents and workflows, the pool's registrations, the voice loop, warm-up;
* :mod:`edgevox.config.build_background`: background agents and their triggers;
* :mod:`edgevox.config.build_bridges`: the ROS 2, ROS 1 and Zenoh bridges;
* :mod:`edgevox.config.build_orchestration`: strategies, delivery and the coordinator.

Each ``make_*`` function turns one section into the object it describes and imports the
adapter (and so its heavy library) only when that section is used: a text config never
imports faster-whisper, piper or sounddevice. :class:`edgevox.app.App` calls them in order
and owns the lifecycle of what they return; ``edgevox.voice.defaults`` and the benchmarks
build through the same functions. The other modules' functions are re-exported here, so
``from edgevox.config.build import make_llm`` names the whole wiring API.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from edgevox.agents.base import Agent, AgentBase
from edgevox.config.build_background import TemplateTrigger, make_trigger, start_background_agent
from edgevox.config.build_bridges import check_bridges, make_bridges
from edgevox.config.build_engines import (
    Engines,
    LoadedEngines,
    Progress,
    Steps,
    llm_key,
    make_audio_in,
    make_audio_out,
    make_engines,
    make_llm,
    make_llms,
    make_stt,
    make_tts,
    make_vad,
)
from edgevox.config.build_orchestration import delegation_tools_for, make_delegator
from edgevox.config.engine_checks import check_engine, check_engines, engine_factory, engine_sections, is_ref
from edgevox.config.refs import import_ref
from edgevox.config.schema import (
    AgentConfig,
    AppConfig,
    WorkflowConfig,
)
from edgevox.errors import ConfigError

if TYPE_CHECKING:
    from edgevox.agents.base import AgentResult, AgentStream
    from edgevox.agents.decoders import ToolDecoder
    from edgevox.agents.skills import Skill
    from edgevox.agents.tools import Tool
    from edgevox.engines.base import LLM
    from edgevox.orchestration.delegation import Delegator
    from edgevox.runtime.context import AgentContext
    from edgevox.runtime.pool import AgentPool
    from edgevox.runtime.runtime import Runtime
    from edgevox.voice.loop import VoiceLoop

__all__ = [
    "Engines",
    "LoadedEngines",
    "Progress",
    "Steps",
    "TemplateTrigger",
    "check_engine",
    "check_engines",
    "engine_factory",
    "engine_sections",
    "import_ref",
    "is_ref",
    "llm_key",
    "make_agent",
    "make_agents",
    "make_audio_in",
    "make_audio_out",
    "make_decoder",
    "make_bridges",
    "make_engines",
    "make_llm",
    "make_llms",
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


def resolve_tools(refs: Iterable[str], *, where: str) -> list[Tool | Skill]:
    """Import tool references; a reference may name one tool or a list/tuple of tools.

    Plain functions are turned into tools with :func:`edgevox.agents.tools.build_tool`;
    ``@tool`` and ``@skill`` objects are kept as they are.
    """
    from edgevox.agents.skills import Skill
    from edgevox.agents.tools import Tool, build_tool

    out: list[Tool | Skill] = []
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


def make_agent(
    name: str,
    cfg: AgentConfig,
    llm: LLM,
    app: AppConfig,
    *,
    others: dict[str, Agent] | None = None,
    delegator: Delegator | None = None,
) -> Agent:
    """One agent: from its factory, or an LLMAgent (without tools and handoffs, the plain chat agent).

    ``llm`` is this agent's engine; its reply length and temperature are the agent's keys, else
    its ``agents.<name>.llm`` keys, else ``llm:``'s (:meth:`AppConfig.llm_for`)."""
    where = f"agents.{name}"
    own = app.llm_for(name)
    max_tokens, temperature = own.max_tokens, own.temperature
    if cfg.factory:
        factory = import_ref(cfg.factory, where=f"{where}.factory")
        try:
            agent = factory(llm=llm, **cfg.options)
        except TypeError as exc:
            raise ConfigError(f"{where}.factory: {cfg.factory}(llm=..., **options) failed: {exc}") from None
        if "tool_timeout_s" not in cfg.options and hasattr(agent, "tool_timeout_s"):
            agent.tool_timeout_s = app.safety.tool_timeout_s
        _set_speak_tool_results(agent, cfg, where)
        if cfg.decoder is not None:
            if not hasattr(agent, "decoder"):
                raise ConfigError(f"{where}.decoder: the agent built by {cfg.factory} has no decoder setting")
            agent.decoder = make_decoder(cfg.decoder)
        _factory_delegation(agent, cfg, where)
        return agent
    tools = resolve_tools(cfg.tools, where=f"{where}.tools") + resolve_tools(cfg.skills, where=f"{where}.skills")
    tools += delegation_tools_for(delegator, name) if cfg.delegates else []  # delegate, list_processes, ...
    try:
        from edgevox.agents.base import AgentRef
        from edgevox.agents.llm_agent import LLMAgent
    except ModuleNotFoundError as exc:
        raise ConfigError(f"{where}: agents need edgevox.agents.llm_agent, which is missing: {exc}") from None
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
        decoder=make_decoder(cfg.decoder) if cfg.decoder is not None else None,
        limits=cfg.limits.model_dump(),
        max_handoffs_per_turn=app.orchestration.handoff.max_handoffs_per_turn,
    )


def _factory_delegation(agent: object, cfg: AgentConfig, where: str) -> None:
    """``delegates`` and ``limits`` of an agent a factory built: tools come from the factory."""
    if cfg.delegates:
        raise ConfigError(
            f"{where}.delegates: an agent built by a factory gets its tools from the factory; give it "
            "edgevox.orchestration.delegation_tools.delegation_tools(...) there, or drop the factory"
        )
    if cfg.limits != type(cfg.limits)():
        if not hasattr(agent, "limits"):
            raise ConfigError(f"{where}.limits: the agent built by {cfg.factory} has no limits setting")
        from edgevox.agents.tool_calls import ToolLimits

        agent.limits = ToolLimits.of(str(getattr(agent, "name", where)), cfg.limits.model_dump())


def make_decoder(name: str) -> ToolDecoder:
    """The tool decoder an ``agents.<name>.decoder`` value names (see :mod:`edgevox.agents.decoders`)."""
    from edgevox.agents import decoders

    kinds: dict[str, Callable[[], ToolDecoder]] = {
        "schema_first": decoders.SchemaFirstDecoder,
        "two_stage": decoders.TwoStageDecoder,
        "grammar": decoders.GrammarDecoder,
        "free_text": decoders.FreeTextDecoder,
    }
    return kinds[name]()


def _set_speak_tool_results(agent: object, cfg: AgentConfig, where: str) -> None:
    """``agents.<name>.speak_tool_results`` on an agent a factory built."""
    if cfg.speak_tool_results is None or "speak_tool_results" in cfg.options:
        return
    if not hasattr(agent, "speak_tool_results"):
        raise ConfigError(
            f"{where}.speak_tool_results: the agent built by {cfg.factory} has no speak_tool_results setting"
        )
    agent.speak_tool_results = cfg.speak_tool_results


def make_agents(
    app: AppConfig, llm: LLM, *, llms: Mapping[str, LLM] | None = None, delegator: Delegator | None = None
) -> dict[str, Agent]:
    """Every agent and workflow by name. Handoff targets are built before the agents that use them.

    ``llm`` is the engine of the ``llm:`` section; ``llms`` the engine of each agent by name
    (:func:`make_llms`). Without ``llms``, agents that name their own model or load options
    (``agents.<name>.llm``) get engines loaded here, one per distinct model file and load
    options (so agents that name the same share one), and the others use ``llm``.
    ``delegator``: what agents' ``delegates:`` lists delegate through (:func:`make_delegator`;
    made here when not given). Whoever owns it closes it (the App does, at stop)."""
    engines = llms if llms is not None else make_llms(app, main=llm)
    built: dict[str, Agent] = {}
    if delegator is None:
        delegator = make_delegator(app.orchestration, {n: c.delegates for n, c in app.agents.items()})
    pending = dict(app.agents)
    visiting: set[str] = set()

    def build(name: str) -> Agent | None:
        if name in built:
            return built[name]
        if name in visiting:  # a handoff cycle: make_agent refers to the back edge by name (AgentRef)
            return None
        visiting.add(name)
        cfg = pending[name]
        for target in cfg.handoffs:
            build(target)
        built[name] = make_agent(name, cfg, engines.get(name, llm), app, others=built, delegator=delegator)
        visiting.discard(name)
        return built[name]

    for name in app.agents:
        build(name)
    for name in app.workflows:
        built[name] = make_workflow(name, app.workflows, built)
    if delegator is not None:  # what ``delegates:`` lists can reach, now that every agent is built
        delegator.agents.update(built)
    return built


def make_workflow(name: str, workflows: dict[str, WorkflowConfig], built: dict[str, Agent]) -> Agent:
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
    from edgevox.config.build_wake import make_wake
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
        stop_negations=tuple(app.safety.negations),
        stop_confirmation=app.safety.confirmation,
        vocabulary=tuple(app.stt.vocabulary),
        session_id=app.voice.session_id,
        input_stall_s=2.0 if live_input else None,
    )
    context = runtime.pool.make_ctx(session_id=app.voice.session_id, agent_name=agent.name)
    wake = make_wake(app, engines) if app.wake.model and app.audio.input.source != "text" else None
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
        wake=wake,
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
