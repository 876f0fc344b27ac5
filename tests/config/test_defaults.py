"""Each default is kept in one place: a config key's default is the default of the component
it configures, so an app built from an empty config behaves like the component built bare.

The engines' defaults are module constants the schema refers to. The voice loop's settings
cannot be imported by the schema (the voice package imports the agents, which import the
config), and the agent's and background agent's defaults are constructor defaults; the
agreement of those is pinned here, key by key.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from edgevox.config.schema import AppConfig


def _param_default(component: Any, param: str) -> Any:
    default = inspect.signature(component).parameters[param].default
    assert default is not inspect.Parameter.empty, f"{component.__qualname__}({param}=) has no default"
    return default


def _engine_pairs() -> list[tuple[str, Any, str]]:
    from edgevox.engines.audio_sounddevice import SoundDeviceIn, SoundDeviceOut
    from edgevox.engines.llm_llama_cpp import LlamaCppLLM
    from edgevox.engines.stt_faster_whisper import FasterWhisperSTT
    from edgevox.engines.tts_piper import PiperTTS
    from edgevox.engines.vad_silero import ConfirmedVAD
    from edgevox.engines.vad_webrtc import WebRtcVAD
    from edgevox.engines.wake_micro import MicroWakeWordDetector

    return [
        ("stt.model", FasterWhisperSTT, "model"),
        ("stt.language", FasterWhisperSTT, "language"),
        ("stt.beam_size", FasterWhisperSTT, "beam_size"),
        ("stt.cpu_threads", FasterWhisperSTT, "cpu_threads"),
        ("stt.bias", FasterWhisperSTT, "bias"),
        ("stt.no_speech_threshold", FasterWhisperSTT, "no_speech_threshold"),
        ("stt.device", FasterWhisperSTT, "device"),
        ("stt.compute_type", FasterWhisperSTT, "compute_type"),
        ("stt.min_window_s", FasterWhisperSTT, "min_window_s"),
        ("stt.window_pad_s", FasterWhisperSTT, "window_pad_s"),
        ("llm.model", LlamaCppLLM, "model"),
        ("llm.context_tokens", LlamaCppLLM, "n_ctx"),
        ("llm.threads", LlamaCppLLM, "n_threads"),
        ("llm.batch_threads", LlamaCppLLM, "n_threads_batch"),
        ("llm.gpu_layers", LlamaCppLLM, "n_gpu_layers"),
        ("llm.seed", LlamaCppLLM, "seed"),
        ("tts.voice", PiperTTS, "model"),
        ("tts.speaker_id", PiperTTS, "speaker_id"),
        ("tts.threads", PiperTTS, "num_threads"),
        ("tts.device", PiperTTS, "device"),
        ("tts.gain_db", PiperTTS, "gain_db"),
        ("tts.limiter", PiperTTS, "limiter"),
        ("vad.aggressiveness", WebRtcVAD, "aggressiveness"),
        ("vad.frame_ms", WebRtcVAD, "frame_ms"),
        ("vad.silero_threshold", ConfirmedVAD, "threshold"),
        ("audio.input.block_ms", SoundDeviceIn, "block_ms"),
        ("audio.input.latency", SoundDeviceIn, "latency"),
        ("audio.output.block_ms", SoundDeviceOut, "block_ms"),
        ("audio.output.latency", SoundDeviceOut, "latency"),
        ("wake.threshold", MicroWakeWordDetector, "threshold"),
        ("wake.sliding_window", MicroWakeWordDetector, "sliding_window"),
    ]


def _voice_pairs() -> list[tuple[str, Any, str]]:
    from edgevox.voice.chunker import ChunkerSettings
    from edgevox.voice.segmenter import SegmenterSettings
    from edgevox.voice.settings import VoiceSettings
    from edgevox.voice.wake import WakeSettings

    return [
        ("voice.barge_in", VoiceSettings, "barge_in"),
        ("voice.echo_guard", VoiceSettings, "echo_guard"),
        ("voice.echo_tail_ms", VoiceSettings, "echo_tail_ms"),
        ("voice.energy_gate_ratio", VoiceSettings, "energy_gate_ratio"),
        ("voice.session_id", VoiceSettings, "session_id"),
        ("voice.speculative_stt", VoiceSettings, "speculative_stt"),
        ("voice.speculative_reply", VoiceSettings, "speculative_reply"),
        ("voice.tts_priority_ms", VoiceSettings, "tts_priority_ms"),
        ("safety.confirmation", VoiceSettings, "stop_confirmation"),
        ("voice.first_fragment_words", ChunkerSettings, "first_fragment_max_words"),
        ("vad.frame_ms", SegmenterSettings, "frame_ms"),
        ("endpointing.pre_roll_ms", SegmenterSettings, "pre_roll_ms"),
        ("endpointing.min_speech_ms", SegmenterSettings, "min_speech_ms"),
        ("endpointing.max_utterance_s", SegmenterSettings, "max_utterance_s"),
        ("endpointing.pause_ms", SegmenterSettings, "pause_ms"),
        ("wake.window_s", WakeSettings, "window_s"),
        ("wake.pre_roll_ms", WakeSettings, "pre_roll_ms"),
        ("wake.stop_check", WakeSettings, "stop_check"),
    ]


def _runtime_and_agent_pairs() -> list[tuple[str, Any, str]]:
    from edgevox.agents.llm_agent import LLMAgent
    from edgevox.orchestration.workflows import Retry
    from edgevox.runtime.background import BackgroundAgent
    from edgevox.runtime.pool import AgentPool

    pairs: list[tuple[str, Any, str]] = [
        ("agent.max_tool_hops", LLMAgent, "max_tool_hops"),
        ("safety.tool_timeout_s", LLMAgent, "tool_timeout_s"),
        ("workflow.attempts", Retry, "attempts"),
    ]
    for key in ("max_queue", "overflow", "restart", "max_restarts", "restart_window_s"):
        pairs += [(f"background.{key}", BackgroundAgent, key), (f"background.{key}", AgentPool.start_background, key)]
    return pairs


def _config_default(dotted: str) -> Any:
    from edgevox.config.schema import AgentConfig, BackgroundAgentConfig, WorkflowConfig

    if dotted.startswith("agent."):  # a section with no default instance: one field's default
        return AgentConfig.model_fields[dotted.removeprefix("agent.")].default
    if dotted.startswith("workflow."):
        return WorkflowConfig.model_fields[dotted.removeprefix("workflow.")].default
    if dotted.startswith("background."):
        return BackgroundAgentConfig.model_fields[dotted.removeprefix("background.")].default
    value: Any = AppConfig()
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize(("key", "component", "param"), _engine_pairs(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_config_default_is_the_default_of_the_engine_it_configures(key, component, param):
    assert _config_default(key) == _param_default(component, param), (
        f"{key} defaults to {_config_default(key)!r} but {component.__qualname__}({param}=) to "
        f"{_param_default(component, param)!r}: take the schema's default from the engine's constant"
    )


@pytest.mark.parametrize(("key", "component", "param"), _voice_pairs(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_config_default_is_the_default_of_the_voice_setting_it_configures(key, component, param):
    assert _config_default(key) == _param_default(component, param), (
        f"{key} defaults to {_config_default(key)!r} but {component.__qualname__}({param}=) to "
        f"{_param_default(component, param)!r}"
    )


@pytest.mark.parametrize(
    ("key", "component", "param"), _runtime_and_agent_pairs(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_a_config_default_is_the_default_of_the_agent_or_runtime_part_it_configures(key, component, param):
    assert _config_default(key) == _param_default(component, param), (
        f"{key} defaults to {_config_default(key)!r} but {component.__qualname__}({param}=) to "
        f"{_param_default(component, param)!r}"
    )


def test_the_pipeline_rate_is_the_stt_engines_rate():
    from edgevox.engines.stt_faster_whisper import FasterWhisperSTT

    assert AppConfig().audio.sample_rate_hz == FasterWhisperSTT.sample_rate_hz


def test_the_safety_stop_phrases_default_to_the_matchers_phrases():
    from edgevox.voice.stop_phrases import StopPhraseMatcher

    assert tuple(AppConfig().safety.stop_phrases) == tuple(_param_default(StopPhraseMatcher, "phrases"))


def test_an_agent_built_bare_and_a_config_agent_get_the_same_system_prompt():
    from edgevox.agents.llm_agent import LLMAgent
    from edgevox.config.schema import AgentConfig
    from edgevox.testing.fake_engines import ScriptedLLM

    assert LLMAgent("bare", llm=ScriptedLLM([])).instructions == _config_default("agent.instructions")
    assert AgentConfig().instructions == _config_default("agent.instructions")


def _dashboard_pairs() -> list[tuple[str, Any, str]]:
    from edgevox.dashboard.state import DashboardState

    keys = ("max_events", "max_turns", "max_skills", "client_queue", "bus_queue")
    return [(f"dashboard.{key}", DashboardState, key) for key in keys]


@pytest.mark.parametrize(
    ("key", "component", "param"), _dashboard_pairs(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_a_dashboard_default_is_the_default_of_the_dashboard_state(key, component, param):
    assert _config_default(key) == _param_default(component, param)


def test_the_dashboard_is_off_and_on_loopback_by_default():
    d = AppConfig().dashboard
    assert (d.enabled, d.host, d.port, d.allow_remote) == (False, "127.0.0.1", 8765, False)
