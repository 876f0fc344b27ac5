"""TimerWheel: one thread for many deadlines; no input and no callback can kill that thread."""

from __future__ import annotations

import math
import threading

import pytest

from edgevox.errors import LifecycleError
from edgevox.runtime.limits import MAX_DURATION_S
from edgevox.runtime.timers import TimerWheel


@pytest.fixture
def wheel():
    w = TimerWheel("test")
    yield w
    assert w.close(2.0) == []


@pytest.mark.parametrize("delay", [1e300, math.inf, -math.inf, math.nan, -1.0, MAX_DURATION_S * 2, "soon", True])
def test_call_later_rejects_a_delay_it_cannot_honour_naming_it(wheel, delay):
    with pytest.raises(ValueError, match=r"call_later: delay_s = .*: must be"):
        wheel.call_later(delay, lambda: None)
    assert wheel.pending() == 0


@pytest.mark.parametrize("deadline", [math.inf, math.nan, 1e300])
def test_call_at_rejects_a_deadline_it_cannot_honour(wheel, deadline):
    with pytest.raises(ValueError, match="call_at: deadline = "):
        wheel.call_at(deadline, lambda: None)


def test_a_far_deadline_never_blocks_an_earlier_one(wheel):
    fired = threading.Event()
    wheel.call_later(MAX_DURATION_S, lambda: None)  # the thread now waits for "a month", in short steps
    wheel.call_later(0.01, fired.set)
    assert fired.wait(5) and wheel.alive and wheel.pending() == 1


@pytest.mark.parametrize("exc", [RuntimeError("boom"), SystemExit(3), KeyboardInterrupt(), GeneratorExit()])
def test_a_callback_raising_anything_is_counted_and_the_thread_keeps_firing(exc):
    seen = []
    wheel = TimerWheel("raise", on_error=seen.append)
    fired = threading.Event()

    def bad():
        raise exc

    wheel.call_later(0.0, bad)
    wheel.call_later(0.01, fired.set)
    assert fired.wait(5)
    assert wheel.errors == 1 and seen == [exc] and wheel.alive
    assert wheel.close(2.0) == []


def test_a_raising_error_reporter_is_survived_too():
    def reporter(exc):
        raise SystemExit("reporter broke")

    wheel = TimerWheel("reporter", on_error=reporter)
    fired = threading.Event()
    wheel.call_later(0.0, lambda: 1 / 0)
    wheel.call_later(0.01, fired.set)
    assert fired.wait(5) and wheel.errors == 1
    assert wheel.close(2.0) == []


def test_close_from_many_threads_each_reports_the_truth():
    entered, release = threading.Event(), threading.Event()
    wheel = TimerWheel("busy")
    wheel.call_later(0.0, lambda: (entered.set(), release.wait(10)))
    assert entered.wait(5)
    first, second = wheel.close(0.05), wheel.close(0.05)  # the callback still runs: both say so
    assert first == second == ["edgevox-timer-busy"]
    release.set()
    assert wheel.close(5.0) == []
    with pytest.raises(LifecycleError, match="closed"):
        wheel.call_later(1.0, lambda: None)


def test_close_clamps_an_infinite_wait_and_rejects_nan(wheel):
    with pytest.raises(ValueError, match="close: timeout_s = nan"):
        wheel.close(math.nan)
    assert wheel.close(math.inf) == []
