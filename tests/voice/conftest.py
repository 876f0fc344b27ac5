"""Shared fixtures for the voice tests: an event recorder, a thread-leak guard, and the real models
(session-scoped, loaded once, only by tests marked ``models``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgevox.runtime.bus import EventBus
from edgevox.voice.loop import VoiceLoop

from .voice_helpers import Recorder

SPEECH_DIR = Path(__file__).resolve().parents[3] / "shared" / "speech"
"""``../shared/speech`` beside the repository (as in CI)."""


@pytest.fixture
def bus() -> Iterator[EventBus]:
    b = EventBus("voice-test")
    yield b
    b.close()


@pytest.fixture
def recorder(bus: EventBus) -> Recorder:
    return Recorder(bus)


@pytest.fixture
def loops() -> Iterator[list[VoiceLoop]]:
    """Loops a test started (see ``test_loop.start``); each must stop cleanly at the end."""
    started: list[VoiceLoop] = []
    yield started
    for loop in started:
        report = loop.stop(5.0)
        assert report.clean, report


@pytest.fixture(autouse=True)
def no_leaked_voice_threads() -> Iterator[None]:
    yield
    leaked = [t.name for t in threading.enumerate() if t.name.startswith("edgevox-voice") and t.is_alive()]
    assert not leaked, f"voice threads left running: {leaked}"


# --- real default models (loaded once per session, only when a `models` test asks) ---------


@pytest.fixture(scope="session")
def speech_dir() -> Path:
    if not SPEECH_DIR.is_dir():
        pytest.skip(f"shared speech folder {SPEECH_DIR} is absent (CI provides ../shared/speech)")
    return SPEECH_DIR


@pytest.fixture(scope="session")
def real_engines():
    """(vad, stt, llm, tts) on the embedded default models. Fails (never skips) if they do not load."""
    from edgevox.voice.defaults import load_default_engines

    return load_default_engines()
