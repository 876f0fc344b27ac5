"""A capture thread that dies leaves the robot deaf (the spoken stop included): the loop must
say so and stop what runs instead of hanging."""

from __future__ import annotations

import statistics

import numpy as np

from edgevox.runtime.events import ErrorEvent, StopEvent
from edgevox.testing import FakeAudioIn, MemoryAudioOut
from edgevox.voice.events import CaptureFailed, Stopped
from edgevox.voice.loop import VoiceLoop
from edgevox.voice.wake import Wake

from .test_loop import make_loop
from .voice_helpers import tone


class BrokenDetector:
    """Fails as microWakeWord did with ``sliding_window_size: 0`` (the mean of no outputs)."""

    name = "broken"
    phrase = "Broken"
    sample_rate_hz = 16000

    def process(self, frame: np.ndarray) -> float | None:
        raise statistics.StatisticsError("mean requires at least one data point")

    def reset(self) -> None:
        pass


def test_a_capture_thread_that_dies_stops_what_runs_and_says_why_once(bus, recorder, loops):
    loop, _ = make_loop(bus, audio_in=FakeAudioIn(), audio_out=MemoryAudioOut())
    loop = VoiceLoop(
        bus, loop.vad, loop.stt, loop.agent, loop.tts, loop.audio_in, loop.audio_out, loop.settings,
        wake=Wake(BrokenDetector()),
    )  # fmt: skip
    loop.start()
    loops.append(loop)
    skill = loop.activities.start("skill", "go_to")  # a skill an earlier turn started: the robot moves
    loop.audio_in.feed(tone(0.1))
    failed = recorder.wait_for(CaptureFailed, timeout_s=5)
    assert failed.error == loop.failure
    assert failed.error.startswith("the voice loop's capture thread died (StatisticsError: mean requires")
    assert "\n" not in failed.error
    assert skill.token.cancelled, "the skill kept driving while nothing could hear a stop"
    stopped = recorder.wait_for(Stopped)
    assert stopped.cancelled == ["skill go_to"] and "no longer listened to" in stopped.reason
    assert recorder.wait_for(StopEvent).reason == stopped.reason  # the bridges stop the robot too
    assert [e.where for e in recorder.of(ErrorEvent)] == ["voice.capture"]  # with the traceback, for the log
    assert loop.wait_input_done(5), "a wait for the end of input would hang on a deaf loop"
    assert len(recorder.of(CaptureFailed)) == 1


def test_a_vad_that_raises_also_ends_listening_with_the_reason(bus, recorder, loops):
    class BrokenVAD:
        frame_ms = 20
        sample_rate_hz = 16000

        def is_speech(self, frame: np.ndarray) -> bool:
            raise RuntimeError("onnxruntime: invalid input shape")

    loop, agent = make_loop(bus)
    loop = VoiceLoop(bus, BrokenVAD(), loop.stt, agent, loop.tts, FakeAudioIn(), MemoryAudioOut(), loop.settings)
    loop.start()
    loops.append(loop)
    loop.audio_in.feed(tone(0.1))
    failed = recorder.wait_for(CaptureFailed, timeout_s=5)
    assert "RuntimeError: onnxruntime: invalid input shape" in failed.error


def test_a_normal_stop_is_not_a_capture_failure(bus, recorder):
    loop, _ = make_loop(bus)
    loop.start()
    loop.audio_in.feed(tone(0.1))
    assert loop.stop(5).clean
    assert loop.failure is None and recorder.of(CaptureFailed) == []
