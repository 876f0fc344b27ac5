"""Fixtures for agent tests: a real bus, and the embedded SmolLM2 model (session-scoped)."""

from __future__ import annotations

import importlib.util

import pytest

from edgevox.runtime.bus import EventBus


@pytest.fixture
def bus():
    b = EventBus("test-agents")
    yield b
    b.close()


@pytest.fixture
def recorded(bus):
    """(bus, events): every event published on ``bus``, in order."""
    events = []
    sub = bus.subscribe("*", events.append)
    yield bus, events
    sub.close()


@pytest.fixture(scope="session")
def real_llm():
    """The embedded SmolLM2-135M through the real llama.cpp adapter. Fails (never skips) if we ship it broken."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed here (pip install 'edgevox[llm]')")
    from edgevox.engines.llm_llama_cpp import LlamaCppLLM

    llm = LlamaCppLLM()
    yield llm
    llm.close()
