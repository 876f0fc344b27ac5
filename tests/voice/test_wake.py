"""The wake word gate in the voice loop: the real microWakeWord model, real VAD and Whisper, on
the embedded Piper voice saying the wake word and commands (fed as a microphone would)."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator

import numpy as np
import pytest

from edgevox.engines.wake_micro import MicroWakeWordDetector
from edgevox.runtime.context import AgentContext
from edgevox.testing import FakeAudioIn, FakeTTS, MemoryAudioOut
from edgevox.voice.events import (
    FirstAudio,
    SpeechStarted,
    Stopped,
    TranscriptEvent,
    TurnDone,
    TurnStarted,
    WakeDetected,
    WakeWindowClosed,
)
from edgevox.voice.loop import VoiceLoop, VoiceSettings
from edgevox.voice.wake import Wake, WakeSettings, tone_cue

from .voice_helpers import TextAgent
from .wake_audio import joined, silence, speak

pytestmark = pytest.mark.models


class Echo(TextAgent):
    """Replies with what it heard, so a test can read what became a turn."""

    name = "echo"

    def reply(self, task: str, ctx: AgentContext) -> Iterator[str]:
        yield f"You said {task}" if "story" not in task.lower() else "Once upon a time. " * 20


@pytest.fixture(scope="module")
def voice(real_engines):
    """Audio the tests speak, rendered once: wake words, commands, a stop. The embedded voice
    without Piper's noise, so every run speaks the same audio: with it, Whisper tiny heard
    "Okay Nabu what time is it?" as "... work time, is it?" in one CI run."""
    from edgevox.engines.tts_piper import PiperTTS

    tts = PiperTTS(noise_scale=0.0, noise_w=0.0)
    return {
        "alexa": speak(tts, "Alexa."),
        "alexa_command": speak(tts, "Alexa, what time is it?"),
        "okay_nabu_command": speak(tts, "Okay Nabu what time is it?"),
        "command": speak(tts, "What time is it?"),
        "follow_up": speak(tts, "And tomorrow?"),
        # Not a bare "Stop!": Whisper tiny heard Piper's rendering of it as "start." in about 1 of 4
        # renderings (Piper's noise varies each run); the same words as the PulseAudio test.
        "stop": speak(tts, "Stop right now, please stop!"),
        "alexa_story": speak(tts, "Alexa, tell me a story."),
    }


def make_loop(bus, real_engines, *, window_s=30.0, stop_check="while_active", cue=True, model="alexa", auto_play=True):
    mic = FakeAudioIn(sample_rate_hz=16000)
    out = MemoryAudioOut(sample_rate_hz=16000, auto_play=auto_play)
    settings = WakeSettings(window_s=window_s, stop_check=stop_check, cue=tone_cue(16000) if cue else None)
    loop = VoiceLoop(
        bus,
        real_engines.vad,
        real_engines.stt,
        Echo(),
        FakeTTS(),
        mic,
        out,
        VoiceSettings(speculative_reply=False),
        wake=Wake(MicroWakeWordDetector(model), settings),
    )
    return loop, mic, out


def answered(recorder) -> list[str]:
    """Replies the agent gave (the stop confirmation is said by the loop, not the agent)."""
    return [d.reply_text for d in recorder.of(TurnDone) if d.reply_text.startswith("You said")]


def words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def test_speech_without_the_wake_word_is_not_a_turn(bus, recorder, loops, real_engines, voice):
    loop, mic, _ = make_loop(bus, real_engines)
    loop.start()
    loops.append(loop)
    mic.feed(joined(silence(0.3), voice["command"], silence(1.0)))
    mic.close()
    assert loop.wait_input_done(30)
    assert not recorder.of(WakeDetected)
    assert not recorder.of(SpeechStarted), "asleep, with nothing running, speech is not even announced"
    assert not recorder.of(TranscriptEvent) and not recorder.of(TurnStarted) and not answered(recorder)


@pytest.mark.parametrize(("model", "phrase"), [("alexa", "Alexa"), ("okay_nabu", "Okay Nabu")])
def test_a_command_in_the_same_breath_as_the_wake_word_is_the_turn_without_the_wake_word(
    bus, recorder, loops, real_engines, voice, model, phrase
):
    loop, mic, out = make_loop(bus, real_engines, model=model)
    loop.start()
    loops.append(loop)
    mic.feed(joined(silence(0.3), voice[f"{model}_command"], silence(1.0)))
    mic.close()
    done = recorder.wait_for(TurnDone, timeout_s=30)
    wake = recorder.of(WakeDetected)[0]
    assert wake.model == model and wake.phrase == phrase and wake.probability > 0.8
    said = recorder.of(TranscriptEvent)
    assert len(said) == 1, [t.text for t in said]
    assert words(said[0].text)[-4:] == ["what", "time", "is", "it"], said[0].text
    assert not set(words(phrase.lower())) & set(words(said[0].text)), said[0].text
    assert done.status == "completed" and "time" in done.reply_text.lower()
    # The cue was played on the output before the reply.
    cue = tone_cue(16000)
    assert np.array_equal(out.written_audio()[: cue.shape[0]], cue)


def test_the_window_takes_follow_ups_without_the_wake_word_until_it_closes(bus, recorder, loops, real_engines, voice):
    loop, mic, _ = make_loop(bus, real_engines, window_s=1.0, cue=False)
    loop.start()
    loops.append(loop)
    mic.feed(joined(silence(0.3), voice["alexa"], silence(0.8), voice["command"], silence(1.0)))
    recorder.wait_for(TurnDone, timeout_s=30)
    assert loop.wait_idle(10)
    # A follow-up right after the reply needs no wake word.
    mic.feed(joined(voice["follow_up"], silence(1.0)))
    recorder.wait_until(lambda: len(recorder.of(TurnDone)) == 2, timeout_s=30)
    texts = [t.text for t in recorder.of(TranscriptEvent)]
    assert words(texts[0]) == ["what", "time", "is", "it"], texts
    assert "tomorrow" in words(texts[1]), texts
    # Then the window closes (1 s with no speech, turn or reply) and a command is not a turn.
    closed_seen = threading.Event()
    bus.add_observer(lambda e: closed_seen.set() if isinstance(e, WakeWindowClosed) else None, name="closed")
    for _ in range(500):  # a live microphone keeps delivering audio, 20 ms at a time, while the window runs out
        mic.feed(silence(0.02))
        if closed_seen.wait(0.02):
            break
    closed = recorder.wait_for(WakeWindowClosed, timeout_s=1)
    assert closed.open_s >= 1.0
    mic.feed(joined(voice["command"], silence(1.0)))
    mic.close()
    assert loop.wait_input_done(30)
    assert len(recorder.of(TurnDone)) == 2 and len(recorder.of(TranscriptEvent)) == 2


def test_asleep_a_stop_phrase_still_stops_a_running_skill(bus, recorder, loops, real_engines, voice):
    loop, mic, _ = make_loop(bus, real_engines, window_s=0.5)
    loop.start()
    loops.append(loop)
    skill = loop.activities.start("skill", "go_to_kitchen")  # started by an earlier turn, still driving
    mic.feed(joined(silence(0.3), voice["stop"], silence(1.0)))
    stopped = recorder.wait_for(Stopped, timeout_s=30)
    assert skill.token.cancelled
    assert "skill go_to_kitchen" in (stopped.cancelled or [])
    assert not recorder.of(WakeDetected)
    heard = recorder.of(TranscriptEvent)[0]
    assert heard.stop_phrase == "stop"
    mic.close()
    assert loop.wait_input_done(30)
    assert not answered(recorder), "the stop phrase is never a turn"


def test_while_the_robot_speaks_stop_needs_no_wake_word_under_half_duplex(bus, recorder, loops, real_engines, voice):
    # The reply only plays as the test advances the speaker, so the robot is still speaking
    # long after the window (0.5 s) would have closed.
    loop, mic, out = make_loop(bus, real_engines, window_s=0.5, cue=False, auto_play=False)
    loop.start()
    loops.append(loop)
    mic.feed(joined(silence(0.3), voice["alexa_story"], silence(1.0)))
    assert out.wait_for_queued(16000, timeout_s=30)
    out.advance(1600)
    story = recorder.wait_for(FirstAudio, timeout_s=10)
    closed_by_time = threading.Event()
    bus.add_observer(lambda e: closed_by_time.set() if isinstance(e, WakeWindowClosed) else None, name="closed")
    for _ in range(50):  # a live microphone: 1 s of silence, 20 ms at a time, as the reply plays
        mic.feed(silence(0.02))
        assert not closed_by_time.wait(0.02), "the window closed while the robot was speaking"
    mic.feed(joined(voice["stop"], silence(1.0)))
    stopped = recorder.wait_for(Stopped, timeout_s=30)
    done = recorder.wait_for(TurnDone, timeout_s=10, turn_id=story.turn_id)
    assert done.status == "stopped" and story.turn_id in (stopped.cancelled_turns or [])
    assert len(recorder.of(WakeDetected)) == 1
    mic.close()
    out.advance(10**8)


def test_asleep_with_nothing_running_only_stop_check_always_transcribes(bus, recorder, loops, real_engines, voice):
    loop, mic, _ = make_loop(bus, real_engines, stop_check="always")
    loop.start()
    loops.append(loop)
    mic.feed(joined(silence(0.3), voice["command"], silence(0.8), voice["stop"], silence(1.0)))
    recorder.wait_for(Stopped, timeout_s=30)
    mic.close()
    assert loop.wait_input_done(30)
    said = recorder.of(TranscriptEvent)
    assert [t.stop_phrase for t in said] == ["", "stop"], [t.text for t in said]
    assert not answered(recorder), "asleep, a transcript is only stop-checked, never a turn"
