"""The latency observer keeps a bounded record however long the robot runs (issue 25)."""

from __future__ import annotations

from edgevox.voice.events import Interrupted, Stopped, TurnDone
from edgevox.voice.latency import LatencyObserver


def test_barge_in_and_stop_figures_keep_only_the_newest_max_turns():
    obs = LatencyObserver(max_turns=10)
    for i in range(1, 31):
        obs.on_event(Interrupted(turn_id=i, audio_stop_s=i / 100))
        obs.on_event(Stopped(turn_id=i, cancel_s=i / 1000))
        obs.on_event(TurnDone(turn_id=i))
    assert list(obs.barge_in_s) == [i / 100 for i in range(21, 31)]
    assert list(obs.stop_s) == [i / 1000 for i in range(21, 31)]
    assert len(obs.turns()) == 10
    summary = obs.summary()
    assert summary["barge_in_audio_stop"]["n"] == 10
    assert summary["stop_cancel"]["max"] == 0.03
