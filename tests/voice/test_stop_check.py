"""The spoken stop check (``edgevox.voice.stop_check``) in the running loop, with the fakes of
``edgevox.testing`` (no models, no sound card, no sleeps): the stop on a pause's transcript, and
the second listen (beam search) for short utterances heard while the robot talks or acts."""

from __future__ import annotations

import numpy as np

from edgevox.engines.base import AlternativeHypotheses
from edgevox.testing import FakeAudioIn, FakeSTT, MemoryAudioOut
from edgevox.voice.events import FirstAudio, Stopped, TranscriptEvent, TurnDone, TurnStarted
from edgevox.voice.stop_check import StopCheck
from edgevox.voice.stop_phrases import StopPhraseMatcher

from .test_loop import make_loop, start
from .voice_helpers import silence, tone


class BeamSTT(FakeSTT):
    """A FakeSTT whose greedy transcript is ``greedy`` and whose beam search lists ``beams``."""

    def __init__(self, greedy: str, beams: list[tuple[str, float]]) -> None:
        super().__init__(lambda audio: greedy)
        self.beams = beams
        self.beam_calls = 0

    def alternatives(self, audio: np.ndarray, n: int = 5) -> list[tuple[str, float]]:
        self.beam_calls += 1
        return self.beams[:n]


def _robot_talking(bus, recorder, loops, stt, **settings):
    out = MemoryAudioOut(auto_play=False)
    mic = FakeAudioIn()
    loop, _ = make_loop(bus, audio_out=out, audio_in=mic, stt=stt, **settings)
    start(loops, loop)
    loop.submit_text("talk")
    assert out.first_write.wait(5)
    out.advance(1)
    recorder.wait_for(FirstAudio, turn_id=1)
    return loop, mic, out


def _stopped_by_what_is_said_over_the_robot(bus, recorder, loops, stt) -> Stopped:
    """The robot talks; the user says something short over it; the reply is stopped."""
    loop, mic, out = _robot_talking(bus, recorder, loops, stt, echo_guard="off", barge_in=False)
    mic.feed(np.concatenate([tone(0.4, amplitude=0.5), silence(0.6)]))
    stopped = recorder.wait_for(Stopped)
    assert recorder.wait_for(TurnDone, turn_id=1).status == "stopped"
    return stopped


def test_a_short_utterance_over_the_robot_is_heard_again_and_the_best_beam_stops_it(bus, recorder, loops):
    stt = BeamSTT("Scott.", [("Stop.", -0.2), ("Scott.", -0.3)])
    stopped = _stopped_by_what_is_said_over_the_robot(bus, recorder, loops, stt)
    assert stopped.phrase == "stop" and stopped.text == "Stop."
    assert stt.beam_calls == 1


def test_a_stop_further_down_the_beam_does_not_count(bus, recorder, loops):
    stt = BeamSTT("Stock.", [("Stock.", -0.2), ("Stop.", -0.25)])
    loop, mic, out = _robot_talking(bus, recorder, loops, stt, echo_guard="off", barge_in=False)
    mic.feed(np.concatenate([tone(0.4, amplitude=0.5), silence(0.6)]))
    recorder.wait_for(TranscriptEvent, text="Stock.")  # an ordinary turn, queued after the reply
    assert not recorder.of(Stopped) and stt.beam_calls == 1


def test_nothing_running_means_one_listen(bus, recorder, loops):
    stt = BeamSTT("Scott.", [("Stop.", -0.2)])
    loop, _ = make_loop(bus, audio_in=(mic := FakeAudioIn()), stt=stt, echo_guard="off")
    start(loops, loop)
    mic.feed(np.concatenate([tone(0.4, amplitude=0.5), silence(0.6)]))
    recorder.wait_for(TurnStarted, text="Scott.")
    assert loop.wait_idle(5)
    assert not recorder.of(Stopped) and stt.beam_calls == 0


def test_the_robots_own_echo_under_half_duplex_gets_one_listen(bus, recorder, loops):
    """Half-duplex marks speech over the reply as the robot's echo: its own "Stopped." must not
    stop it again through a beam that reads "Stop."."""
    stt = BeamSTT("Stopped.", [("Stop.", -0.1)])
    loop, mic, out = _robot_talking(bus, recorder, loops, stt, echo_guard="half_duplex")
    mic.feed(np.concatenate([tone(0.4, amplitude=0.5), silence(0.6)]))
    recorder.wait_for(TranscriptEvent, text="Stopped.")
    assert not recorder.of(Stopped) and stt.beam_calls == 0


def test_a_stop_on_the_pause_transcript_does_not_wait_for_the_endpoint(bus, recorder, loops):
    """80 ms of silence is a pause (speculative STT) but not an end (300 ms): the stop comes from
    the pause's transcript, and the final transcript of the same utterance stops nothing twice."""
    stt = FakeSTT(lambda audio: "Stop!")
    # No spoken confirmation: once stopped, nothing plays and the loop can go idle.
    loop, mic, out = _robot_talking(bus, recorder, loops, stt, echo_guard="off", barge_in=False, stop_confirmation="")
    mic.feed(np.concatenate([tone(0.3, amplitude=0.5), silence(0.08)]))
    stopped = recorder.wait_for(Stopped)
    heard = recorder.of(TranscriptEvent, stop_phrase="stop")
    assert heard and heard[0].speculative, heard
    mic.feed(silence(0.6))  # now the utterance ends
    recorder.wait_until(lambda: len(recorder.of(TranscriptEvent, stop_phrase="stop")) == 2)
    assert loop.wait_idle(5)
    assert len(recorder.of(Stopped)) == 1 and stopped.phrase == "stop"


def test_the_check_describes_itself_and_only_reads_short_audio():
    class Beams:
        sample_rate_hz = 16000

        def transcribe(self, audio, *, vocabulary=()):
            raise AssertionError("not called")

        def alternatives(self, audio, n=5):
            return [("halt", -0.1)]

    stt = Beams()
    assert isinstance(stt, AlternativeHypotheses)
    check = StopCheck(StopPhraseMatcher(), stt, max_s=2.0)
    assert check.listen_again(np.zeros(16000, dtype=np.float32)) == ("halt", "halt")
    assert check.listen_again(np.zeros(3 * 16000, dtype=np.float32)) is None  # a request, not a stop
    assert "5-beam search" in check.describe() and "'stop'" in check.describe()
    plain = StopCheck(StopPhraseMatcher(), FakeSTT())
    assert not plain.second_listen and "beam" not in plain.describe()
    assert plain.listen_again(np.zeros(16000, dtype=np.float32)) is None


def test_over_the_robot_a_stop_words_present_tense_stops_without_decoding_again(bus, recorder, loops):
    """Whisper wrote "Are stopping right now." for "Stop right now" said over the robot."""
    stt = BeamSTT("Are stopping right now.", [("Are stopping right now.", -0.2)])
    stopped = _stopped_by_what_is_said_over_the_robot(bus, recorder, loops, stt)
    assert stopped.phrase == "stop" and stopped.text == "Are stopping right now."
    assert stt.beam_calls == 0
    assert recorder.of(TranscriptEvent, text="Are stopping right now.")[0].stop_phrase == "stop"


def test_with_nothing_running_a_present_tense_is_an_ordinary_turn(bus, recorder, loops):
    stt = BeamSTT("The bus stops here.", [])
    loop, _ = make_loop(bus, audio_in=(mic := FakeAudioIn()), stt=stt, echo_guard="off")
    start(loops, loop)
    mic.feed(np.concatenate([tone(0.4, amplitude=0.5), silence(0.6)]))
    recorder.wait_for(TurnStarted, text="The bus stops here.")
    assert loop.wait_idle(5)
    assert not recorder.of(Stopped)


def test_the_linear_stage_is_heard_when_the_cancellers_output_holds_no_stop():
    """With echo cancellation the second listen also decodes the canceller's linear stage
    (AEC3's suppressor can take the first sounds of "stop" for echo); only when the cleaned
    audio's best beam holds no stop, and its own best beam still has to hold one."""

    class TwoSignals:
        sample_rate_hz = 16000

        def __init__(self, best: dict[float, str]) -> None:
            self.best = best
            self.decoded: list[float] = []

        def transcribe(self, audio, *, vocabulary=()):
            raise AssertionError("not called")

        def alternatives(self, audio, n=5):
            self.decoded.append(float(audio[0]))
            return [(self.best[float(audio[0])], -0.1), ("Stop.", -0.2)]

    cleaned, linear = np.full(8000, 0.25, np.float32), np.full(8000, 0.5, np.float32)
    stt = TwoSignals({0.25: "Up.", 0.5: "Stop."})
    assert StopCheck(StopPhraseMatcher(), stt).listen_again(cleaned, linear) == ("Stop.", "stop")
    assert stt.decoded == [0.25, 0.5]
    stt = TwoSignals({0.25: "Stop right now.", 0.5: "Up."})
    assert StopCheck(StopPhraseMatcher(), stt).listen_again(cleaned, linear) == ("Stop right now.", "stop")
    assert stt.decoded == [0.25]  # a stop in the cleaned audio: the linear stage is not decoded
    stt = TwoSignals({0.25: "Up.", 0.5: "Stock."})
    assert StopCheck(StopPhraseMatcher(), stt).listen_again(cleaned, linear) is None
    assert StopCheck(StopPhraseMatcher(), stt).listen_again(cleaned) is None  # no canceller: one signal
    heard = "Are stopping right now."  # the first transcript, tolerantly: nothing decoded again
    stt = TwoSignals({})
    assert StopCheck(StopPhraseMatcher(), stt).listen_again(cleaned, linear, heard=heard) == (heard, "stop")
    assert stt.decoded == []
    long = np.full(3 * 16000, 0.25, np.float32)  # a request, not a stop: not even tolerantly
    assert StopCheck(StopPhraseMatcher(), stt).listen_again(long, heard=heard) is None


def test_with_the_spoken_stop_off_a_stop_word_is_an_ordinary_turn(bus, recorder, loops):
    """``safety.enabled: false`` builds the loop with no stop phrases: it starts (it used to
    raise in StopPhraseMatcher), "stop" is a request like any other, and check says it is off."""
    stt = BeamSTT("Stop.", [("Stop.", -0.1)])
    loop, mic, out = _robot_talking(bus, recorder, loops, stt, echo_guard="off", barge_in=False, stop_phrases=())
    assert loop.stop_check.describe().startswith("off")
    mic.feed(np.concatenate([tone(0.4, amplitude=0.5), silence(0.6)]))
    recorder.wait_for(TranscriptEvent, text="Stop.")  # an ordinary turn, queued after the reply
    assert not recorder.of(Stopped) and stt.beam_calls == 0
