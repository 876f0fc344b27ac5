"""``edgevox check``: what a config needs, resolved and opened without running the application.

:func:`check_config` reports, item by item, whether the models resolve, the references
(custom engines, agent factories, tools, triggers) import, the audio devices or files open
and the enabled bridges can start; :func:`list_audio_devices` lists what PortAudio sees.
Engine sections go through :mod:`edgevox.config.engine_checks`, the validation ``run`` does
before it loads a model, so a section ``run`` refuses fails here with the same line.
Library code: it returns reports and never prints (``edgevox check`` in
:mod:`edgevox.cli.run_cmd` prints them, as text or ``--json``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from edgevox.config import build as wiring
from edgevox.config.engine_checks import EngineSection
from edgevox.config.schema import (
    AgentConfig,
    AppConfig,
    BackgroundAgentConfig,
    LLMConfig,
    STTConfig,
    TTSConfig,
    VADConfig,
)
from edgevox.errors import AudioDeviceError, EdgeVoxError

C = TypeVar("C", STTConfig, LLMConfig, TTSConfig)


@dataclass
class CheckItem:
    what: str
    status: str
    """``ok``, ``warn``, ``fail`` or ``off``."""
    detail: str


@dataclass
class CheckReport:
    items: list[CheckItem] = field(default_factory=list)

    def add(self, what: str, status: str, detail: str) -> None:
        self.items.append(CheckItem(what, status, detail))

    @property
    def failed(self) -> list[CheckItem]:
        return [i for i in self.items if i.status == "fail"]


def check_config(config: AppConfig, *, load_models: bool = False) -> CheckReport:
    """What ``edgevox check`` reports: models resolved, references imported, devices opened, bridges."""
    report = CheckReport()
    text_in = config.audio.input.source == "text"
    no_out = config.audio.output.sink == "none"
    rate = config.audio.sample_rate_hz
    for spec in wiring.engine_sections(config):  # the sections `run` builds, checked as it checks them
        if spec.agent is None:
            _try_engine(report, spec, rate)
    from edgevox.config.diagnostics import engine_devices

    for what, status, detail in engine_devices(config):
        report.add(f"{what} runs on", status, detail)
    if load_models:
        _try(report, "load LLM", partial(_load, wiring.make_llm, config.llm))
        if not text_in:
            _try(report, "load STT", partial(_load, wiring.make_stt, config.stt))
        if not no_out:
            _try(report, "load TTS", partial(_load, wiring.make_tts, config.tts))
        _try(report, "load VAD", lambda: type(wiring.make_vad(config.vad, rate)).__name__ + " loaded")
    _check_agent_llms(report, config, load=load_models)
    for name, agent in config.agents.items():
        refs = ([agent.factory] if agent.factory else []) + agent.tools + agent.skills
        _try(report, f"agent {name}", partial(_check_agent_refs, name, agent, refs))
        _report_tool_frames(report, name, agent)
    for name, wf in config.workflows.items():
        report.add(f"workflow {name}", "ok", f"{wf.type} of {', '.join(wf.steps)}")
    for bg in config.background_agents:
        _try(report, f"background {bg.name}", partial(_describe_trigger, bg))
    report.add("answers with", "ok", config.main_agent)
    _check_wake(report, config)
    _check_stop(report, config)
    _check_audio(report, config)
    for name, status, detail in wiring.check_bridges(config.bridges):
        report.add(f"bridge {name}", status, detail)
    return report


def _check_wake(report: CheckReport, config: AppConfig) -> None:
    """The wake word: off, ignored for typed input, or its model loaded (a few ms; TensorFlow
    Lite refuses a broken file here rather than when the loop starts)."""
    if config.wake.model is None:
        report.add("wake word", "off", "every utterance is a turn (wake.model: null)")
    elif config.audio.input.source == "text":
        report.add("wake word", "off", f"{config.wake.model}: not used for typed input")
    else:
        _try(report, "wake word", partial(_load_wake, config))


def _check_stop(report: CheckReport, config: AppConfig) -> None:
    """The spoken stop: which phrases, how they are recognised, and the echo guard that lets a
    stop be heard over the robot's voice (its library imported for ``aec``)."""
    from edgevox.voice.stop_check import describe

    if not config.safety.enabled:
        report.add("stop phrases", "off", "safety.enabled is false: only a StopEvent stops the robot")
        return
    spoken = config.audio.input.source != "text"
    second = spoken and config.stt.engine == "faster-whisper"
    report.add("stop phrases", "ok", describe(config.safety.stop_phrases, second_listen=second))
    if not spoken:
        return
    guard = config.voice.echo_guard
    if guard == "aec":
        _try(report, "echo guard", _check_aec)
    else:
        report.add("echo guard", "ok", f"{guard} (docs/voice.md, Echo guard)")


def _check_aec() -> str:
    from edgevox.voice.aec import apm_module, speex_library

    apm_module()  # ModelError with what to install when livekit is missing
    speex_library()  # the same when libspeexdsp is
    from importlib.metadata import version

    return (
        f"aec: WebRTC AEC3 (livekit {version('livekit')}) removes the robot's voice from the microphone; "
        "the stop check also hears Speex's linear stage (libspeexdsp)"
    )


def _load_wake(config: AppConfig) -> str:
    from edgevox.engines.wake_micro import MicroWakeWordDetector

    detector = MicroWakeWordDetector(
        config.wake.model or "", threshold=config.wake.threshold, sliding_window=config.wake.sliding_window
    )
    try:
        return f'say "{detector.phrase}" (threshold {detector.threshold:g}, window {config.wake.window_s:g} s)'
    finally:
        detector.close()


def _try_engine(report: CheckReport, spec: EngineSection, rate: int) -> None:
    """The section checked as ``run`` checks it before loading (:func:`wiring.check_engine`),
    then its model resolved: ``STT model``, or ``LLM engine`` for a custom one."""
    try:
        custom = wiring.check_engine(spec.role, spec.section, spec.key, sample_rate_hz=rate) is not None
    except EdgeVoxError as exc:
        report.add(f"{spec.role} engine", "fail", str(exc))
        return
    section = spec.section
    if custom:
        report.add(f"{spec.role} engine", "ok", f"custom {section.engine}")
    elif isinstance(section, TTSConfig):
        _try(report, f"{spec.role} model", partial(_resolve_model, section.voice))
    elif not isinstance(section, VADConfig):
        _try(report, f"{spec.role} model", partial(_resolve_model, section.model))


def _check_agent_llms(report: CheckReport, config: AppConfig, *, load: bool) -> None:
    """One item per agent with its own ``llm:`` keys: its model resolved (and loaded), or which
    engine it shares (same model file and load options as ``llm:`` or an earlier agent)."""
    main_key = wiring.llm_key(config.llm)
    first: dict[tuple[str, ...], str] = {}
    for spec in wiring.engine_sections(config):
        if spec.agent is None or not isinstance(spec.section, LLMConfig):
            continue
        name, cfg = spec.agent, spec.section
        key = wiring.llm_key(cfg)
        if key == main_key or key in first:
            owner = "llm:" if key == main_key else f"agent {first[key]}"
            report.add(f"agent {name} model", "ok", f"{cfg.model}: shares the engine of {owner}")
            continue
        first[key] = name
        _try(report, f"agent {name} model", partial(_own_engine, spec, cfg))
        if load:
            _try(report, f"load agent {name} LLM", partial(_load, wiring.make_llm, cfg))


def _own_engine(spec: EngineSection, cfg: LLMConfig) -> str:
    """An agent's own engine (``cfg`` is ``spec.section``), checked as ``run`` checks it; for
    llama.cpp its model resolved and the load options that make it one."""
    if wiring.check_engine(spec.role, cfg, spec.key) is not None:
        return f"custom {cfg.engine}"
    return f"{_resolve_model(cfg.model)}; its own engine (context_tokens {cfg.context_tokens})"


def _resolve_model(ref: str) -> str:
    from edgevox import models

    return f"{ref} -> {models.resolve(ref)}"


def _load(make: Callable[[C], object], section: C) -> str:
    return type(make(section)).__name__ + " loaded"


def _try(report: CheckReport, what: str, fn: Callable[[], object]) -> None:
    try:
        report.add(what, "ok", str(fn()))
    except EdgeVoxError as exc:
        report.add(what, "fail", str(exc))


def _check_agent_refs(name: str, agent: AgentConfig, refs: list[str]) -> str:
    if agent.factory:
        wiring.import_ref(agent.factory, where=f"agents.{name}.factory")
        return f"built by {agent.factory}"
    tools = wiring.resolve_tools(agent.tools, where=f"agents.{name}.tools")
    tools += wiring.resolve_tools(agent.skills, where=f"agents.{name}.skills")
    names = ", ".join(t.name for t in tools) or "no tools"
    return f"{names}" + (f"; hands off to {', '.join(agent.handoffs)}" if agent.handoffs else "")


def _report_tool_frames(report: CheckReport, name: str, agent: AgentConfig) -> None:
    """How each tool of ``agent`` is read from its code (what a request must say to call it), and
    a warning line where its docstring leaves requests ambiguous."""
    if agent.factory:
        return
    from edgevox.language.frame_report import describe_frame, frame_warnings
    from edgevox.language.frames import read_frame

    try:
        tools = wiring.resolve_tools([*agent.tools, *agent.skills], where=f"agents.{name}.tools")
    except EdgeVoxError:
        return  # the agent line above already says why
    from edgevox.agents.skills import Skill

    for t in tools:
        spec = t.tool if isinstance(t, Skill) else t
        frame = read_frame(spec.name, spec.description, spec.parameters)
        report.add(f"  tool {spec.name}", "ok", describe_frame(frame))
        for warning in frame_warnings(frame):
            report.add(f"  tool {spec.name}", "warn", warning)


def _describe_trigger(bg: BackgroundAgentConfig) -> str:
    wiring.make_trigger(bg)
    what = bg.trigger.function or repr(bg.trigger.task)
    return f"{bg.agent} on {', '.join(bg.trigger.events)} -> {what} (queue {bg.max_queue}, {bg.overflow}, restart {bg.restart})"


def _check_audio(report: CheckReport, config: AppConfig) -> None:
    inp, out = config.audio.input, config.audio.output
    if inp.source == "text":
        report.add("input", "ok", "typed text (stdin)")
    elif inp.source == "file":
        _try(report, "input", lambda: _check_wav(inp.file or ""))
    else:
        _try(report, "input", lambda: _open_device("input", inp.device))
    if out.sink == "none":
        report.add("output", "ok", "none (replies as text)")
    elif out.sink == "file":
        report.add("output", "ok", f"WAV file {out.file}")
    else:
        _try(report, "output", lambda: _open_device("output", out.device))


def _check_wav(path: str) -> str:
    from edgevox.engines.audio_wav import wav_info

    seconds, rate = wav_info(path)
    return f"WAV file {path} ({seconds:.1f} s at {rate} Hz)"


def _open_device(kind: str, spec: Any) -> str:
    """Find the device and open a stream on it briefly (proves it works)."""
    from edgevox.engines.audio_sounddevice import SoundDeviceIn, SoundDeviceOut, find_device

    sd = _sounddevice_or_explain()
    if not list(sd.query_devices()):
        raise AudioDeviceError(f"no audio {kind} device (PortAudio sees none); use --input/--output FILE.wav or --text")
    index = find_device(sd, spec, kind)
    stream = (
        SoundDeviceIn(device=spec, watchdog_timeout_s=0)
        if kind == "input"
        else SoundDeviceOut(device=spec, watchdog_timeout_s=0)
    )
    try:
        stream.start()
    except Exception as exc:  # noqa: BLE001 - PortAudio raises its own types
        raise AudioDeviceError(f"cannot open audio {kind} {spec or 'default'}: {exc}") from None
    finally:
        try:
            stream.stop()
        except Exception:  # noqa: BLE001 - closing a half-open stream may fail; it is being discarded
            pass
    info = sd.query_devices(index if index is not None else sd.default.device[0 if kind == "input" else 1])
    return f"device {info['name']!r} opened ({info['default_samplerate']:.0f} Hz)"


def _sounddevice_or_explain() -> Any:
    from edgevox.engines._util import require

    try:
        return require("sounddevice", package="sounddevice", extra="audio", purpose="audio devices")
    except OSError as exc:  # libportaudio2 missing: sounddevice raises OSError at import
        raise AudioDeviceError(f"PortAudio is not installed ({exc}): run `apt-get install libportaudio2`") from None


def list_audio_devices() -> list[dict[str, Any]]:
    """Every audio device PortAudio sees (empty when there is none)."""
    sd = _sounddevice_or_explain()
    try:
        devices = list(sd.query_devices())
        default_in, default_out = sd.default.device
    except Exception as exc:  # noqa: BLE001 - PortAudio errors vary by platform
        raise AudioDeviceError(f"cannot list audio devices: {exc}") from None
    return [
        {
            "index": i,
            "name": d["name"],
            "inputs": d["max_input_channels"],
            "outputs": d["max_output_channels"],
            "default_rate_hz": d["default_samplerate"],
            "default_input": i == default_in,
            "default_output": i == default_out,
        }
        for i, d in enumerate(devices)
    ]
