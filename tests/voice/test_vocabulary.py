"""STT vocabulary for the next turn: the agent's tools, and for an orchestration every member's tools."""

from __future__ import annotations

from typing import Literal

import numpy as np

from edgevox.agents.llm_agent import LLMAgent
from edgevox.agents.tools import tool
from edgevox.app import App, Engines
from edgevox.config.loader import parse_config
from edgevox.orchestration.coordinator import Coordinator
from edgevox.testing import FakeAudioIn, FakeSTT, FakeTTS, FakeVAD, MemoryAudioOut, ScriptedLLM
from edgevox.voice.events import TurnDone
from edgevox.voice.loop import VoiceLoop, VoiceSettings
from edgevox.voice.vocabulary import VocabularySource, vocabulary_for

from .voice_helpers import silence, tone


@tool
def set_light(room: Literal["kitchen", "office"], mode: str = "on") -> str:
    """Switch a light.

    Args:
        room: which room
        mode: on or off
    """
    return room


@tool
def dock_robot() -> str:
    """Go back to the charging dock."""
    return "docking"


def test_an_orchestration_gives_stt_the_tools_of_every_member_agent(bus, recorder, loops):
    llm = ScriptedLLM(default="Okay.")
    coordinator = Coordinator(
        {
            "lights": LLMAgent("lights", tools=[set_light], llm=llm),
            "base": LLMAgent("base", tools=[dock_robot], llm=llm),
        }
    )
    mic = FakeAudioIn()
    stt = FakeSTT(["hello"])
    loop = VoiceLoop(
        bus,
        FakeVAD(frame_ms=20),
        stt,
        coordinator,
        FakeTTS(),
        mic,
        MemoryAudioOut(),
        VoiceSettings(vocabulary=("EdgeVox",), speculative_stt=False),
    )
    loop.start()
    loops.append(loop)
    mic.feed(np.concatenate([tone(0.3), silence(0.5)]))
    recorder.wait_for(TurnDone)
    assert stt.calls[0].vocabulary == ("EdgeVox", "set light", "kitchen", "office", "dock robot")


def test_an_app_with_an_orchestration_biases_stt_with_its_agents_tools():
    config = """\
name: vocab
audio:
  input: {source: text}
  output: {sink: none}
agents:
  concierge:
    tools: [edgevox.orchestration.tools:handoff_conversation]
  chef: {}
orchestration:
  strategy: swarm
  swarm: {agents: [concierge, chef], entry: concierge}
"""
    app = App.build(parse_config(config, env={}), engines=Engines(llm=ScriptedLLM(default="Okay.")))
    assert "handoff conversation" in vocabulary_for((), app.loop.agent)


def test_an_agent_that_names_its_next_turn_tools_is_asked_instead_of_reading_its_tools():
    class Narrowed:
        tools = [set_light, dock_robot]

        def next_turn_tools(self):  # noqa: ANN202 - only docking is possible right now
            return [dock_robot]

    assert isinstance(Narrowed(), VocabularySource)
    assert vocabulary_for((), Narrowed()) == ("dock robot",)
    assert vocabulary_for(["Kitchen"], type("Plain", (), {"tools": {"x": set_light}})()) == (
        "Kitchen",
        "set light",
        "office",
    )
