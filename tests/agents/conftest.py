"""Fixtures for agent tests: a real bus and its recorded events (``real_llm`` is suite-wide)."""

from __future__ import annotations

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
