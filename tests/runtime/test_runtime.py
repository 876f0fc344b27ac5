"""Runtime: lifecycle, isolation between runtimes, clean and unclean stop reports."""

from __future__ import annotations

import threading
import time

import pytest

from edgevox.errors import LifecycleError
from edgevox.runtime.events import AgentStateEvent, ErrorEvent, ShutdownEvent
from edgevox.runtime.runtime import Runtime, RuntimeState

from .conftest import Ping, RecordingAgent, StateLog


def test_start_and_stop_report_clean_and_leave_no_threads():
    rt = Runtime("r")
    rt.pool.register(RecordingAgent("a"))
    rt.pool.start_background("a", trigger=lambda e: None)  # added before start: starts with the runtime
    shutdown = []
    rt.bus.subscribe(ShutdownEvent, shutdown.append)
    assert rt.start() is rt and rt.state is RuntimeState.RUNNING
    assert rt.pool.background("a").state.value == "running"
    report = rt.stop(2.0)
    assert report and report.clean and report.abandoned == [] and len(shutdown) == 1
    assert rt.state is RuntimeState.STOPPED
    assert rt.stop(2.0) is report  # idempotent


def test_illegal_transitions_raise_lifecycle_errors_with_the_fix():
    rt = Runtime("r")
    rt.start()
    with pytest.raises(LifecycleError, match="cannot start while RUNNING"):
        rt.start()
    rt.stop()
    with pytest.raises(LifecycleError, match="create a new Runtime"):
        rt.start()


def test_stop_without_start_releases_resources():
    rt = Runtime("r")
    assert rt.stop(1.0) and rt.state is RuntimeState.STOPPED and rt.bus.closed


def test_two_runtimes_in_one_process_do_not_see_each_other():
    with Runtime("one") as r1, Runtime("two") as r2:
        seen1, seen2 = [], []
        r1.bus.subscribe(Ping, seen1.append)
        r2.bus.subscribe(Ping, seen2.append)
        r1.bus.publish(Ping(n=1))
        r1.blackboard.set("k", 1)
        assert seen2 == [] and r2.blackboard.get("k") is None and len(seen1) == 1
        r1.pool.register(RecordingAgent("a"))
        r2.pool.register(RecordingAgent("a"))  # same name, different pools
        assert r1.pool.get("a") is not r2.pool.get("a")


def test_stop_reports_an_abandoned_background_thread():
    entered, release = threading.Event(), threading.Event()

    def stubborn(task, ctx):
        entered.set()
        release.wait(10)

    rt = Runtime("r")
    rt.pool.register(RecordingAgent("stuck", behaviour=stubborn))
    rt.start()
    rt.pool.start_background("stuck", trigger=lambda e: 1 if isinstance(e, Ping) else None, shutdown_timeout_s=0.05)
    rt.bus.publish(Ping())
    assert entered.wait(5)
    report = rt.stop(1.0)
    assert not report and report.abandoned == ["edgevox-bg-stuck"]
    release.set()


def test_root_supervisor_giving_up_marks_the_runtime_failed():
    rt = Runtime("r", max_restarts=0)
    log = StateLog(rt.bus)
    rt.pool.register(RecordingAgent("bad", behaviour=lambda t, c: 1 / 0))
    rt.start()
    rt.pool.start_background("bad", trigger=lambda e: 1 if isinstance(e, Ping) else None, max_restarts=0)
    errors = []
    rt.bus.subscribe(ErrorEvent, errors.append)
    rt.bus.publish(Ping())
    assert log.wait_for("r", "failed")
    rt.supervisor._thread.join(5)
    assert rt.state is RuntimeState.FAILED and isinstance(rt.failure, ZeroDivisionError)
    assert any("ZeroDivisionError" in e.error for e in errors)
    assert rt.stop(2.0)


def test_watcher_errors_become_error_events():
    with Runtime("r") as rt:
        errors = []
        rt.bus.subscribe(ErrorEvent, errors.append)
        rt.blackboard.watch("k", lambda *a: 1 / 0)
        rt.blackboard.set("k", 1)
        assert errors and "ZeroDivisionError" in errors[0].traceback


def test_agent_state_events_are_published_for_background_agents():
    with Runtime("r") as rt:
        states = []
        rt.bus.subscribe(AgentStateEvent, lambda e: states.append((e.agent, e.state)))
        rt.pool.register(RecordingAgent("a"))
        rt.pool.start_background("a", trigger=lambda e: None)
        rt.pool.stop_background("a")
        assert ("a", "running") in states and ("a", "stopped") in states


# --- stop deadlines, concurrent stops, bad waits ------------------------------------------------


def test_stop_keeps_its_deadline_while_a_one_for_all_restart_waits_on_a_stuck_sibling():
    entered, cancelled, release = threading.Event(), threading.Event(), threading.Event()

    def stubborn(task, ctx):
        entered.set()
        ctx.cancel_token.wait(10)
        cancelled.set()  # the restart is stopping it now
        release.wait(10)  # ... and it ignores that until released

    rt = Runtime("r", strategy="one_for_all")
    rt.pool.register(RecordingAgent("stuck", behaviour=stubborn))
    rt.pool.register(RecordingAgent("crash", behaviour=lambda t, c: 1 / 0))
    rt.start()
    rt.pool.start_background("stuck", trigger=lambda e: 1 if isinstance(e, Ping) and e.n == 1 else None)
    rt.pool.start_background("crash", trigger=lambda e: 1 if isinstance(e, Ping) and e.n == 2 else None, max_restarts=0)
    rt.bus.publish(Ping(n=1))
    assert entered.wait(5)
    rt.bus.publish(Ping(n=2))  # 'crash' gives up: the one_for_all restart waits on 'stuck' (5 s timeout)
    assert cancelled.wait(5)
    started = time.monotonic()
    report = rt.stop(1.0)
    elapsed = time.monotonic() - started
    # before: 2.7-4.7 s (the supervisor held its lock while the restart waited on 'stuck')
    assert elapsed < 1.5, f"stop(1.0) took {elapsed:.2f} s"
    assert not report and "edgevox-bg-stuck" in report.abandoned
    assert rt.state is RuntimeState.STOPPED
    release.set()
    rt.supervisor.thread.join(5)  # the interrupted restart ends without starting anything
    assert rt.pool.background_names() == [] and rt.supervisor.which_children() == []


def test_concurrent_stops_wait_for_the_one_stop_and_get_the_same_report():
    entered, cancelled, release = threading.Event(), threading.Event(), threading.Event()

    def stubborn(task, ctx):
        entered.set()
        ctx.cancel_token.wait(10)
        cancelled.set()
        release.wait(10)

    rt = Runtime("r")
    rt.pool.register(RecordingAgent("slow", behaviour=stubborn))
    rt.start()
    rt.pool.start_background("slow", trigger=lambda e: 1 if isinstance(e, Ping) else None)
    rt.bus.publish(Ping())
    assert entered.wait(5)
    reports = []
    first = threading.Thread(target=lambda: reports.append(rt.stop(5.0)))
    first.start()
    assert cancelled.wait(5)
    short = rt.stop(0.05)  # its deadline comes first: told what still runs, never "clean"
    assert not short and "edgevox-bg-slow" in short.abandoned
    others = [threading.Thread(target=lambda: reports.append(rt.stop(5.0))) for _ in range(3)]
    for t in others:
        t.start()
    assert rt._stops.wait_for_waiters(3, 5.0)
    release.set()
    for t in [first, *others]:
        t.join(5)
    assert len(reports) == 4 and all(r is reports[0] for r in reports) and reports[0].clean
    assert rt.stop(1.0) is reports[0]


def test_stop_and_safety_stop_reject_nan_and_clamp_an_infinite_wait():
    rt = Runtime("r")
    rt.start()
    with pytest.raises(ValueError, match="safety_stop: grace_s = nan"):
        rt.safety_stop(grace_s=float("nan"))
    with pytest.raises(ValueError, match="stop: timeout_s = nan"):
        rt.stop(float("nan"))
    assert rt.state is RuntimeState.RUNNING
    assert rt.stop(float("inf"))
