"""Shared fixtures for engine tests: real models loaded once per session, the speech folder."""

from __future__ import annotations

from pathlib import Path

import pytest

SPEECH_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "speech"


@pytest.fixture(scope="session")
def speech_dir() -> Path:
    if not (SPEECH_DIR / "MANIFEST.tsv").is_file():
        pytest.skip(f"real speech clips not available at {SPEECH_DIR} (../shared/speech beside the repository)")
    return SPEECH_DIR


@pytest.fixture(scope="session")
def whisper_stt():
    # No skip: the default models ship with edgevox; a failed load must fail the tests.
    from edgevox.engines.stt_faster_whisper import FasterWhisperSTT

    return FasterWhisperSTT("whisper-tiny.en", cpu_threads=2)


@pytest.fixture(scope="session")
def llama_llm():
    from edgevox.engines.llm_llama_cpp import LlamaCppLLM

    llm = LlamaCppLLM("smollm2-135m", n_threads=2, n_ctx=1024)
    yield llm
    llm.close()


@pytest.fixture(scope="session")
def piper_tts():
    from edgevox.engines.tts_piper import PiperTTS

    return PiperTTS("piper-joe-medium")
