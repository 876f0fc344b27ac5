"""Engines and audio devices from the config: the ``llm``, ``stt``, ``tts``, ``vad`` and
``audio`` sections, each built by one ``make_*`` function.

Each function imports its adapter (and so its heavy library) only when its section is
used: a text config never imports faster-whisper, piper or sounddevice.
:func:`make_engines` builds the set an application needs, putting the null engines of
:mod:`edgevox.engines.null` where the config has no audio input or output.

Custom engines: a section whose ``engine`` is a ``module:factory`` reference is built by
calling ``factory(**options)``; the returned object must satisfy the engine's protocol in
:mod:`edgevox.engines.base`. What a section must pass before anything is built is
:mod:`edgevox.config.engine_checks`, shared with ``edgevox check``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from edgevox.config.engine_checks import Section as EngineSectionConfig
from edgevox.config.engine_checks import check_engine, check_engines, is_ref
from edgevox.config.schema import (
    AppConfig,
    AudioInputConfig,
    AudioOutputConfig,
    LLMConfig,
    STTConfig,
    TTSConfig,
    VADConfig,
)
from edgevox.errors import ConfigError, EdgeVoxError

if TYPE_CHECKING:
    from edgevox.engines.base import LLM, STT, TTS, VAD, AudioIn, AudioOut

log = logging.getLogger(__name__)
T = TypeVar("T")

# --- engines -------------------------------------------------------------------------------------


def _custom(role: str, cfg: EngineSectionConfig, key: str, *, sample_rate_hz: int | None = None) -> Any | None:
    """Validate the section (:func:`check_engine`, the check ``edgevox check`` runs too); for a
    ``module:factory`` engine, build it and check it has the methods of ``role``'s protocol."""
    factory = check_engine(role, cfg, key, sample_rate_hz=sample_rate_hz)
    if factory is None:
        return None
    from edgevox.engines import base

    where, engine = f"{key}.engine", cfg.engine
    try:
        built = factory(**cfg.options)
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


def make_stt(cfg: STTConfig) -> STT:
    custom = _custom("STT", cfg, "stt")
    if custom is not None:
        return custom
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


def make_llm(cfg: LLMConfig) -> LLM:
    custom = _custom("LLM", cfg, "llm")
    if custom is not None:
        return custom
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


def llm_key(cfg: LLMConfig) -> tuple[str, ...]:
    """What makes two ``llm:`` sections one loaded engine: the engine, the model file (the
    reference resolved, so a builtin name and its path are the same file) and every load option.
    ``max_tokens`` and ``temperature`` are per call, so agents differing only there share."""
    options = json.dumps(cfg.options, sort_keys=True, default=repr)
    if is_ref(cfg.engine):  # a custom factory is called with its options only
        return (cfg.engine, options)
    from edgevox.models import resolve

    try:
        model = str(resolve(cfg.model))  # never downloads; a missing file fails here or at load
    except EdgeVoxError:
        model = cfg.model
    load = (cfg.context_tokens, cfg.threads, cfg.batch_threads, cfg.gpu_layers, cfg.seed)
    return (cfg.engine, model, *map(str, load), options)


def make_llms(
    app: AppConfig,
    *,
    main: LLM | None = None,
    make: Callable[[LLMConfig], LLM] = make_llm,
) -> dict[str, LLM]:
    """The engine of every agent of ``app``, by agent name: one engine per distinct
    :func:`llm_key`, so agents with the same model file and load options share one copy of
    the weights (and its lock: calls into one engine run one at a time; different engines
    run side by side). ``main`` is the engine of the ``llm:`` section when already built;
    ``make`` builds the others (default :func:`make_llm`)."""
    main_key = llm_key(app.llm)
    engines: dict[tuple[str, ...], LLM] = {} if main is None else {main_key: main}
    out: dict[str, LLM] = {}
    for name in app.agents:
        cfg = app.llm_for(name)
        key = llm_key(cfg)
        if key not in engines:
            engines[key] = _make_llm_at(make, cfg, "llm" if key == main_key else f"agents.{name}.llm")
        out[name] = engines[key]
    return out


def _make_llm_at(make: Callable[[LLMConfig], LLM], cfg: LLMConfig, where: str) -> LLM:
    """``make(cfg)``; an agent's own model that fails names the agent's key."""
    if where == "llm":
        return make(cfg)
    try:
        return make(cfg)
    except EdgeVoxError as exc:
        raise ConfigError(f"{where} (model {cfg.model!r}): {exc}") from None


def make_tts(cfg: TTSConfig) -> TTS:
    custom = _custom("TTS", cfg, "tts")
    if custom is not None:
        return custom
    from edgevox.engines.tts_piper import PiperTTS

    return PiperTTS(
        cfg.voice,
        length_scale=cfg.length_scale,
        speaker_id=cfg.speaker_id,
        num_threads=cfg.threads,
        device=cfg.device,
        gain_db=cfg.gain_db,
        limiter=cfg.limiter,
        **cfg.options,
    )


def make_vad(cfg: VADConfig, sample_rate_hz: int) -> VAD:
    custom = _custom("VAD", cfg, "vad", sample_rate_hz=sample_rate_hz)
    if custom is not None:
        return custom
    from edgevox.engines.vad_webrtc import WebRtcVAD

    vad = WebRtcVAD(sample_rate_hz=sample_rate_hz, frame_ms=cfg.frame_ms, aggressiveness=cfg.aggressiveness)
    if cfg.confirm == "none":
        return vad
    from edgevox.engines.vad_silero import ConfirmedVAD, SileroVAD

    return ConfirmedVAD(vad, SileroVAD(), threshold=cfg.silero_threshold)


# --- audio ---------------------------------------------------------------------------------------


def make_audio_in(
    cfg: AudioInputConfig, sample_rate_hz: int, *, on_event: Callable[[str], None] | None = None
) -> AudioIn:
    """The microphone or WAV reader; for typed input, a :class:`~edgevox.engines.null.NoAudioIn`."""
    if cfg.source == "text":
        from edgevox.engines.null import NoAudioIn

        return NoAudioIn(sample_rate_hz)
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


def make_audio_out(cfg: AudioOutputConfig, sample_rate_hz: int, *, realtime_file: bool = False) -> AudioOut:
    """The speaker or WAV writer at the TTS rate; without audio output, a
    :class:`~edgevox.engines.audio_wav.NullOut` (discards the samples)."""
    if cfg.sink == "none":
        from edgevox.engines.audio_wav import NullOut

        return NullOut(sample_rate_hz=sample_rate_hz)
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


# --- the engine set of an application ------------------------------------------------------------

Progress = Callable[[str, bool], None]
"""``on_progress(step, done)``: called with ``done=False`` when a build step starts, True when it ends."""


class Steps:
    """Runs build steps, reporting them to ``on_progress`` and logging how long each took."""

    def __init__(self, on_progress: Progress | None) -> None:
        self.on_progress = on_progress

    def __call__(self, name: str, fn: Callable[[], T]) -> T:
        if self.on_progress:
            self.on_progress(name, False)
        started = time.monotonic()
        result = fn()
        log.info("%s ready in %.2f s", name, time.monotonic() - started)
        if self.on_progress:
            self.on_progress(name, True)
        return result


@dataclass
class Engines:
    """Engines to use instead of building them from the config (any may be None = build it)."""

    stt: STT | None = None
    llm: LLM | None = None
    tts: TTS | None = None
    vad: VAD | None = None
    audio_in: AudioIn | None = None
    audio_out: AudioOut | None = None


@dataclass
class LoadedEngines:
    """Every engine of an application, built or given (what :func:`make_engines` returns)."""

    stt: STT
    llm: LLM
    tts: TTS
    vad: VAD
    audio_in: AudioIn
    audio_out: AudioOut
    loaded: list[STT | TTS] = field(default_factory=list)
    """The engines :func:`make_engines` loaded itself (not given ones), so the app warms them up."""


def make_engines(config: AppConfig, given: Engines | None = None, *, step: Steps | None = None) -> LoadedEngines:
    """Every engine ``config`` needs, loaded (seconds), except those ``given``.

    Typed input gets :class:`~edgevox.engines.null.NoSTT` and
    :class:`~edgevox.engines.null.NoAudioIn`; no audio output gets
    :class:`~edgevox.engines.null.NoTTS` and a :class:`~edgevox.engines.audio_wav.NullOut`.
    ``llm`` is the engine of the ``llm:`` section (``given.llm`` replaces it); agents that
    name their own model or load options (``agents.<name>.llm``) get theirs from
    :func:`~edgevox.config.build.make_agents` (:func:`make_llms`).
    """
    from edgevox.engines.null import NoSTT, NoTTS

    given = given or Engines()
    step = step or Steps(None)
    # Every section is checked before the first model loads (seconds): a typo fails at once,
    # with the line `edgevox check` prints for it.
    check_engines(config, skip=[key for key in ("stt", "llm", "tts", "vad") if getattr(given, key) is not None])
    text_in = config.audio.input.source == "text"
    no_out = config.audio.output.sink == "none"
    rate = config.audio.sample_rate_hz
    llm = given.llm or step(f"LLM {config.llm.model}", lambda: make_llm(config.llm))
    if text_in:
        stt: STT = given.stt or NoSTT(rate)
    else:
        stt = given.stt or step(f"STT {config.stt.model}", lambda: make_stt(config.stt))
    vad = given.vad or step("VAD", lambda: make_vad(config.vad, rate))
    tts: TTS = given.tts or (NoTTS() if no_out else step(f"TTS {config.tts.voice}", lambda: make_tts(config.tts)))
    audio_in = given.audio_in or make_audio_in(config.audio.input, rate)
    audio_out = given.audio_out or make_audio_out(config.audio.output, tts.sample_rate_hz)
    loaded = [e for e, g in ((stt, given.stt), (tts, given.tts)) if g is None]
    return LoadedEngines(stt=stt, llm=llm, tts=tts, vad=vad, audio_in=audio_in, audio_out=audio_out, loaded=loaded)
