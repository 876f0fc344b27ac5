"""VoiceLoop rules, driven by the fakes from edgevox.testing (no models, no sound card, no sleeps)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from edgevox.agents.llm_agent import LLMAgent
from edgevox.errors import AudioDeviceError, LifecycleError
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import ErrorEvent, InterruptEvent, StopEvent
from edgevox.testing import FakeAudioIn, FakeSTT, FakeTTS, FakeVAD, MemoryAudioOut, ScriptedLLM, split_tokens
from edgevox.voice.chunker import ChunkerSettings
from edgevox.voice.events import (
    AudioDevice,
    Chunk,
    ChunkSynthesized,
    FirstAudio,
    InputEnded,
    Interrupted,
    SpeechEnded,
    SpeechStarted,
    Stopped,
    TranscriptEvent,
    TurnDone,
    TurnStarted,
)
from edgevox.voice.loop import VoiceLoop, VoiceSettings

from .voice_helpers import TextAgent, silence, tone

FIRST = "Hello there, nice to meet you."
SECOND = "I can move forward and turn left."
REPLY = f"{FIRST} {SECOND}"


def make_loop(bus, *, llm=None, stt=None, tts=None, audio_in=None, audio_out=None, agent=None, **settings):
    # These scripts reason in whole sentences: no forced short first fragment unless a test asks.
    settings.setdefault("chunker", ChunkerSettings(first_fragment_max_words=0))
    llm = llm or ScriptedLLM(default=REPLY)
    agent = agent or LLMAgent("chat", llm=llm)
    loop = VoiceLoop(
        bus,
        FakeVAD(frame_ms=20),
        stt or FakeSTT(default="hello robot"),
        agent,
        tts or FakeTTS(),
        audio_in or FakeAudioIn(),
        audio_out or MemoryAudioOut(),
        VoiceSettings(**settings),
    )
    return loop, agent


def start(loops: list[VoiceLoop], loop: VoiceLoop) -> VoiceLoop:
    loop.start()
    loops.append(loop)
    return loop


# --- basic turns ---------------------------------------------------------------------------


def test_typed_turns_stream_chunks_to_audio_and_keep_memory_across_turns(bus, recorder, loops):
    llm = ScriptedLLM([REPLY, "You said hello robot."])
    loop, agent = make_loop(bus, llm=llm)
    start(loops, loop)
    loop.submit_text("hello robot")
    assert loop.wait_idle(5)
    loop.submit_text("what did I say")
    assert loop.wait_idle(5)
    chunks = [e.text for e in recorder.of(Chunk)]
    assert chunks == [FIRST, SECOND, "You said hello robot."]
    assert [e.status for e in recorder.of(TurnDone)] == ["completed", "completed"]
    # The second prompt carries the first exchange: one conversation, not a session per utterance.
    second_prompt = llm.calls[1].messages
    assert {"role": "assistant", "content": REPLY} in second_prompt
    assert second_prompt[0]["role"] == "system" and second_prompt[0]["content"] == llm.calls[0].messages[0]["content"]
    assert recorder.of(FirstAudio, turn_id=1) and loop.audio_out.played_samples > 0
    assert agent.history()[-1]["content"] == "You said hello robot."


def test_spoken_utterance_is_segmented_transcribed_and_answered(bus, recorder, loops):
    mic = FakeAudioIn()
    stt = FakeSTT(["turn left"])
    loop, _ = make_loop(bus, stt=stt, audio_in=mic)
    start(loops, loop)
    mic.feed(np.concatenate([silence(0.3), tone(0.6), silence(0.6)]))
    mic.close()
    assert loop.wait_input_done(5)
    started = recorder.of(SpeechStarted)
    ended = recorder.of(SpeechEnded)
    assert len(started) == 1 and len(ended) == 1
    assert started[0].turn_id == ended[0].turn_id
    assert recorder.of(TranscriptEvent)[0].text == "turn left"
    assert recorder.of(TurnStarted)[0].turn_id == started[0].turn_id
    assert recorder.of(TurnDone)[0].status == "completed"
    assert recorder.of(InputEnded)
    # pre-roll + 0.6 s speech + end silence, at 16 kHz
    assert 0.8 < ended[0].duration_s < 1.4
    assert ended[0].last_voiced_at <= recorder.of(TranscriptEvent)[0].timestamp


def test_speech_arriving_during_a_turn_is_queued_not_dropped(bus, recorder, loops):
    gate = threading.Semaphore(0)
    llm = ScriptedLLM(["One two three.", "Second answer.", "Third answer."], gate=gate)
    mic = FakeAudioIn()
    stt = FakeSTT(["first question", "second question"])
    loop, _ = make_loop(bus, llm=llm, stt=stt, audio_in=mic)
    start(loops, loop)
    loop.submit_text("typed question")
    assert llm.started.wait(5)  # turn 1 is generating (held by the gate)
    mic.feed(np.concatenate([tone(0.4), silence(0.5), tone(0.4), silence(0.5)]))
    recorder.wait_until(lambda: len(recorder.of(TranscriptEvent)) == 3)
    for _ in range(20):
        gate.release()
    assert loop.wait_idle(5)
    assert [e.text for e in recorder.of(TurnStarted)] == ["typed question", "first question", "second question"]
    assert [e.status for e in recorder.of(TurnDone)] == ["completed"] * 3


# --- barge-in ------------------------------------------------------------------------------


def test_barge_in_clears_audio_cancels_generation_and_keeps_only_spoken_text(bus, recorder, loops):
    gate = threading.Semaphore(0)
    llm = ScriptedLLM([REPLY + " And then I will stop talking.", "Okay."], gate=gate)
    out = MemoryAudioOut(auto_play=False)
    mic = FakeAudioIn()
    tts = FakeTTS()
    loop, agent = make_loop(
        bus, llm=llm, audio_out=out, audio_in=mic, tts=tts, echo_guard="off", stt=FakeSTT(["wait a moment"])
    )
    start(loops, loop)
    loop.submit_text("tell me something")
    for _ in range(len(FIRST.split()) + 1):  # the first sentence and the first word of the second
        gate.release()
    first = recorder.wait_for(Chunk, index=0)
    assert first.text == FIRST
    recorder.wait_for(ChunkSynthesized, turn_id=1, index=0)
    out.advance(tts.samples_for(FIRST))  # the first chunk has fully played
    recorder.wait_for(FirstAudio, turn_id=1)
    mic.feed(np.concatenate([tone(0.3), silence(0.5)]))  # the user talks over the reply
    interrupted = recorder.wait_for(Interrupted)
    assert interrupted.spoken_text == FIRST
    assert recorder.of(InterruptEvent)
    done = recorder.wait_for(TurnDone, turn_id=1)
    assert done.status == "interrupted" and done.spoken_text == FIRST
    assert llm.calls[0].finished.wait(5) and llm.calls[0].cancelled
    assert llm.calls[0].tokens_yielded < len(split_tokens(REPLY + " And then I will stop talking."))
    # History keeps only what was heard; the interruption is the next turn.
    for _ in range(5):
        gate.release()
    recorder.wait_for(TurnStarted, text="wait a moment")
    history = agent.history()
    assert history[1] == {"role": "assistant", "content": FIRST}
    assert interrupted.audio_stop_s < 0.5


def test_barge_in_drops_stale_audio_being_synthesized(bus, recorder, loops):
    tts_gate = threading.Semaphore(0)
    tts = FakeTTS(gate=tts_gate)
    out = MemoryAudioOut(auto_play=False)
    mic = FakeAudioIn()
    # An empty transcript for the interruption: no second turn, so every later write would be stale.
    loop, _ = make_loop(bus, tts=tts, audio_out=out, audio_in=mic, echo_guard="off", stt=FakeSTT(default=""))
    start(loops, loop)
    loop.submit_text("talk")
    tts_gate.release()  # first chunk synthesized and written
    assert out.first_write.wait(5)
    out.advance(1)  # one sample played: FirstAudio proves the reply is audible
    recorder.wait_for(FirstAudio, turn_id=1)
    recorder.wait_for(Chunk, index=1)
    mic.feed(np.concatenate([tone(0.3), silence(0.5)]))
    recorder.wait_for(Interrupted)
    writes_before = len(out.writes)
    for _ in range(5):
        tts_gate.release()  # the stale second chunk may now finish synthesizing
    recorder.wait_for(TurnDone, turn_id=1)
    assert loop.wait_idle(5)
    assert len(out.writes) == writes_before == 1
    assert out.clears == [tts.samples_for(FIRST) - 1]
    assert not out.playing


def test_half_duplex_ignores_speech_during_playback_but_honours_stop(bus, recorder, loops):
    out = MemoryAudioOut(auto_play=False)
    mic = FakeAudioIn()
    stt = FakeSTT(["that was the robot itself", "stop"])
    loop, _ = make_loop(bus, audio_out=out, audio_in=mic, stt=stt)
    start(loops, loop)
    loop.submit_text("talk")
    assert out.first_write.wait(5)
    out.advance(1)
    recorder.wait_for(FirstAudio, turn_id=1)
    mic.feed(np.concatenate([tone(0.3), silence(0.5)]))
    recorder.wait_for(TranscriptEvent, text="that was the robot itself")
    assert not recorder.of(Interrupted) and not out.clears
    assert [e.text for e in recorder.of(TurnStarted)] == ["talk"]
    mic.feed(np.concatenate([tone(0.3), silence(0.5)]))
    recorder.wait_for(Stopped)
    assert recorder.wait_for(TurnDone, turn_id=1).status == "stopped"
    assert out.clears


def test_energy_gate_ignores_echo_but_lets_louder_speech_barge_in(bus, recorder, loops):
    out = MemoryAudioOut(auto_play=False)
    mic = FakeAudioIn()
    tts = FakeTTS(amplitude=0.3)
    loop, _ = make_loop(bus, audio_out=out, audio_in=mic, tts=tts, echo_guard="energy_gate", stt=FakeSTT(["hey"]))
    start(loops, loop)
    loop.submit_text("talk")
    assert out.first_write.wait(5)
    out.advance(1600)
    recorder.wait_for(FirstAudio)
    mic.feed(np.concatenate([tone(0.4, amplitude=0.3), silence(0.4)]))  # the reply's own echo, same level
    mic.feed(np.concatenate([tone(0.4, amplitude=0.9), silence(0.5)]))  # the user, much louder
    interrupted = recorder.wait_for(Interrupted)
    starts = recorder.of(SpeechStarted)
    assert len(starts) == 1 and starts[0].during_playback
    assert interrupted.turn_id == 1


# --- safety stop ---------------------------------------------------------------------------


def test_stop_mid_generation_cancels_before_any_audio(bus, recorder, loops):
    gate = threading.Semaphore(0)
    llm = ScriptedLLM(default=REPLY, gate=gate)
    out = MemoryAudioOut()
    loop, agent = make_loop(bus, llm=llm, audio_out=out)
    start(loops, loop)
    loop.submit_text("tell me a story")
    gate.release()
    gate.release()
    recorder.wait_until(lambda: llm.calls and llm.calls[0].tokens_yielded == 2)
    loop.submit_text("Stop!")  # from another thread than the turn worker, while it is inside the LLM
    stopped = recorder.wait_for(Stopped)
    assert stopped.phrase == "stop" and stopped.cancelled_turns == [1]
    assert stopped.cancel_s < 0.1
    assert recorder.of(StopEvent)[0].text == "Stop!"
    assert recorder.wait_for(TurnDone, turn_id=1).status == "stopped"
    assert llm.calls[0].finished.wait(5) and llm.calls[0].cancelled
    for _ in range(20):
        gate.release()
    assert loop.wait_idle(5)
    # No reply audio ever played: the only speech is the stop's confirmation, said once.
    assert [c.text for c in recorder.of(Chunk)] == ["Stopped."]
    assert not recorder.of(TurnStarted, text="Stop!")  # the stop phrase never reached the agent
    assert len(llm.calls) == 1


def test_stop_mid_playback_clears_output_and_keeps_spoken_part(bus, recorder, loops):
    out = MemoryAudioOut(auto_play=False)
    tts = FakeTTS()
    loop, agent = make_loop(bus, audio_out=out, tts=tts)
    start(loops, loop)
    loop.submit_text("talk")
    recorder.wait_for(ChunkSynthesized, turn_id=1, index=1)
    out.advance(tts.samples_for(FIRST))
    loop.submit_text("please halt")
    done = recorder.wait_for(TurnDone, turn_id=1)
    assert done.status == "stopped" and done.spoken_text == FIRST
    assert out.clears and out.clears[-1] > 0 and not out.playing
    assert agent.history()[-1] == {"role": "assistant", "content": FIRST}


def test_spoken_stop_cancels_a_running_skill_while_the_turn_is_busy(bus, recorder, loops):
    skill_started = threading.Event()
    skill_cancelled = threading.Event()

    class SkillAgent(TextAgent):
        tools = ()

        def reply(self, task: str, ctx: AgentContext):
            yield "Moving forward."
            skill_ctx = ctx.child(agent_name="drive")
            skill_started.set()
            if skill_ctx.cancel_token.wait(10):  # a long-running skill waiting on its token
                skill_cancelled.set()

    mic = FakeAudioIn()
    loop, _ = make_loop(bus, agent=SkillAgent(), audio_in=mic, stt=FakeSTT(["freeze"]))
    start(loops, loop)
    loop.submit_text("go forward")
    assert skill_started.wait(5)
    mic.feed(np.concatenate([tone(0.3), silence(0.5)]))
    assert skill_cancelled.wait(5)
    assert recorder.wait_for(Stopped).phrase == "freeze"
    assert recorder.wait_for(TurnDone, turn_id=1).status == "stopped"


def test_stop_also_cancels_queued_turns_and_reports_them(bus, recorder, loops):
    gate = threading.Semaphore(0)
    llm = ScriptedLLM(default="Fine.", gate=gate)
    loop, _ = make_loop(bus, llm=llm)
    start(loops, loop)
    loop.submit_text("one")
    assert llm.started.wait(5)
    loop.submit_text("two")
    loop.submit_text("three")
    stopped = loop.submit_text("halt")
    recorder.wait_for(Stopped, turn_id=stopped)
    assert sorted(recorder.wait_for(Stopped).cancelled_turns) == [1, 2, 3]
    for _ in range(10):
        gate.release()
    assert loop.wait_idle(5)
    statuses = [e.status for e in sorted(recorder.of(TurnDone), key=lambda e: e.turn_id) if e.turn_id <= 3]
    assert statuses == ["stopped"] * 3


def test_dont_stop_is_an_ordinary_turn(bus, recorder, loops):
    loop, _ = make_loop(bus)
    start(loops, loop)
    loop.submit_text("don't stop")
    assert loop.wait_idle(5)
    assert not recorder.of(Stopped)
    assert recorder.of(TurnDone)[0].status == "completed"


# --- devices, vocabulary, lifecycle ---------------------------------------------------------


class FlakyAudioIn(FakeAudioIn):
    """Raises AudioDeviceError on the given read numbers, and optionally on the next start()."""

    def __init__(self, fail_reads: set[int], fail_starts: int = 0) -> None:
        super().__init__()
        self.fail_reads = fail_reads
        self.fail_starts = fail_starts
        self.reads = 0
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        if 1 < self.starts <= 1 + self.fail_starts:
            raise AudioDeviceError("device still gone")
        super().start()

    def read(self, timeout_s: float):
        self.reads += 1
        if self.reads in self.fail_reads:
            raise AudioDeviceError("stream lost")
        return super().read(timeout_s)


def test_lost_input_stream_is_reopened_and_reported(bus, recorder, loops):
    mic = FlakyAudioIn({3}, fail_starts=1)
    loop, _ = make_loop(bus, audio_in=mic, stt=FakeSTT(["still listening"]))
    start(loops, loop)
    mic.feed(np.concatenate([silence(0.2), tone(0.4), silence(0.5)]))
    recorder.wait_for(AudioDevice, state="reopened")
    states = [e.state for e in recorder.of(AudioDevice)]
    assert states == ["lost", "failed", "reopened"]
    recorder.wait_for(TurnStarted, text="still listening")
    assert loop.device_reopens == 1


def test_stalled_input_is_reopened(bus, recorder, loops):
    mic = FakeAudioIn()  # delivers nothing: read() keeps timing out
    loop, _ = make_loop(bus, audio_in=mic, input_stall_s=0.2, read_timeout_s=0.05)
    start(loops, loop)
    event = recorder.wait_for(AudioDevice, state="lost")
    assert "no audio" in event.error
    recorder.wait_for(AudioDevice, state="reopened")


def test_stt_is_biased_with_configured_vocabulary_tool_names_and_enum_values(bus, recorder, loops):
    from edgevox.agents.tools import tool

    @tool
    def move_robot(direction: str, speed: float = 0.5) -> str:
        """Move.

        Args:
            direction: where
            speed: how fast
        """
        return direction

    class ToolAgent(TextAgent):  # tools in both forms, as an agent lists them: only STT looks at them here
        name = "tools"
        tools = (
            move_robot,
            {
                "type": "function",
                "function": {
                    "name": "set_light",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "room": {"enum": ["kitchen", "office"]},
                            "mode": {"anyOf": [{"enum": ["green", "blue"]}, {"type": "null"}]},
                        },
                    },
                },
            },
        )

        def reply(self, task: str, ctx: AgentContext):
            yield "Ok."

    mic = FakeAudioIn()
    stt = FakeSTT(["go"])
    loop = VoiceLoop(
        bus,
        FakeVAD(frame_ms=20),
        stt,
        ToolAgent(),
        FakeTTS(),
        mic,
        MemoryAudioOut(),
        VoiceSettings(vocabulary=("EdgeVox",)),
    )
    start(loops, loop)
    mic.feed(np.concatenate([tone(0.3), silence(0.5)]))
    recorder.wait_for(TurnDone)
    vocab = stt.calls[0].vocabulary
    assert vocab[0] == "EdgeVox"
    assert {"move robot", "set light", "kitchen", "office", "green", "blue"} <= set(vocab)


def test_agent_failure_ends_the_turn_with_an_error_and_the_loop_goes_on(bus, recorder, loops):
    class Broken(TextAgent):
        def __init__(self) -> None:
            self.calls = 0

        def reply(self, task, ctx):
            self.calls += 1
            if self.calls == 1:
                raise RuntimeError("model exploded")
            yield "Fine now."

    loop, _ = make_loop(bus, agent=Broken())
    start(loops, loop)
    loop.submit_text("one")
    assert recorder.wait_for(TurnDone, turn_id=1).status == "error"
    assert "model exploded" in recorder.wait_for(ErrorEvent).error
    loop.submit_text("two")
    assert recorder.wait_for(TurnDone, turn_id=2).status == "completed"


def test_stop_reports_a_thread_that_would_not_finish(bus, recorder):
    release = threading.Event()
    entered = threading.Event()

    class Stubborn(TextAgent):
        def reply(self, task, ctx):
            entered.set()
            release.wait(10)  # ignores its cancel token
            yield "late"

    loop, _ = make_loop(bus, agent=Stubborn())
    loop.start()
    loop.submit_text("go")
    assert entered.wait(5)
    report = loop.stop(0.2)
    assert not report.clean and "edgevox-voice-turn" in report.abandoned
    assert report.cancelled_turns == [1]
    release.set()
    for t in threading.enumerate():
        if t.name == "edgevox-voice-turn":
            t.join(5)


def test_start_twice_and_submit_before_start_are_lifecycle_errors(bus, loops):
    loop, _ = make_loop(bus)
    with pytest.raises(LifecycleError):
        loop.submit_text("hi")
    start(loops, loop)
    with pytest.raises(LifecycleError):
        loop.start()
