"""The engines a config asks for, and what each section must pass before any model loads.

:func:`engine_sections` lists every engine section an application builds from its config: the
STT (spoken input only), the LLM, the TTS (audio output only), the VAD, and each agent's own
``llm:``. :func:`check_engine` is the one validation of a section that needs no model: a builtin
engine name is known, a ``module:factory`` reference imports and accepts its ``options``, and the
VAD's confirmation fits the pipeline's sample rate.

``edgevox run`` (:func:`~edgevox.config.build_engines.make_engines`, before it loads anything)
and ``edgevox check`` both walk :func:`engine_sections` through :func:`check_engine`, and each
``make_*`` builder calls it on its own section: what ``check`` calls ready, ``run`` accepts, with
the same one-line message when it does not. (Before, ``check`` kept its own list of what to look
at and skipped the builtin names and the VAD, so a typo such as ``llm.engine: llamacpp`` passed
``check`` and failed ``run``.)

Calling a custom factory, and the protocol check of what it returns, happen only where the
engine is built (``run``, or ``edgevox check --load``): a factory may load a model.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from edgevox.config.refs import import_ref
from edgevox.config.schema import REF_PATTERN, AppConfig, LLMConfig, STTConfig, TTSConfig, VADConfig
from edgevox.errors import ConfigError

Section = STTConfig | LLMConfig | TTSConfig | VADConfig

BUILTIN_ENGINES = {"STT": "faster-whisper", "LLM": "llama-cpp", "TTS": "piper", "VAD": "webrtc"}
"""The builtin engine of each role (its section's ``engine`` value)."""


@dataclass(frozen=True)
class EngineSection:
    """One engine an application builds: its role, its key path and its section."""

    role: str
    """``STT``, ``LLM``, ``TTS`` or ``VAD`` (the protocol in :mod:`edgevox.engines.base`)."""
    key: str
    """Where the section is in the config: ``stt``, ``llm``, ``agents.helper.llm``..."""
    section: Section
    agent: str | None = None
    """The agent whose own ``llm:`` this is (None for the application's sections)."""


def engine_sections(config: AppConfig) -> list[EngineSection]:
    """Every engine section ``config`` builds, in the order they load."""
    out = [EngineSection("LLM", "llm", config.llm)]
    if config.audio.input.source != "text":
        out.insert(0, EngineSection("STT", "stt", config.stt))
    if config.audio.output.sink != "none":
        out.append(EngineSection("TTS", "tts", config.tts))
    out.append(EngineSection("VAD", "vad", config.vad))
    for name, agent in config.agents.items():
        if agent.llm is not None:
            out.append(EngineSection("LLM", f"agents.{name}.llm", config.llm_for(name), agent=name))
    return out


def check_engine(
    role: str, section: Section, key: str, *, sample_rate_hz: int | None = None
) -> Callable[..., Any] | None:
    """Validate one engine section without loading a model; the factory of a custom engine, or
    None for the builtin one. ``sample_rate_hz`` (the pipeline's) is needed for the VAD.
    Raises :class:`ConfigError` with the line ``run`` and ``check`` both print."""
    where = f"{key}.engine"
    if is_ref(section.engine):
        return engine_factory(section.engine, section.options, where)
    builtin = BUILTIN_ENGINES[role]
    if section.engine != builtin:
        raise unknown_engine(where, section.engine, [builtin])
    if isinstance(section, VADConfig) and section.confirm != "none" and (sample_rate_hz or 16000) % 16000:
        raise ConfigError(
            f"{key}.confirm = {section.confirm!r} needs a 16, 32 or 48 kHz pipeline (audio.sample_rate_hz = {sample_rate_hz}): "
            f"set {key}.confirm: none or audio.sample_rate_hz: 16000"
        )
    return None


def check_engines(config: AppConfig, *, skip: Iterable[str] = ()) -> None:
    """:func:`check_engine` on every section of :func:`engine_sections` except the keys in
    ``skip`` (engines given ready-made); raises the first failure."""
    skipped = set(skip)
    for spec in engine_sections(config):
        if spec.key not in skipped:
            check_engine(spec.role, spec.section, spec.key, sample_rate_hz=config.audio.sample_rate_hz)


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


def unknown_engine(where: str, engine: str, known: Iterable[str]) -> ConfigError:
    return ConfigError(
        f"{where} = {engine!r}: unknown engine; use one of {', '.join(known)} or a 'module:factory' reference"
    )
