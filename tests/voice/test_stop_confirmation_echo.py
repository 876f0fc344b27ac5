"""Under ``half_duplex`` the robot's own voice is still checked for a stop phrase, and Whisper
hears the echo of its confirmation "Stopped." as "Stop." often enough that every spoken stop
was followed by a second one. Here the STT hears "Stop." in the echo every time: the echo of
the confirmation stops nothing more when nothing runs, and still stops a skill that ignored
the first stop. (``test_stop_confirmation_pulseaudio`` plays the real thing.)"""

from __future__ import annotations

import numpy as np

from edgevox.testing import FakeAudioIn, FakeSTT, MemoryAudioOut
from edgevox.voice.events import SpeechStarted, Stopped, TranscriptEvent, TurnDone

from .test_loop import make_loop, start
from .voice_helpers import silence, tone


def heard_as_stop(audio: np.ndarray) -> str:
    """What Whisper made of the echo of "Stopped." in the runs that stopped twice."""
    return "Stop."


def stop_then_echo_of_the_confirmation(bus, recorder, loops, *, skill_obeys: bool):
    mic = FakeAudioIn()
    out = MemoryAudioOut(auto_play=False)  # the confirmation plays while the test says so
    loop, _ = make_loop(bus, stt=FakeSTT(heard_as_stop), audio_in=mic, audio_out=out, input_stall_s=None)
    start(loops, loop)
    skill = loop.activities.start("skill", "go_to")
    loop.submit_text("stop")  # (typed or spoken: the same safety stop)
    first = recorder.wait_for(Stopped)
    assert first.cancelled == ["skill go_to"]
    if skill_obeys:
        skill.finish()
    assert out.wait_for_queued(1, 5), "the confirmation was never written"
    # "Stopped." is playing: the microphone hears it back (75 blocks of 20 ms, and one more:
    # once that is read, the capture thread has handled all of the echo and its silence).
    mic.feed(np.concatenate([tone(0.5, amplitude=0.3), silence(1.0), silence(0.02)]))
    out.advance_s(0.05)  # the device has begun to play it
    recorder.wait_until(lambda: mic.blocks_read >= 76, timeout_s=5)
    out.auto_play = True  # the rest plays as it is written (a second confirmation too)
    out.advance(out.queued_samples)
    confirmation = recorder.wait_for(TurnDone, spoken_text="Stopped.")
    assert loop.wait_idle(5)  # whatever the echo became has been transcribed and acted on
    return loop, skill, confirmation


def test_the_echo_of_the_stop_confirmation_stops_nothing_when_nothing_runs(bus, recorder, loops):
    _, _, confirmation = stop_then_echo_of_the_confirmation(bus, recorder, loops, skill_obeys=True)
    assert len(recorder.of(Stopped)) == 1, [e.text for e in recorder.of(TranscriptEvent)]
    assert [e.text for e in recorder.of(TranscriptEvent)] == ["stop"]
    assert not [e for e in recorder.of(SpeechStarted) if e.during_playback], "the echo was announced as speech"
    assert confirmation.status == "completed"


def test_a_stop_heard_over_the_confirmation_still_stops_a_skill_that_ignored_the_first(bus, recorder, loops):
    stop_then_echo_of_the_confirmation(bus, recorder, loops, skill_obeys=False)
    stops = recorder.of(Stopped)
    assert len(stops) == 2 and stops[1].phrase == "stop" and stops[1].cancelled == ["skill go_to"]
