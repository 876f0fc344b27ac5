"""From a validated :class:`~edgevox.config.schema.AppConfig` to objects: the one place wiring happens.

Each ``make_*`` function turns one config section into the object it describes and
imports the adapter (and so its heavy library) only when that section is used: a text
config never imports faster-whisper, piper or sounddevice. :class:`edgevox.app.App`
calls them in order and owns the lifecycle of what they return.

Custom engines: a section whose ``engine`` is a ``module:factory`` reference is built by
calling ``factory(**options)``; the returned object must satisfy the engine's protocol in
:mod:`edgevox.engines.base`.
"""

from __future__ import annotations

import inspect
import re
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from edgevox.config.refs import import_ref
from edgevox.config.schema import (
    REF_PATTERN,
    AgentConfig,
    AppConfig,
    AudioInputConfig,
    AudioOutputConfig,
    BackgroundAgentConfig,
    LLMConfig,
    STTConfig,
    TTSConfig,
    VADConfig,
    WorkflowConfig,
)
from edgevox.errors import ConfigError, EdgeVoxError

# --- engines -------------------------------------------------------------------------------------


def is_ref(engine: str) -> bool:
    """True when an ``engine`` value is a ``module:factory`` reference (not a builtin name)."""
    return re.match(REF_PATTERN, engine) is not None


def engine_factory(engine: str, options: dict[str, Any], where: str) -> Callable[..., Any]:
    """Import a custom engine factory and check it accepts ``options`` (without calling it)."""
    factory = import_ref(engine, where=where)
    if not callable(factory):
        raise ConfigError(f"{where} = {engine!r} is a {type(factory).__name__}, not a factory function or class")
    try:
        inspect.signature(factory).bind(**options)
    except TypeError as exc:
        keys = ", ".join(options) or "no options"
        raise ConfigError(
            f"{where} = {engine!r} cannot be called with {keys}: {exc}; fix the engine's options"
        ) from None
    except ValueError:
        pass  # no signature to inspect (some builtins): calling it will tell
    return factory


def _custom(engine: str, options: dict[str, Any], where: str, role: str) -> Any | None:
    """Build a ``module:factory`` engine and check it has the methods of ``role``'s protocol."""
    if not is_ref(engine):
        return None
    from edgevox.engines import base

    factory = engine_factory(engine, options, where)
    try:
        built = factory(**options)
    except EdgeVoxError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's factory failed: name it
        raise ConfigError(f"{where} = {engine!r}: building the engine raised {type(exc).__name__}: {exc}") from None
    protocol = getattr(base, role)
    if not isinstance(built, protocol):
        members = set(vars(protocol)) | set(getattr(protocol, "__annotations__", {}))
        needs = ", ".join(sorted(n for n in members if not n.startswith("_")))
        raise ConfigError(
            f"{where} = {engine!r} returned a {type(built).__name__}, which is not a valid {role} engine "
            f"(it needs: {needs}; see edgevox.engines.base.{role})"
        )
    return built


def _unknown_engine(where: str, engine: str, known: Iterable[str]) -> ConfigError:
    return ConfigError(
        f"{where} = {engine!r}: unknown engine; use one of {', '.join(known)} or a 'module:factory' reference"
    )


def make_stt(cfg: STTConfig) -> Any:
    custom = _custom(cfg.engine, cfg.options, "stt.engine", "STT")
    if custom is not None:
        return custom
    if cfg.engine != "faster-whisper":
        raise _unknown_engine("stt.engine", cfg.engine, ["faster-whisper"])
    from edgevox.engines.stt_faster_whisper import FasterWhisperSTT

    return FasterWhisperSTT(
        cfg.model,
        cpu_threads=cfg.cpu_threads,
        beam_size=cfg.beam_size,
        language=cfg.language,
        bias=cfg.bias,
        no_speech_threshold=cfg.no_speech_threshold,
        device=cfg.device,
        compute_type=cfg.compute_type,
        min_window_s=cfg.min_window_s,
        window_pad_s=cfg.window_pad_s,
        **cfg.options,
    )


def make_llm(cfg: LLMConfig) -> Any:
    custom = _custom(cfg.engine, cfg.options, "llm.engine", "LLM")
    if custom is not None:
        return custom
    if cfg.engine != "llama-cpp":
        raise _unknown_engine("llm.engine", cfg.engine, ["llama-cpp"])
    from edgevox.engines.llm_llama_cpp import LlamaCppLLM

    return LlamaCppLLM(
        cfg.model,
        n_ctx=cfg.context_tokens,
        n_threads=cfg.threads,
        n_threads_batch=cfg.batch_threads,
        n_gpu_layers=cfg.gpu_layers,
        seed=cfg.seed,
        **cfg.options,
    )


def make_tts(cfg: TTSConfig) -> Any:
    custom = _custom(cfg.engine, cfg.options, "tts.engine", "TTS")
    if custom is not None:
        return custom
    if cfg.engine != "piper":
        raise _unknown_engine("tts.engine", cfg.engine, ["piper"])
    from edgevox.engines.tts_piper import PiperTTS

    return PiperTTS(
        cfg.voice,
        length_scale=cfg.length_scale,
        speaker_id=cfg.speaker_id,
        num_threads=cfg.threads,
        device=cfg.device,
        **cfg.options,
    )


def make_vad(cfg: VADConfig, sample_rate_hz: int) -> Any:
    custom = _custom(cfg.engine, cfg.options, "vad.engine", "VAD")
    if custom is not None:
        return custom
    if cfg.engine != "webrtc":
        raise _unknown_engine("vad.engine", cfg.engine, ["webrtc"])
    from edgevox.engines.vad_webrtc import WebRtcVAD

    vad = WebRtcVAD(sample_rate_hz=sample_rate_hz, frame_ms=cfg.frame_ms, aggressiveness=cfg.aggressiveness)
    if cfg.confirm == "none":
        return vad
    if sample_rate_hz % 16000:
        raise ConfigError(
            f"vad.confirm = 'silero' needs a 16, 32 or 48 kHz pipeline (audio.sample_rate_hz = {sample_rate_hz}): "
            "set vad.confirm: none or audio.sample_rate_hz: 16000"
        )
    from edgevox.engines.vad_silero import ConfirmedVAD, SileroVAD

    return ConfirmedVAD(vad, SileroVAD(), threshold=cfg.silero_threshold)


# --- audio ---------------------------------------------------------------------------------------


def make_audio_in(cfg: AudioInputConfig, sample_rate_hz: int, *, on_event: Callable[[str], None] | None = None) -> Any:
    """The microphone or WAV reader; None for typed input."""
    if cfg.source == "text":
        return None
    if cfg.source == "file":
        from pathlib import Path

        from edgevox.engines.audio_wav import WavFileIn

        path = Path(cfg.file or "")
        if not path.is_file():
            raise ConfigError(f"audio.input.file = {cfg.file!r}: no such file")
        return WavFileIn(path, sample_rate_hz=sample_rate_hz, block_ms=cfg.block_ms, realtime=cfg.realtime)
    from edgevox.engines.audio_sounddevice import SoundDeviceIn

    return SoundDeviceIn(
        device=cfg.device,
        sample_rate_hz=sample_rate_hz,
        device_rate_hz=cfg.device_sample_rate_hz,
        block_ms=cfg.block_ms,
        on_event=on_event,
        latency=cfg.latency,
    )


def make_audio_out(cfg: AudioOutputConfig, sample_rate_hz: int, *, realtime_file: bool = False) -> Any:
    """The speaker or WAV writer at the TTS rate; None when there is no audio output."""
    if cfg.sink == "none":
        return None
    if cfg.sink == "file":
        from edgevox.engines.audio_wav import WavFileOut

        return WavFileOut(cfg.file or "reply.wav", sample_rate_hz=sample_rate_hz, realtime=realtime_file)
    from edgevox.engines.audio_sounddevice import SoundDeviceOut

    return SoundDeviceOut(
        device=cfg.device,
        sample_rate_hz=sample_rate_hz,
        device_rate_hz=cfg.device_sample_rate_hz,
        block_ms=cfg.block_ms,
        latency=cfg.latency,
    )


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
    """One agent: from its factory, as an LLMAgent with tools, or a plain chat agent."""
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
    if not tools and not cfg.handoffs:
        from edgevox.voice.chat_agent import ChatAgent

        return ChatAgent(llm, cfg.instructions, name=name, max_tokens=max_tokens, temperature=temperature)
    try:
        from edgevox.agents.base import AgentRef
        from edgevox.agents.llm_agent import LLMAgent
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"{where}: tools and handoffs need edgevox.agents.llm_agent, which is missing: {exc}"
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


def start_background_agent(cfg: BackgroundAgentConfig, agents: dict[str, Any], pool: Any) -> Any:
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
    cfg: Any,
    bus: Any,
    blackboard: Any,
    *,
    on_text: Callable[[str], Any] | None = None,
    on_say: Callable[[str], Any] | None = None,
    skills: Iterable[Any] = (),
    executor: Any = None,
    ctx: Any = None,
) -> list[tuple[str, Any]]:
    """The enabled bridges, built but not started (``App.start`` starts them).

    ROS bridges get the text handlers (a user turn; words to speak as they are), the main
    agent's skills with its executor (so a safety stop on the bus cancels goals that ROS
    clients started, like the agent's own) and a context on the runtime's bus and blackboard.
    """
    out: list[tuple[str, Any]] = []
    if cfg.zenoh.enabled:
        from edgevox.integrations.zenoh_bridge import ZenohBridge

        out.append(("zenoh", ZenohBridge(bus, cfg.zenoh, blackboard=blackboard)))
    ros = {"on_text": on_text, "on_say": on_say, "skills": list(skills), "executor": executor, "ctx": ctx}
    if cfg.ros2.enabled:
        from edgevox.integrations.ros2 import Ros2Bridge

        out.append(("ros2", Ros2Bridge(bus, cfg.ros2, **ros)))
    if cfg.ros1.enabled:
        try:
            from edgevox.integrations.ros1 import Ros1Bridge
        except ModuleNotFoundError as exc:
            raise ConfigError(f"bridges.ros1.enabled: the ROS 1 bridge is not available here: {exc}") from None
        out.append(("ros1", Ros1Bridge(bus, cfg.ros1, **ros)))
    return out


def check_bridges(cfg: Any) -> list[tuple[str, str, str]]:
    """``(bridge, status, detail)`` for ``edgevox check``: ``off`` for a disabled bridge, else
    ``ok``/``fail`` from :func:`edgevox.integrations.check_bridges` (which really opens a Zenoh
    session, initialises a private rclpy context, or asks the ROS 1 master)."""
    from edgevox.integrations import check_bridges as check_enabled

    results = {name: ("ok" if ok else "fail", detail) for name, ok, detail in check_enabled(cfg)}
    return [(name, *results.get(name, ("off", "disabled"))) for name in ("zenoh", "ros2", "ros1")]
