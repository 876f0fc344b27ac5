"""The wake word end to end through a real audio device: an App built from YAML (``wake.model:
alexa``), its microphone the monitor of a private PulseAudio null sink, the "person" a second
output stream playing the embedded Piper voice into that sink. Real VAD, Whisper, Piper and
wake word model; a scripted LLM so the replies (and their length) are known."""

from __future__ import annotations

import contextlib
import re

import pytest

from edgevox.voice.events import FirstAudio, Stopped, TranscriptEvent, TurnDone, TurnStarted, WakeDetected

from .voice_helpers import Quieter, Recorder
from .wake_audio import joined, silence, speak

pytestmark = [pytest.mark.audio, pytest.mark.models]

STORY = " ".join(f"Part {n} of the story is about a robot that walks to the kitchen and back." for n in range(1, 12))

CONFIG = """\
name: wake-pulse
audio:
  input: {source: device, device: pulse}
  output: {sink: device, device: pulse}
voice:
  echo_guard: energy_gate  # hears the user over the quieter robot without waiting for its reply to end
  barge_in: false          # so only the stop phrase can stop the reply
wake:
  model: alexa
  window_s: 2.0
"""


def timeline(recorder: Recorder) -> str:
    """The events so far, one a line, for a failure message."""
    skip = ("voice.token", "voice.chunk", "agent.reply_delta")
    return "\n".join(f"{e.kind} {vars(e)}" for e in recorder.events if e.kind not in skip)


def test_a_wake_word_played_into_the_device_opens_a_turn_and_stop_needs_no_wake_word(tmp_path, real_engines):
    from edgevox.app import App
    from edgevox.config import load_config
    from edgevox.config.build_engines import Engines
    from edgevox.engines.audio_sounddevice import SoundDeviceOut
    from edgevox.testing import ScriptedLLM
    from edgevox.testing.pulse import private_pulseaudio, pulseaudio_installed, reinitialize_portaudio

    if not pulseaudio_installed():
        pytest.skip("the pulseaudio binary is absent (apt-get install pulseaudio pulseaudio-utils libportaudio2)")
    tts = real_engines.tts
    command = speak(tts, "What time is it?")
    wake_command = joined(speak(tts, "Alexa."), silence(0.6), command)  # waits for the cue, as people do
    wake_story = speak(tts, "Alexa, tell me a story.")
    path = tmp_path / "wake.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    llm = ScriptedLLM(lambda messages, _grammar: STORY if "story" in str(messages[-1]["content"]) else "It is noon.")
    with private_pulseaudio(rate_hz=16000):
        reinitialize_portaudio()
        app = App.build(load_config(path), engines=Engines(llm=llm, stt=real_engines.stt, tts=Quieter(tts, 0.2)))
        recorder = Recorder(app.bus)
        user = SoundDeviceOut(device="pulse", sample_rate_hz=16000, device_rate_hz=16000)
        user.start()
        app.start()
        try:
            # 1. A command without the wake word, then the wake word and the same command. (The
            # same-breath command is tested in test_wake.py: here the cue, summed bit-exactly into
            # the sink, would mask its first word.)
            user.write(joined(command, silence(1.5), wake_command, silence(0.5)))
            first = recorder.wait_for(TurnDone, timeout_s=60)
            turns = recorder.of(TurnStarted)
            assert len(recorder.of(WakeDetected)) == 1
            assert len(turns) == 1, timeline(recorder)  # the command before the wake word was no turn
            assert re.findall(r"[a-z]+", turns[0].text.lower())[-4:] == ["what", "time", "is", "it"], turns[0].text
            assert first.status == "completed" and first.reply_text == "It is noon."
            assert app.wait_idle(30)
            # 2. A long reply; "stop" said while it plays, with no wake word, stops it.
            user.write(joined(silence(2.5), wake_story, silence(0.5)))
            recorder.wait_until(lambda: len(recorder.of(WakeDetected)) == 2, timeout_s=60)
            recorder.wait_until(lambda: any(e.turn_id > first.turn_id for e in recorder.of(FirstAudio)), timeout_s=60)
            story_turn = [e for e in recorder.of(FirstAudio) if e.turn_id > first.turn_id][0]
            # As a person does when the robot goes on, the user says it again (a new rendering
            # each time): on a loaded CPU Whisper tiny heard "Stop right now," said over the
            # robot as "Are stopping right now." (a whole-word matcher does not stop on that).
            for _attempt in range(3):
                user.write(joined(speak(tts, "Stop right now, please stop!", gain=1.0), silence(0.8)))
                with contextlib.suppress(AssertionError):
                    recorder.wait_for(Stopped, timeout_s=6)
                if recorder.of(Stopped):
                    break
            assert recorder.of(Stopped), timeline(recorder)
            stopped = recorder.of(Stopped)[0]
            done = recorder.wait_for(TurnDone, timeout_s=10, turn_id=story_turn.turn_id)
        finally:
            report = app.stop(10)
            user.stop()
        reinitialize_portaudio()
    assert report.clean, report
    assert done.status == "stopped", done
    assert len(recorder.of(WakeDetected)) == 2, "stop was heard without a wake word"
    stop_heard = [t for t in recorder.of(TranscriptEvent) if t.stop_phrase]
    assert stop_heard and stop_heard[0].stop_phrase == "stop"
    assert story_turn.turn_id in (stopped.cancelled_turns or [])
    assert len(done.spoken_text) < len(STORY) / 2, "the story was cut short"
