"""The wake gate's rules on their own (no model): a scripted detector and explicit times."""

from __future__ import annotations

import numpy as np

from edgevox.runtime.events import Event
from edgevox.voice.events import WakeDetected, WakeWindowClosed
from edgevox.voice.segmenter import SegmentEnd, Segmenter, SegmenterSettings, SegmentStart
from edgevox.voice.wake import Wake, WakeGate, WakeSettings, WakeWordDetector


class ScriptedDetector:
    """Fires on frames whose first sample is 1.0; counts resets."""

    name = "scripted"
    phrase = "Hey Robot"
    sample_rate_hz = 16000

    def __init__(self) -> None:
        self.resets = 0
        self.frames = 0

    def process(self, frame: np.ndarray) -> float | None:
        self.frames += 1
        return 0.97 if frame[0] == 1.0 else None

    def reset(self) -> None:
        self.resets += 1


def gate(window_s: float = 2.0, stop_check: str = "while_active"):
    events: list[Event] = []
    detector = ScriptedDetector()
    assert isinstance(detector, WakeWordDetector)
    g = WakeGate(
        Wake(detector, WakeSettings(window_s=window_s, stop_check=stop_check)), events.append, clock=lambda: 0.0
    )
    return g, detector, events


QUIET = np.zeros(320, dtype=np.float32)
WAKE = np.concatenate([[1.0], np.zeros(319)]).astype(np.float32)


def test_asleep_until_the_wake_word_then_awake_for_the_window_after_it():
    g, detector, events = gate(window_s=2.0)
    assert not g.listening(0.0, busy=False)
    assert g.detect(QUIET, 0.0) is None and not g.awake
    heard = g.detect(WAKE, 123.0)
    assert isinstance(heard, WakeDetected) and heard.probability == 0.97 and heard.timestamp == 123.0
    assert events == [heard] and heard.phrase == "Hey Robot" and heard.window_s == 2.0
    assert g.listening(1.9, busy=False)
    assert not g.listening(2.0, busy=False)
    assert isinstance(events[-1], WakeWindowClosed) and events[-1].open_s == 2.0
    assert detector.resets == 1, "asleep again: the detector starts from fresh state"


def test_speech_a_turn_or_the_robot_speaking_keeps_the_window_open_and_restarts_it():
    g, _, events = gate(window_s=2.0)
    g.detect(WAKE, 0.0)
    for t in (1.0, 3.0, 5.0, 7.0):  # busy the whole time: never closes
        assert g.listening(t, busy=True)
    assert g.listening(8.9, busy=False), "the window runs from the last busy moment"
    assert not g.listening(9.0, busy=False)
    assert [type(e) for e in events] == [WakeDetected, WakeWindowClosed]


def test_the_robot_speaking_while_asleep_opens_a_window_for_a_follow_up():
    g, _, events = gate(window_s=1.0)
    assert g.listening(0.0, busy=True)  # e.g. an announcement from a background agent
    assert g.listening(0.9, busy=False)
    assert not g.listening(1.1, busy=False)
    assert [type(e) for e in events] == [WakeWindowClosed]


def test_asleep_stop_checks_run_while_something_runs_or_always():
    g, _, _ = gate()
    assert not g.checks_stops(something_running=False)
    assert g.checks_stops(something_running=True)
    always, _, _ = gate(stop_check="always")
    assert always.checks_stops(something_running=False)


def test_cutting_the_wake_words_utterance_keeps_its_end_as_the_next_ones_pre_roll():
    seg = Segmenter(SegmenterSettings(frame_ms=20, pre_roll_ms=100, min_speech_ms=40, end_silence_ms=100), 16000)
    frames = [np.full(320, i, dtype=np.float32) for i in range(1, 40)]
    start = [seg.process(f, True, i * 0.02) for i, f in enumerate(frames[:10])]
    assert any(isinstance(e, SegmentStart) for e in start) and seg.in_speech
    seg.cut(3)  # the wake word ended in frame 10: keep frames 8-10
    assert not seg.in_speech
    events = [seg.process(f, True, 1.0) for f in frames[10:12]]  # the command goes on
    assert isinstance(events[-1], SegmentStart)
    for f in frames[12:14]:
        seg.process(f, True, 1.0)
    end = None
    for _ in range(5):
        end = seg.process(np.zeros(320, dtype=np.float32), False, 2.0) or end
    assert isinstance(end, SegmentEnd)
    first_values = end.audio[::320][:5].tolist()
    assert first_values == [8.0, 9.0, 10.0, 11.0, 12.0], first_values
