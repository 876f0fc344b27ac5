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
from edgevox.errors import AgentError, AudioDeviceError, EdgeVoxError, EngineError, LifecycleError
from edgevox.runtime.events import InterruptEvent, StopEvent
from edgevox.runtime.runtime import Runtime

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
    loaded: list[Any] = field(default_factory=list)
    """Filled by :meth:`App.build`: the engines it loaded itself (and so warms up)."""


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
    """A built application. Create with :meth:`build`; ``start()``, then ``stop()``.

    ``runtime`` owns the bus, blackboard, supervisor and agent pool; ``agents`` are every
    configured agent and workflow by name; ``agent`` answers the user's turns (the main
    agent, or the orchestration :class:`~edgevox.orchestration.coordinator.Coordinator`
    when ``orchestration.strategy`` is not ``single``).
    """

    def __init__(
        self,
        config: AppConfig,
        *,
        runtime: Runtime,
        engines: Engines,
        agents: dict[str, Any],
        agent: Any,
        loop: Any,
        background: list[Any],
        bridges: list[tuple[str, Any]],
        delivery: Any = None,
        voice_activity: Any = None,
    ) -> None:
        self.config = config
        self.runtime = runtime
        self.bus = runtime.bus
        self.blackboard = runtime.blackboard
        self.pool = runtime.pool
        self.engines = engines
        self.agents = agents
        self.agent = agent
        self.loop = loop
        self.background = background
        self.bridges = bridges
        self.delivery = delivery
        """The :class:`~edgevox.orchestration.delivery.DeliveryWorker` speaking background results."""
        self.voice_activity = voice_activity
        self.stop_report = AppStopReport()
        self._state = "built"
        self._observers: list[Any] = []

    # --- building -----------------------------------------------------------------------------

    @classmethod
    def build(cls, config: AppConfig, *, on_progress: Progress | None = None, engines: Engines | None = None) -> App:
        """Load the engines and build every part (caller's thread; loading models takes seconds)."""
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
        built.loaded = [e for e, g in ((built.stt, given.stt), (built.tts, given.tts)) if g is None]
        agents = step("agents", lambda: wiring.make_agents(config, built.llm))
        runtime = Runtime(config.name, max_concurrency=config.pool.max_concurrency)
        try:
            return cls._assemble(config, runtime, built, agents, text_in=text_in, step=step)
        except BaseException:
            runtime.stop(1.0)
            _close_agents(agents, 1.0)
            raise

    @classmethod
    def _assemble(
        cls, config: AppConfig, runtime: Runtime, built: Engines, agents: dict[str, Any], *, text_in: bool, step: Any
    ) -> App:
        """Everything after the engines: pool, background agents, orchestration, loop, bridges."""
        for name in config.pool.agents or list(agents):
            runtime.pool.register(_Named(name, agents[name]))
        background = [wiring.start_background_agent(bg, agents, runtime.pool) for bg in config.background_agents]
        main = agents[config.main_agent]
        answering: Any = main
        voice_activity = delivery = None
        speak = _LateSpeaker()
        orchestration = config.orchestration
        if orchestration.strategy != "single" or orchestration.sessions or orchestration.conversation is not None:
            from edgevox.orchestration import build_orchestration
            from edgevox.orchestration.delivery import DeliveryWorker, VoiceActivityState

            voice_activity = VoiceActivityState()
            answering = build_orchestration(
                orchestration,
                agents,
                main_agent=config.main_agent,
                bus=runtime.bus,
                blackboard=runtime.blackboard,
                sink=speak,
                voice=voice_activity,
            )
            delivery = DeliveryWorker(answering.delivery, voice=voice_activity)
        loop = cls._make_loop(config, runtime, built, VoiceAgent(answering), text_in=text_in)
        speak.loop = loop
        bridges = wiring.make_bridges(
            config.bridges,
            runtime.bus,
            runtime.blackboard,
            on_text=loop.submit_text,
            on_say=loop.say,
            skills=list(getattr(main, "skills", {}).values()),
            executor=getattr(main, "executor", None) if getattr(main, "skills", None) else None,
            ctx=runtime.pool.make_ctx(agent_name=config.main_agent),
        )
        warm = getattr(main, "warmup", None)
        if callable(warm):
            step("prompt cache", warm)
        for engine in built.loaded:
            # Engines this app loaded (not ones passed in, e.g. scripted): the first turn should
            # not pay first-call allocations (~0.5 s for Whisper on 2 cores).
            warm_engine = getattr(engine, "warmup", None)
            if callable(warm_engine):
                step(f"warm up {type(engine).__name__}", warm_engine)
        return cls(
            config,
            runtime=runtime,
            engines=built,
            agents=agents,
            agent=answering,
            loop=loop,
            background=background,
            bridges=bridges,
            delivery=delivery,
            voice_activity=voice_activity,
        )

    @staticmethod
    def _make_loop(config: AppConfig, runtime: Runtime, engines: Engines, agent: Any, *, text_in: bool) -> Any:
        from edgevox.voice.chunker import ChunkerSettings
        from edgevox.voice.loop import VoiceLoop, VoiceSettings
        from edgevox.voice.segmenter import SegmenterSettings

        ep = config.endpointing
        segmenter = SegmenterSettings(
            frame_ms=config.vad.frame_ms,
            pre_roll_ms=ep.pre_roll_ms,
            min_speech_ms=ep.min_speech_ms,
            end_silence_ms=ep.end_silence_ms,
            hold_silence_ms=ep.hold_silence_ms,  # the loop turns it off without speculative STT
            statement_silence_ms=ep.statement_silence_ms,
            max_utterance_s=ep.max_utterance_s,
            pause_ms=ep.pause_ms,
        )
        settings = VoiceSettings(
            segmenter=segmenter,
            chunker=ChunkerSettings(first_fragment_max_words=config.voice.first_fragment_words),
            speculative_stt=config.voice.speculative_stt,
            speculative_reply=config.voice.speculative_reply,
            tts_priority_ms=config.voice.tts_priority_ms,
            echo_guard=config.voice.echo_guard,
            echo_tail_ms=config.voice.echo_tail_ms,
            energy_gate_ratio=config.voice.energy_gate_ratio,
            barge_in=config.voice.barge_in,
            stop_phrases=tuple(config.safety.stop_phrases) if config.safety.enabled else (),
            stop_confirmation=config.safety.confirmation,
            vocabulary=tuple(config.stt.vocabulary),
            session_id=config.voice.session_id,
            input_stall_s=None if text_in or config.audio.input.source == "file" else 2.0,
        )
        # Turns run in a context of the runtime: the shared blackboard, and its activity registry,
        # so a stop from any source reaches what every turn started.
        context = runtime.pool.make_ctx(session_id=config.voice.session_id, agent_name=getattr(agent, "name", ""))
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
            name=config.name,
        )

    # --- lifecycle ----------------------------------------------------------------------------

    def add_observer(self, fn: Callable[[Any], Any]) -> None:
        """``fn(event)`` sees every event on the bus (publisher's thread)."""
        self._observers.append(self.bus.add_observer(fn))

    def start(self) -> None:
        """Start the runtime (background agents), bridges, delivery and the voice loop; returns."""
        if self._state != "built":
            raise LifecycleError(f"App.start(): the app is {self._state}; build a new App to start again")
        self._state = "starting"
        try:
            self.runtime.start()
            for _name, bridge in self.bridges:
                bridge.start()
            if self.voice_activity is not None:
                self.voice_activity.attach(self.bus)
            if self.delivery is not None:
                self.delivery.start()
            self.loop.start()
            self._observers.append(self.bus.subscribe((StopEvent, InterruptEvent), self._external_control))
        except BaseException:
            self.stop(timeout_s=self.config.runtime.shutdown_timeout_s)
            raise
        self._state = "running"

    def _external_control(self, event: Any) -> None:
        """A stop or interrupt published by someone else (a ROS topic, a Zenoh peer, a
        background agent watching a bumper) acts on the voice loop like a spoken one.
        Runs on the publisher's thread; the loop's own events are ignored (no echo)."""
        if event.source == self.loop.name:
            return
        if not self.loop.running:
            return  # the runtime itself cancelled every registered activity on this StopEvent
        if isinstance(event, StopEvent):
            self.loop.safety_stop(reason=event.reason or f"stop from {event.source}", text=event.text, announce=False)
        else:
            self.loop.interrupt()

    def submit_text(self, text: str) -> int:
        """A typed user turn (the safety stop is checked first). Returns its turn id."""
        return self.loop.submit_text(text)

    def say(self, text: str) -> int:
        """Speak ``text`` as the robot, after any turn in progress. Returns its turn id."""
        return self.loop.say(text)

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
        """Stop everything within ``timeout_s`` in total; True when every thread finished.

        Order: the voice loop (no new turns), delivery, bridges, orchestration and agents'
        skill workers, then the runtime (background agents, blackboard, bus). Whatever
        had to be abandoned is listed in :attr:`stop_report`.
        """
        if self._state in ("stopped", "new"):
            return self.stop_report.clean
        self._state = "stopping"
        deadline = time.monotonic() + timeout_s
        abandoned: list[str] = []

        def left() -> float:
            return max(0.05, deadline - time.monotonic())

        report = self.loop.stop(timeout_s=left())
        abandoned += list(getattr(report, "abandoned_threads", []))
        if self.delivery is not None and not self.delivery.stop(left()):
            abandoned.append("delivery worker")
        if self.voice_activity is not None:
            self.voice_activity.detach()
        for name, bridge in self.bridges:
            try:
                if bridge.stop(left()) is False:
                    abandoned.append(f"bridge {name}")
            except EdgeVoxError as exc:
                abandoned.append(f"bridge {name} ({exc})")
        close = getattr(self.agent, "close", None)
        if self.agent is not self.agents.get(self.config.main_agent) and callable(close):
            abandoned += close(left()) or []
        abandoned += _close_agents(self.agents, left())
        for obs in self._observers:
            obs.close()
        abandoned += self.runtime.stop(left()).abandoned
        self.stop_report = AppStopReport(abandoned)
        self._state = "stopped"
        return self.stop_report.clean


class _Named:
    """Registers an agent in the pool under its config name (workflows may lack ``name``)."""

    def __init__(self, name: str, agent: Any) -> None:
        self.name = name
        self.agent = agent

    def run(self, task: Any, ctx: Any) -> Any:
        return self.agent.run(task, ctx)


class _LateSpeaker:
    """Delivery sink: speaks delivered results through the voice loop (set once it exists)."""

    loop: Any = None

    def __call__(self, items: list[Any]) -> None:
        text = " ".join(i.text.strip() for i in items if i.text.strip())
        if text and self.loop is not None and self.loop.running:
            self.loop.say(text)


def _close_agents(agents: dict[str, Any], timeout_s: float) -> list[str]:
    """Close every agent that has ``close`` (LLM agents' skill workers); names of the unclean."""
    out: list[str] = []
    for name, agent in agents.items():
        close = getattr(agent, "close", None)
        if callable(close):
            try:
                if close(timeout_s) is False:
                    out.append(f"agent {name!r} skill workers")
            except Exception as exc:  # noqa: BLE001 - one agent's failure must not stop the shutdown
                out.append(f"agent {name!r} ({exc!r})")
    return out


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
        self.supports_speculation = getattr(agent, "supports_speculation", False)
        for optional in ("truncate_reply", "warmup", "active_agent"):
            if hasattr(agent, optional):
                setattr(self, optional, getattr(agent, optional))

    def stream(self, task: str, ctx: Any) -> Iterator[str]:
        run = self.agent.stream(task, ctx)
        if not hasattr(run, "text_deltas"):
            yield from run
            return
        spoke = False
        try:
            for delta in run.text_deltas():
                spoke = spoke or bool(delta.strip())
                yield delta
            result = run.result()
        finally:
            run.close()
        if not spoke and not result.ok and not result.cancelled and result.error:
            # A turn that failed without a word (a refused over-long request, an engine error)
            # ends as an error naming why, so the console and TurnDone say it, not "(no reply)".
            raise AgentError(result.error)


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
    needed = [("LLM", config.llm)]
    if not text_in:
        needed.insert(0, ("STT", config.stt))
    if not no_out:
        needed.append(("TTS", config.tts))
    needed.append(("VAD", config.vad))
    for role, section in needed:
        engine = section.engine
        if wiring.is_ref(engine) or ":" in engine:
            _try(
                report,
                f"{role} engine",
                lambda e=engine, s=section, r=role: (
                    wiring.engine_factory(e, s.options, f"{r.lower()}.engine") and f"custom {e}"
                ),
            )
            continue
        if role == "VAD":
            continue
        ref = section.voice if role == "TTS" else section.model
        _try(report, f"{role} model", lambda r=ref: f"{r} -> {models.resolve(r)}")
    from edgevox.config.diagnostics import engine_devices

    for what, status, detail in engine_devices(config):
        report.add(f"{what} runs on", status, detail)
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
