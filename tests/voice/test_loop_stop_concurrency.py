"""VoiceLoop.stop from several threads at once (a spoken stop, a ROS shutdown, the App): every
caller waits for the one real stop and is told the truth about the threads still running."""

from __future__ import annotations

import math
import threading

import pytest

from .test_loop import make_loop
from .voice_helpers import TextAgent

LOOP_THREADS = {
    "edgevox-voice-capture",
    "edgevox-voice-stt",
    "edgevox-voice-turn",
    "edgevox-voice-tts",
    "edgevox-voice-playback",
}


class Stubborn(TextAgent):
    """An agent whose turn ignores its cancel until released; ``cancelled`` tells when the stop began."""

    def __init__(self) -> None:
        self.entered, self.cancelled, self.release = threading.Event(), threading.Event(), threading.Event()

    def reply(self, task, ctx):
        self.entered.set()
        ctx.cancel_token.wait(10)
        self.cancelled.set()
        self.release.wait(10)
        yield "late"


def join_voice_threads() -> None:
    for t in threading.enumerate():
        if t.name.startswith("edgevox-voice"):
            t.join(5)


def test_a_second_stopper_is_never_told_clean_while_the_loops_threads_still_run(bus):
    agent = Stubborn()
    loop, _ = make_loop(bus, agent=agent)
    loop.start()
    loop.submit_text("go")
    assert agent.entered.wait(5)
    first: list = []
    stopper = threading.Thread(target=lambda: first.append(loop.stop(5.0)), name="first-stopper")
    stopper.start()
    assert agent.cancelled.wait(5)  # the first stop is under way and waits on the turn thread
    second = loop.stop(0.1)  # before: returned at once with an empty, "clean" report
    assert not second.clean and "edgevox-voice-turn" in second.abandoned
    agent.release.set()
    stopper.join(5)
    assert first[0].clean and first[0].cancelled_turns == [1]
    join_voice_threads()


def test_concurrent_stoppers_wait_for_the_one_stop_and_get_its_report(bus):
    agent = Stubborn()
    loop, _ = make_loop(bus, agent=agent)
    loop.start()
    loop.submit_text("go")
    assert agent.entered.wait(5)
    reports: list = []
    threads = [threading.Thread(target=lambda: reports.append(loop.stop(5.0))) for _ in range(4)]
    threads[0].start()
    assert agent.cancelled.wait(5)
    for t in threads[1:]:
        t.start()
    assert loop._stops.wait_for_waiters(3, 5.0)
    agent.release.set()
    for t in threads:
        t.join(5)
    assert len(reports) == 4 and all(r is reports[0] for r in reports)
    assert reports[0].clean and reports[0].cancelled_turns == [1]
    again = loop.stop(1.0)  # later: nothing left running, nothing new cancelled
    assert (
        again.clean
        and again.cancelled_turns == []
        and not LOOP_THREADS & {t.name for t in threading.enumerate() if t.is_alive()}
    )


def test_stop_rejects_a_nan_wait_and_clamps_an_infinite_one(bus):
    loop, _ = make_loop(bus)
    loop.start()
    with pytest.raises(ValueError, match="stop: timeout_s = nan"):
        loop.stop(math.nan)
    assert loop.running
    assert loop.stop(math.inf).clean and not loop.running


class _StopSeenLate(threading.Event):
    """A stop signalled between the playback thread's loop check and its wait: the first check
    misses it (as a thread preempted there would), every later one sees it."""

    def __init__(self) -> None:
        super().__init__()
        self.checks = 0

    def is_set(self) -> bool:
        self.checks += 1
        return self.checks > 1 and super().is_set()


def test_a_stop_signalled_before_the_playback_thread_waits_is_not_lost():
    from types import SimpleNamespace

    from edgevox.testing import FakeTTS
    from edgevox.voice.speaker import Speaker

    out = SimpleNamespace(sample_rate_hz=16000, played_samples=0)
    speaker = Speaker(FakeTTS(sample_rate_hz=16000), out, print, session_id="s", on_error=print)  # type: ignore[arg-type]
    late = _StopSeenLate()
    speaker._stopping = late
    speaker.signal_stop()  # sets it and notifies: before the watcher below waits
    watcher = threading.Thread(target=speaker._playback_watcher, name="edgevox-voice-playback")
    watcher.start()
    watcher.join(5.0)
    assert not watcher.is_alive(), "the playback thread waits for a notification that already came"
