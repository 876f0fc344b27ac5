"""SharedStop: one stop at a time, every concurrent caller waits for it and gets its report."""

from __future__ import annotations

import threading
import time

from edgevox.runtime.lifecycle import SharedStop, StopReport


class SlowStop:
    """A stop that runs until released; counts how often it really ran."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.runs = 0

    def __call__(self, deadline):
        self.runs += 1
        self.entered.set()
        assert self.release.wait(10)
        return StopReport(discarded=self.runs)


def test_concurrent_callers_wait_for_the_one_stop_and_get_the_same_report():
    shared = SharedStop(lambda: StopReport.abandoned_threads(["still-running"]))
    stop = SlowStop()
    results: list[StopReport] = []
    first = threading.Thread(target=lambda: results.append(shared.run(5.0, stop)), name="stopper-0")
    first.start()
    assert stop.entered.wait(5)
    others = [
        threading.Thread(target=lambda: results.append(shared.run(5.0, stop)), name=f"stopper-{i}") for i in range(1, 8)
    ]
    for t in others:
        t.start()
    assert shared.wait_for_waiters(7, 5.0) and shared.waiting == 7
    stop.release.set()
    for t in [first, *others]:
        t.join(5)
    assert stop.runs == 1 and len(results) == 8
    assert all(r is results[0] for r in results) and results[0].clean


def test_a_waiter_whose_deadline_comes_first_gets_what_is_still_running():
    shared = SharedStop(lambda: StopReport.abandoned_threads(["edgevox-worker"]))
    stop = SlowStop()
    first = threading.Thread(target=shared.run, args=(5.0, stop))
    first.start()
    assert stop.entered.wait(5)
    started = time.monotonic()
    report = shared.run(0.05, stop)
    assert time.monotonic() - started < 2.0
    assert not report and report.abandoned == ["edgevox-worker"] and stop.runs == 1
    stop.release.set()
    first.join(5)


def test_after_a_stop_ended_the_next_call_runs_a_new_one():
    shared = SharedStop(lambda: StopReport(clean=False))
    calls = []
    assert shared.run(1.0, lambda d: calls.append(d) or StopReport())
    assert shared.run(None, lambda d: calls.append(d) or StopReport())
    assert len(calls) == 2 and calls[1] is None and not shared.in_progress


def test_a_stop_that_raises_releases_its_waiters_with_a_report_of_what_still_runs():
    shared = SharedStop(lambda: StopReport.abandoned_threads(["left"]))
    entered, release = threading.Event(), threading.Event()

    def broken(deadline):
        entered.set()
        release.wait(10)
        raise RuntimeError("stop broke")

    errors = []

    def first():
        try:
            shared.run(5.0, broken)
        except RuntimeError as exc:
            errors.append(exc)

    t = threading.Thread(target=first)
    t.start()
    assert entered.wait(5)
    reports = []
    waiter = threading.Thread(target=lambda: reports.append(shared.run(5.0, broken)))
    waiter.start()
    assert shared.wait_for_waiters(1, 5.0)
    release.set()
    t.join(5)
    waiter.join(5)
    assert errors and reports[0].abandoned == ["left"] and not shared.in_progress


def test_a_stop_re_entered_from_inside_itself_does_not_wait_for_itself():
    shared = SharedStop(lambda: StopReport.abandoned_threads(["in progress"]))
    inner = []

    def stop(deadline):
        inner.append(shared.run(5.0, stop))  # e.g. a handler the stop triggers calls stop() again
        return StopReport()

    started = time.monotonic()
    assert shared.run(5.0, stop) and inner[0].abandoned == ["in progress"]
    assert time.monotonic() - started < 1.0
