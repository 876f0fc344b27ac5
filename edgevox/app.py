"""An edgevox application: everything a config describes, built, started and stopped as one.

::

    app = App.build(load_config("default"))     # loads models (may take seconds)
    app.start()                                 # opens devices, starts threads; returns
    app.submit_text("what time is it?")         # or speak into the microphone
    app.wait_idle(30)
    app.stop(timeout_s=2.0)                     # True when every thread finished

:meth:`App.build` does the wiring through :mod:`edgevox.config.build` (the one place
config becomes objects): engines, agents and workflows, background agents, the voice
loop and bridges. Engines can be injected (``engines=Engines(llm=ScriptedLLM(...))``),
which is how tests run whole applications without models.

Typed input (``audio.input.source: text``) and no audio output (``audio.output.sink:
none``) still run the same :class:`~edgevox.voice.loop.VoiceLoop`, so the safety stop,
turn ids and events are identical; the missing devices and engines are replaced by the
null objects at the end of this module, which load nothing.

Threads: ``build``/``start``/``stop`` run on the caller's thread; the voice loop,
background agents and bridges run their own (see their modules). ``add_observer``
callbacks run on whichever thread publishes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from edgevox.config import build as wiring
from edgevox.config.schema import AppConfig
from edgevox.errors import AudioDeviceError, ConfigError, EdgeVoxError, EngineError, LifecycleError
from edgevox.runtime.bus import EventBus

log = logging.getLogger(__name__)

Progress = Callable[[str, bool], None]
"""``on_progress(step, done)``: called with ``done=False`` when a build step starts, True when it ends."""


@dataclass
class Engines:
    """Engines to use instead of building them from the config (any may be None = build it)."""

    stt: Any = None
    llm: Any = None
    tts: Any = None
    vad: Any = None
    audio_in: Any = None
    audio_out: Any = None


@dataclass
class AppStopReport:
    """What :meth:`App.stop` left behind; empty means clean."""

    abandoned: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.abandoned

    def __str__(self) -> str:
        return "clean" if self.clean else "abandoned: " + ", ".join(self.abandoned)


class App:
    """A built application. Create with :meth:`build`; ``start()``, then ``stop()``."""

    def __init__(
        self,
        config: AppConfig,
        *,
        bus: EventBus,
        blackboard: Any,
        engines: Engines,
        agents: dict[str, Any],
        loop: Any,
        background: list[Any],
        bridges: list[tuple[str, Any]],
    ) -> None:
        self.config = config
        self.bus = bus
        self.blackboard = blackboard
        self.engines = engines
        self.agents = agents
        self.agent = agents[config.main_agent]
        self.loop = loop
        self.background = background
        self.bridges = bridges
        self.stop_report = AppStopReport()
        self._state = "built"
        self._observers: list[Any] = []

    # --- building -----------------------------------------------------------------------------

    @classmethod
    def build(cls, config: AppConfig, *, on_progress: Progress | None = None, engines: Engines | None = None) -> App:
        """Load the engines and build every part (caller's thread; loading models takes seconds)."""
        orchestration = getattr(config.orchestration, "strategy", "single")
        if orchestration != "single" and type(config.orchestration).__module__ == "edgevox.config.schema":
            # The fallback section validates but nothing runs it yet: refuse rather than ignore.
            raise ConfigError(
                f"orchestration.strategy = {orchestration!r}: not available in this build "
                "(edgevox.orchestration.config is missing); use 'single'"
            )
        given = engines or Engines()
        step = _Steps(on_progress)
        text_in = config.audio.input.source == "text"
        no_out = config.audio.output.sink == "none"
        rate = config.audio.sample_rate_hz
        built = Engines()
        built.llm = given.llm or step(f"LLM {config.llm.model}", lambda: wiring.make_llm(config.llm))
        if text_in:
            built.stt = given.stt or NoSTT(rate)
            built.vad = given.vad or step("VAD", lambda: wiring.make_vad(config.vad, rate))
        else:
            built.stt = given.stt or step(f"STT {config.stt.model}", lambda: wiring.make_stt(config.stt))
            built.vad = given.vad or step("VAD", lambda: wiring.make_vad(config.vad, rate))
        built.tts = given.tts or (
            NoTTS() if no_out else step(f"TTS {config.tts.voice}", lambda: wiring.make_tts(config.tts))
        )
        built.audio_in = given.audio_in or (
            NoAudioIn(rate) if text_in else wiring.make_audio_in(config.audio.input, rate)
        )
        built.audio_out = given.audio_out or (
            _null_out(built.tts.sample_rate_hz)
            if no_out
            else wiring.make_audio_out(config.audio.output, built.tts.sample_rate_hz)
        )
        agents = step("agents", lambda: wiring.make_agents(config, built.llm))
        bus = EventBus(config.name)
        from edgevox.runtime.blackboard import Blackboard

        blackboard = Blackboard()
        background = [wiring.make_background_agent(bg, agents) for bg in config.background_agents]
        loop = cls._make_loop(config, bus, built, VoiceAgent(agents[config.main_agent]), text_in=text_in)
        skills = [t for t in getattr(agents[config.main_agent], "tools", ()) or () if getattr(t, "is_skill", False)]
        bridges = wiring.make_bridges(config.bridges, bus, blackboard, on_text=loop.submit_text, skills=skills)
        warm = getattr(agents[config.main_agent], "warmup", None)
        if callable(warm):
            step("prompt cache", warm)
        return cls(
            config,
            bus=bus,
            blackboard=blackboard,
            engines=built,
            agents=agents,
            loop=loop,
            background=background,
            bridges=bridges,
        )

    @staticmethod
    def _make_loop(config: AppConfig, bus: EventBus, engines: Engines, agent: Any, *, text_in: bool) -> Any:
        from edgevox.runtime.context import AgentContext
        from edgevox.voice.loop import VoiceLoop, VoiceSettings
        from edgevox.voice.segmenter import SegmenterSettings

        ep = config.endpointing
        segmenter = SegmenterSettings(
            frame_ms=config.vad.frame_ms,
            pre_roll_ms=ep.pre_roll_ms,
            min_speech_ms=ep.min_speech_ms,
            end_silence_ms=ep.end_silence_ms,
            max_utterance_s=ep.max_utterance_s,
        )
        settings = VoiceSettings(
            segmenter=segmenter,
            echo_guard=config.voice.echo_guard,
            echo_tail_ms=config.voice.echo_tail_ms,
            energy_gate_ratio=config.voice.energy_gate_ratio,
            barge_in=config.voice.barge_in,
            stop_phrases=tuple(config.safety.stop_phrases) if config.safety.enabled else (),
            vocabulary=tuple(config.stt.vocabulary),
            session_id=config.voice.session_id,
            input_stall_s=None if text_in or config.audio.input.source == "file" else 2.0,
        )
        context = AgentContext(bus=bus, session_id=config.voice.session_id, agent_name=getattr(agent, "name", ""))
        return VoiceLoop(
            bus,
            engines.vad,
            engines.stt,
            agent,
            engines.tts,
            engines.audio_in,
            engines.audio_out,
            settings,
            context=context,
            name=config.name,
        )

    # --- lifecycle ----------------------------------------------------------------------------

    def add_observer(self, fn: Callable[[Any], Any]) -> None:
        """``fn(event)`` sees every event on the bus (publisher's thread)."""
        self._observers.append(self.bus.add_observer(fn))

    def start(self) -> None:
        """Start background agents, bridges and the voice loop (devices open here); returns."""
        if self._state != "built":
            raise LifecycleError(f"App.start(): the app is {self._state}; build a new App to start again")
        self._state = "starting"
        try:
            for agent in self.background:
                agent.start(bus=self.bus)
            for _name, bridge in self.bridges:
                bridge.start()
            self.loop.start()
        except BaseException:
            self.stop(timeout_s=self.config.runtime.shutdown_timeout_s)
            raise
        self._state = "running"

    def submit_text(self, text: str) -> int:
        """A typed user turn (the safety stop is checked first). Returns its turn id."""
        return self.loop.submit_text(text)

    def wait_idle(self, timeout_s: float | None) -> bool:
        """Block until nothing is queued, running or playing; True if idle in time."""
        return self.loop.wait_idle(1e9 if timeout_s is None else timeout_s)

    def wait_input_ended(self, timeout_s: float | None) -> bool:
        """For a WAV input: wait until it is exhausted and everything it started is answered."""
        return self.loop.wait_input_done(1e9 if timeout_s is None else timeout_s)

    @property
    def idle(self) -> bool:
        return self.loop.wait_idle(0.0)

    def stop(self, timeout_s: float = 2.0) -> bool:
        """Stop everything within ``timeout_s`` in total; True when every thread finished."""
        if self._state in ("stopped", "new"):
            return self.stop_report.clean
        self._state = "stopping"
        deadline = time.monotonic() + timeout_s
        abandoned: list[str] = []

        def left() -> float:
            return max(0.05, deadline - time.monotonic())

        report = self.loop.stop(timeout_s=left())
        abandoned += list(getattr(report, "abandoned_threads", []))
        for agent in self.background:
            if not agent.stop(left()):
                abandoned.append(f"background agent {getattr(agent, 'name', agent)!r}")
        for name, bridge in self.bridges:
            try:
                if bridge.stop(left()) is False:
                    abandoned.append(f"bridge {name}")
            except EdgeVoxError as exc:
                abandoned.append(f"bridge {name} ({exc})")
        for obs in self._observers:
            obs.close()
        self.blackboard.close(left())
        abandoned += self.bus.close(left())
        self.stop_report = AppStopReport(abandoned)
        self._state = "stopped"
        return self.stop_report.clean


class VoiceAgent:
    """Adapts an agent to the voice loop's contract, ``stream(task, ctx) -> Iterator[str]``.

    Agents of :mod:`edgevox.agents` (``LLMAgent``, workflows) stream typed events (an
    ``AgentStream``); the loop speaks only the reply text, so this yields
    ``AgentStream.text_deltas()`` and closes the run when the loop stops reading (barge-in,
    stop). Agents that already stream text (``ChatAgent``) pass through. ``name``, ``tools``,
    ``truncate_reply`` and ``warmup`` are forwarded (the loop biases STT with the tools).
    """

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = getattr(agent, "name", "agent")
        self.tools = getattr(agent, "tools", ())
        for optional in ("truncate_reply", "warmup", "active_agent"):
            if hasattr(agent, optional):
                setattr(self, optional, getattr(agent, optional))

    def stream(self, task: str, ctx: Any) -> Iterator[str]:
        run = self.agent.stream(task, ctx)
        if not hasattr(run, "text_deltas"):
            yield from run
            return
        try:
            yield from run.text_deltas()
        finally:
            run.close()


class _Steps:
    """Runs build steps, reporting them to ``on_progress``."""

    def __init__(self, on_progress: Progress | None) -> None:
        self.on_progress = on_progress

    def __call__(self, name: str, fn: Callable[[], Any]) -> Any:
        if self.on_progress:
            self.on_progress(name, False)
        started = time.monotonic()
        result = fn()
        log.info("%s ready in %.2f s", name, time.monotonic() - started)
        if self.on_progress:
            self.on_progress(name, True)
        return result


def _null_out(sample_rate_hz: int) -> Any:
    from edgevox.engines.audio_wav import NullOut

    return NullOut(sample_rate_hz=sample_rate_hz)


# --- null engines for typed input / no audio output --------------------------------------------


class NoAudioIn:
    """The audio input of a typed-input application: it never delivers audio.

    ``read`` waits (on the loop's capture thread) until ``stop()`` or the timeout and
    returns None; nothing is opened, so no sound card is needed.
    """

    def __init__(self, sample_rate_hz: int = 16000) -> None:
        self.sample_rate_hz = sample_rate_hz
        self._stopped = threading.Event()

    def start(self) -> None:
        self._stopped.clear()

    def read(self, timeout_s: float) -> np.ndarray | None:
        self._stopped.wait(timeout_s)
        return None

    def stop(self) -> None:
        self._stopped.set()


class NoSTT:
    """The recognizer of a typed-input application. It is never given audio (NoAudioIn has none)."""

    def __init__(self, sample_rate_hz: int = 16000) -> None:
        self.sample_rate_hz = sample_rate_hz

    def transcribe(self, audio: np.ndarray, *, vocabulary: Any = ()) -> Any:
        raise EngineError("this application takes typed input (audio.input.source: text); it has no speech recognizer")


class NoTTS:
    """The voice of an application without audio output: replies are text only (no samples)."""

    sample_rate_hz = 16000

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        return iter(())


# --- check and devices -------------------------------------------------------------------------


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
    from edgevox import models

    report = CheckReport()
    text_in = config.audio.input.source == "text"
    no_out = config.audio.output.sink == "none"
    needed = [("LLM", config.llm.engine, config.llm.model)]
    if not text_in:
        needed.insert(0, ("STT", config.stt.engine, config.stt.model))
    if not no_out:
        needed.append(("TTS", config.tts.engine, config.tts.voice))
    for role, engine, ref in needed:
        if ":" in engine and "." in engine.split(":")[0]:
            _try(
                report,
                f"{role} engine",
                lambda e=engine, r=role: wiring.import_ref(e, where=f"{r.lower()}.engine") and f"custom {e}",
            )
            continue
        _try(report, f"{role} model", lambda r=ref: f"{r} -> {models.resolve(r)}")
    if load_models:
        _try(report, "load LLM", lambda: type(wiring.make_llm(config.llm)).__name__ + " loaded")
        if not text_in:
            _try(report, "load STT", lambda: type(wiring.make_stt(config.stt)).__name__ + " loaded")
        if not no_out:
            _try(report, "load TTS", lambda: type(wiring.make_tts(config.tts)).__name__ + " loaded")
    for name, agent in config.agents.items():
        refs = ([agent.factory] if agent.factory else []) + agent.tools + agent.skills
        _try(report, f"agent {name}", lambda a=agent, n=name, r=refs: _check_agent_refs(n, a, r))
    for name, wf in config.workflows.items():
        report.add(f"workflow {name}", "ok", f"{wf.type} of {', '.join(wf.steps)}")
    for bg in config.background_agents:
        _try(report, f"background {bg.name}", lambda b=bg: _describe_trigger(b))
    report.add("answers with", "ok", config.main_agent)
    _check_audio(report, config)
    for name, status, detail in wiring.check_bridges(config.bridges):
        report.add(f"bridge {name}", status, detail)
    return report


def _try(report: CheckReport, what: str, fn: Callable[[], Any]) -> None:
    try:
        report.add(what, "ok", str(fn()))
    except EdgeVoxError as exc:
        report.add(what, "fail", str(exc))


def _check_agent_refs(name: str, agent: Any, refs: list[str]) -> str:
    if agent.factory:
        wiring.import_ref(agent.factory, where=f"agents.{name}.factory")
        return f"built by {agent.factory}"
    tools = wiring.resolve_tools(agent.tools, where=f"agents.{name}.tools")
    tools += wiring.resolve_tools(agent.skills, where=f"agents.{name}.skills")
    names = ", ".join(t.name for t in tools) or "no tools"
    return f"{names}" + (f"; hands off to {', '.join(agent.handoffs)}" if agent.handoffs else "")


def _describe_trigger(bg: Any) -> str:
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
    from edgevox.engines.audio_wav import read_wav

    try:
        audio, rate = read_wav(path)
    except OSError as exc:
        raise AudioDeviceError(f"cannot read WAV {path}: {exc}") from None
    return f"WAV file {path} ({audio.shape[0] / rate:.1f} s at {rate} Hz)"


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
