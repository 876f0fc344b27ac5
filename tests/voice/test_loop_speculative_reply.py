"""Speculative replies: the agent starts on the transcript of the end-of-speech pause, and
nothing it says or does is released before the endpoint confirms the same text.

Across turns, as a user speaks: pause, go on or stop; a tool the guess decided on must never
run unless the final transcript is the same. Driven by the fakes (no models, no sleeps).
"""

from __future__ import annotations

import numpy as np
import pytest

from edgevox.agents.events import AgentStarted, ToolCallStarted
from edgevox.agents.llm_agent import LLMAgent
from edgevox.examples.home_robot import SimulatedRobot, build_home_robot_agent
from edgevox.testing import FakeAudioIn, FakeSTT, ScriptedLLM
from edgevox.voice.events import (
    Chunk,
    SpeculativeReply,
    SpeechEnded,
    Stopped,
    Token,
    TranscriptEvent,
    TurnDone,
    TurnStarted,
)
from edgevox.voice.segmenter import SegmenterSettings

from .test_loop import make_loop, start
from .test_loop_latency import RATE, SEGMENTER  # pause after 100 ms of silence, endpoint after 300 ms
from .voice_helpers import TextAgent, silence, tone

PAUSE = np.concatenate([tone(0.5), silence(0.16)])
"""Speech, then a pause past ``pause_ms`` but short of the endpoint."""


def by_length(threshold_s: float, short: str, long: str):
    return lambda audio: short if audio.shape[0] < threshold_s * RATE else long


_AGENTS: list = []


@pytest.fixture(autouse=True)
def _close_agents(loops):  # noqa: ANN001 - after the loops fixture, so loops stop first
    yield
    for loop in loops:
        loop.stop(5)
    while _AGENTS:
        assert _AGENTS.pop().close(5), "an agent's skill thread did not end"


def robot(llm: ScriptedLLM, drives: list[str]) -> LLMAgent:
    """The home-robot demo agent (``go_to`` is a skill); every skill it starts is recorded."""
    sim = SimulatedRobot(speed_m_s=50.0)
    agent = build_home_robot_agent(llm, sim)
    _AGENTS.append(agent)
    executor = agent.executor
    submit = executor.submit

    def recording_submit(handle, fn):  # noqa: ANN001, ANN202
        drives.append(handle.skill)
        return submit(handle, fn)

    executor.submit = recording_submit
    return agent


def test_a_reply_is_generated_in_the_pause_and_released_only_when_the_endpoint_confirms(bus, recorder, loops):
    llm = ScriptedLLM(["Hello! How can I help?"])
    stt = FakeSTT(lambda audio: "hello robot")
    mic = FakeAudioIn()
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER, agent=LLMAgent("chat", llm=llm))
    start(loops, loop)
    mic.feed(PAUSE)
    # The model is already generating on the pause's transcript...
    assert llm.started.wait(5)
    assert llm.calls[0].messages[-1]["content"] == "hello robot"
    # ...but nobody has heard a thing: no transcript, turn, token, chunk or agent event yet.
    for kind in (TranscriptEvent, TurnStarted, Token, Chunk, AgentStarted):
        assert not recorder.of(kind), kind
    mic.feed(silence(0.5))
    done = recorder.wait_for(TurnDone)
    assert done.status == "completed" and done.reply_text == "Hello! How can I help?"
    kinds = [type(e) for e in recorder.events if type(e) in (TranscriptEvent, TurnStarted, Token)]
    assert kinds.index(TranscriptEvent) < kinds.index(TurnStarted) < kinds.index(Token)  # released in order
    assert len(llm.calls) == 1  # committed: the speculative generation is the reply
    assert loop.speculative_turns == {"started": 1, "committed": 1, "discarded": 0}
    assert loop.wait_idle(5)


def test_a_tool_decided_on_a_guess_waits_for_the_endpoint_and_then_runs_once(bus, recorder, loops):
    drives: list[str] = []
    stt = FakeSTT(lambda audio: "go to the kitchen")
    mic = FakeAudioIn()
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER, agent=robot(ScriptedLLM([]), drives))
    start(loops, loop)
    mic.feed(PAUSE)
    recorder.wait_for(SpeculativeReply, state="started")
    assert drives == [] and not recorder.of(ToolCallStarted)  # decided, not acted on
    mic.feed(silence(0.5))
    done = recorder.wait_for(TurnDone)
    assert done.status == "completed" and drives == ["go_to"]
    transcript = recorder.of(TranscriptEvent)[0]
    started = recorder.of(ToolCallStarted)[0]
    assert recorder.events.index(transcript) < recorder.events.index(started)


def test_speech_after_the_pause_drops_the_guess_and_its_tool_never_runs(bus, recorder, loops):
    # "go to the kitchen ... no, don't go to the kitchen": the guess would have driven there.
    drives: list[str] = []
    stt = FakeSTT(by_length(0.9, "go to the kitchen", "no, don't go to the kitchen"))
    mic = FakeAudioIn()
    llm = ScriptedLLM(default="Okay, I will stay here.")
    loop, agent = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER, agent=robot(llm, drives))
    start(loops, loop)
    mic.feed(PAUSE)
    recorder.wait_for(SpeculativeReply, state="started")
    mic.feed(np.concatenate([tone(0.5), silence(0.6)]))  # the user goes on, then stops talking
    recorder.wait_for(TurnDone)
    assert loop.wait_idle(5)
    assert drives == [] and not recorder.of(ToolCallStarted)
    assert [e.text for e in recorder.of(TurnStarted)] == ["no, don't go to the kitchen"]
    assert [e.text for e in recorder.of(TranscriptEvent)] == ["no, don't go to the kitchen"]
    assert loop.speculative_turns["discarded"] >= 1 and loop.speculative_turns["committed"] == 0
    # The guess left nothing in the conversation memory: only the final exchange is there.
    history = agent.memory.history("default")
    assert [m["content"] for m in history if m["role"] == "user"] == ["no, don't go to the kitchen"]


def test_a_safety_stop_during_a_guess_drops_it_and_nothing_runs_later(bus, recorder, loops):
    drives: list[str] = []
    stt = FakeSTT(lambda audio: "go to the kitchen")
    mic = FakeAudioIn()
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER, agent=robot(ScriptedLLM([]), drives))
    start(loops, loop)
    mic.feed(PAUSE)
    recorder.wait_for(SpeculativeReply, state="started")
    stopped = loop.safety_stop("e-stop button")
    assert isinstance(stopped, Stopped) and stopped.cancelled_turns == []  # nobody heard the guess
    assert loop.speculative_turns["discarded"] == 1
    mic.close()
    assert loop.wait_input_done(5)
    # The utterance's final transcript comes after the stop: it is a new request, run as one.
    assert drives == ["go_to"] and len(recorder.of(ToolCallStarted)) == 1


def test_stopping_the_loop_during_a_guess_is_clean_and_acts_on_nothing(bus, recorder, loops):
    drives: list[str] = []
    stt = FakeSTT(lambda audio: "go to the kitchen")
    mic = FakeAudioIn()
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER, agent=robot(ScriptedLLM([]), drives))
    loop.start()
    mic.feed(PAUSE)
    recorder.wait_for(SpeculativeReply, state="started")
    report = loop.stop(5)
    assert report.clean and report.cancelled_turns == []
    assert drives == [] and not recorder.of(TurnStarted) and not recorder.of(ToolCallStarted)


def test_echo_and_stop_phrases_are_never_guessed_on(bus, recorder, loops):
    stt = FakeSTT(lambda audio: "stop")
    mic = FakeAudioIn()
    llm = ScriptedLLM([])
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER, agent=LLMAgent("c", llm=llm))
    start(loops, loop)
    mic.feed(np.concatenate([PAUSE, silence(0.5)]))
    recorder.wait_for(Stopped)
    assert loop.wait_idle(5)
    assert loop.speculative_turns["started"] == 0 and llm.calls == []


class PlainAgent(TextAgent):
    """An agent that does not declare ``supports_speculation``."""

    def reply(self, task, ctx):  # noqa: ANN001, ANN201
        yield "Okay."


def test_agents_without_speculation_support_are_not_started_early(bus, recorder, loops):
    stt = FakeSTT(lambda audio: "hello robot")
    mic = FakeAudioIn()
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER, agent=PlainAgent())
    start(loops, loop)
    mic.feed(np.concatenate([PAUSE, silence(0.5)]))
    recorder.wait_for(TurnDone)
    assert loop.speculative_turns["started"] == 0


def test_speculative_replies_can_be_turned_off(bus, recorder, loops):
    llm = ScriptedLLM(["Hi."])
    stt = FakeSTT(lambda audio: "hello robot")
    mic = FakeAudioIn()
    agent = LLMAgent("chat", llm=llm)
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER, agent=agent, speculative_reply=False)
    start(loops, loop)
    mic.feed(np.concatenate([PAUSE, silence(0.5)]))
    assert recorder.wait_for(TurnDone).status == "completed"
    assert loop.speculative_turns["started"] == 0


# --- adaptive endpoint: the pause's transcript decides how long the loop waits ------------------


@pytest.mark.parametrize(
    ("heard", "utterances"),
    [("what time is it?", 2), ("set a timer for five", 1), ("turn left and", 1)],
)
def test_a_request_that_stops_mid_phrase_is_held_open_and_a_complete_one_ends_early(
    bus, recorder, loops, heard, utterances
):
    adaptive = SegmenterSettings(
        frame_ms=20, pre_roll_ms=0, min_speech_ms=60, end_silence_ms=300, hold_silence_ms=800, pause_ms=100
    )
    stt = FakeSTT(lambda audio: heard)
    mic = FakeAudioIn()
    agent = LLMAgent("chat", llm=ScriptedLLM(default="Okay."))
    loop, _ = make_loop(bus, stt=stt, audio_in=mic, segmenter=adaptive, agent=agent)
    start(loops, loop)
    mic.feed(PAUSE)
    recorder.wait_for(SpeculativeReply, state="started")  # the hint is given before the guess starts
    # 460 ms of silence in all (past end_silence_ms, short of hold_silence_ms), then more speech.
    mic.feed(np.concatenate([silence(0.3), tone(0.5), silence(1.0)]))
    mic.close()
    assert loop.wait_input_done(10)
    assert len(recorder.of(SpeechEnded)) == utterances


def test_without_speculative_stt_the_hold_never_applies(bus, recorder, loops):
    adaptive = SegmenterSettings(
        frame_ms=20, pre_roll_ms=0, min_speech_ms=60, end_silence_ms=300, hold_silence_ms=800, pause_ms=100
    )
    mic = FakeAudioIn()
    loop, _ = make_loop(
        bus, stt=FakeSTT(lambda a: "turn left and"), audio_in=mic, segmenter=adaptive, speculative_stt=False
    )
    start(loops, loop)
    mic.feed(np.concatenate([tone(0.5), silence(0.46), tone(0.5), silence(1.0)]))
    mic.close()
    assert loop.wait_input_done(10)
    assert len(recorder.of(SpeechEnded)) == 2  # ended after end_silence_ms, as with no adaptive endpoint


def test_the_chat_agent_guesses_too_and_stores_only_the_confirmed_exchange(bus, recorder, loops):
    llm = ScriptedLLM(default="Sure.")
    stt = FakeSTT(by_length(0.9, "tell me", "tell me a joke"))
    mic = FakeAudioIn()
    loop, agent = make_loop(bus, stt=stt, audio_in=mic, segmenter=SEGMENTER, llm=llm)  # LLMAgent without tools
    start(loops, loop)
    mic.feed(PAUSE)
    recorder.wait_for(SpeculativeReply, state="started")
    assert llm.started.wait(5)  # generating on "tell me"
    mic.feed(np.concatenate([tone(0.5), silence(0.6)]))
    recorder.wait_for(TurnDone)
    assert loop.wait_idle(5)
    assert [m["content"] for m in agent.history() if m["role"] == "user"] == ["tell me a joke"]
    assert [e.text for e in recorder.of(TurnStarted)] == ["tell me a joke"]
