"""RestartSupervisor: strategies, ordered start with rollback, reverse stop, intensity, escalation."""

from __future__ import annotations

import threading
import time

import pytest

from edgevox.errors import AgentError, LifecycleError
from edgevox.runtime.background import BackgroundAgent
from edgevox.runtime.bus import EventBus
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import ErrorEvent
from edgevox.runtime.lifecycle import StopReport
from edgevox.runtime.supervisor import ChildSpec, RestartSupervisor, SupervisorState

from .conftest import Ping, Pong, RecordingAgent, StateLog


class Journal:
    """An ordered log of start/stop calls that tests can wait on."""

    def __init__(self) -> None:
        self.entries: list[tuple] = []
        self.cond = threading.Condition()

    def add(self, *entry) -> None:
        with self.cond:
            self.entries.append(entry)
            self.cond.notify_all()

    def wait_len(self, n: int, timeout_s: float = 5.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.entries) >= n, timeout_s)

    def take(self) -> list[tuple]:
        with self.cond:
            out, self.entries = self.entries, []
            return out


class FakeChild:
    def __init__(self, name: str, journal: Journal, fail_starts: int = 0, shutdown_timeout_s: float = 5.0) -> None:
        self.name = name
        self.journal = journal
        self.fail_starts = fail_starts
        self.escalate = None
        self.state = "new"
        self.spec = ChildSpec(
            name, self.start, self.stop, shutdown_timeout_s=shutdown_timeout_s, describe=lambda: (self.state, 0)
        )

    def start(self, escalate) -> None:
        if self.fail_starts:
            self.fail_starts -= 1
            self.journal.add("start-failed", self.name)
            raise RuntimeError(f"{self.name} cannot start")
        self.escalate = escalate
        self.state = "running"
        self.journal.add("start", self.name)

    def stop(self, timeout_s: float) -> StopReport:
        self.state = "stopped"
        self.journal.add("stop", self.name, timeout_s)
        return StopReport()

    def crash(self) -> None:
        self.state = "failed"
        self.escalate(RuntimeError(f"{self.name} gave up"))


def make(strategy="one_for_one", names=("a", "b", "c"), clock=None, **kw):
    journal = Journal()
    sup = RestartSupervisor("sup", strategy=strategy, clock=clock or (lambda: 0.0), **kw)
    children = {n: FakeChild(n, journal) for n in names}
    for child in children.values():
        sup.add_child(child.spec)
    return sup, children, journal


def starts_stops(entries):
    return [(e[0], e[1]) for e in entries]


def test_ordered_start_and_reverse_order_stop_with_per_child_timeouts():
    journal = Journal()
    sup = RestartSupervisor("s")
    for name, t in (("a", 1.0), ("b", 2.0), ("c", 3.0)):
        sup.add_child(FakeChild(name, journal, shutdown_timeout_s=t).spec)
    sup.start()
    assert journal.take() == [("start", "a"), ("start", "b"), ("start", "c")]
    assert sup.stop()
    assert journal.take() == [("stop", "c", 3.0), ("stop", "b", 2.0), ("stop", "a", 1.0)]
    assert sup.state is SupervisorState.STOPPED


def test_a_child_that_fails_to_start_rolls_back_the_started_ones():
    journal = Journal()
    sup = RestartSupervisor("s")
    a, b, c = FakeChild("a", journal), FakeChild("b", journal, fail_starts=1), FakeChild("c", journal)
    for child in (a, b, c):
        sup.add_child(child.spec)
    with pytest.raises(AgentError, match="child 'b' failed to start.*rolled back \\['a'\\]"):
        sup.start()
    assert starts_stops(journal.take()) == [("start", "a"), ("start-failed", "b"), ("stop", "a")]
    assert sup.state is SupervisorState.NEW


def test_one_for_one_restarts_only_the_failed_child():
    sup, kids, journal = make("one_for_one")
    sup.start()
    journal.take()
    kids["b"].crash()
    assert journal.wait_len(2)
    assert starts_stops(journal.take()) == [("stop", "b"), ("start", "b")]
    assert sup.restart_count == 1
    assert sup.stop()


def test_one_for_all_restarts_every_child_stopping_in_reverse_and_starting_in_order():
    sup, kids, journal = make("one_for_all")
    sup.start()
    journal.take()
    kids["b"].crash()
    assert journal.wait_len(6)
    assert starts_stops(journal.take()) == [
        ("stop", "c"),
        ("stop", "b"),
        ("stop", "a"),
        ("start", "a"),
        ("start", "b"),
        ("start", "c"),
    ]
    assert sup.stop()


def test_rest_for_one_restarts_the_failed_child_and_the_ones_started_after_it():
    sup, kids, journal = make("rest_for_one")
    sup.start()
    journal.take()
    kids["b"].crash()
    assert journal.wait_len(4)
    assert starts_stops(journal.take()) == [("stop", "c"), ("stop", "b"), ("start", "b"), ("start", "c")]
    assert sup.stop()


def test_supervisor_intensity_gives_up_escalates_and_stops_children(clock):
    gave_up = []
    sup, kids, journal = make("one_for_one", clock=clock, max_restarts=2, restart_window_s=10.0)
    sup.start(on_give_up=gave_up.append)
    journal.take()
    for t in (0.0, 9.0):
        clock.set(1000 + t)
        kids["a"].crash()
        assert journal.wait_len(2)
        journal.take()
    clock.set(1000 + 9.999)
    kids["a"].crash()  # third restart inside 10 s: one too many
    assert journal.wait_len(3)
    sup._thread.join(5)
    assert starts_stops(journal.take()) == [("stop", "c"), ("stop", "b"), ("stop", "a")]
    assert sup.state is SupervisorState.FAILED and len(gave_up) == 1 and "a gave up" in str(gave_up[0])
    assert sup.restart_count == 2
    assert sup.stop()


def test_supervisor_window_edge_a_restart_exactly_one_window_later_is_allowed(clock):
    sup, kids, journal = make("one_for_one", names=("a",), clock=clock, max_restarts=1, restart_window_s=10.0)
    sup.start()
    journal.take()
    clock.set(1000.0)
    kids["a"].crash()
    assert journal.wait_len(2)
    journal.take()
    clock.set(1010.0)  # the first restart left the window at exactly 10 s
    kids["a"].crash()
    assert journal.wait_len(2)
    assert sup.state is SupervisorState.RUNNING and sup.restart_count == 2
    assert sup.stop()


def test_a_failed_restart_counts_toward_the_supervisor_budget(clock):
    gave_up = threading.Event()
    sup, kids, journal = make("one_for_one", names=("a",), clock=clock, max_restarts=2, restart_window_s=10.0)
    sup.start(on_give_up=lambda err: gave_up.set())
    kids["a"].fail_starts = 5
    kids["a"].crash()
    assert gave_up.wait(5)
    entries = starts_stops(journal.take())
    assert entries.count(("start-failed", "a")) == 2  # restart 1 and 2 fail; the 3rd is over budget
    assert sup.restart_count == 2
    assert sup.stop()


def test_escalation_reaches_the_parent_which_restarts_the_child_supervisor(clock):
    parent = RestartSupervisor("parent", max_restarts=5, restart_window_s=60.0)
    journal = Journal()
    child_sup = RestartSupervisor("child", max_restarts=0, restart_window_s=10.0, clock=clock)
    leaf = FakeChild("leaf", journal)
    child_sup.add_child(leaf.spec)
    parent.add_child(ChildSpec.for_supervisor(child_sup))
    parent.start()
    assert journal.take() == [("start", "leaf")]
    leaf.crash()  # child supervisor has no budget: gives up -> parent restarts it
    assert journal.wait_len(2)
    assert starts_stops(journal.take()) == [("stop", "leaf"), ("start", "leaf")]
    assert parent.restart_count == 1 and child_sup.state is SupervisorState.RUNNING
    assert [(c.name, c.state, c.kind) for c in parent.which_children()] == [("child", "running", "supervisor")]
    assert parent.stop()
    assert child_sup.state is SupervisorState.STOPPED


def test_which_children_lists_state_and_restarts_in_start_order(bus):
    sup = RestartSupervisor("s", bus=bus)
    bgs = [BackgroundAgent(agent=RecordingAgent(n), trigger=lambda e: None) for n in ("x", "y")]
    for bg in bgs:
        sup.add_child(ChildSpec.for_background(bg, AgentContext(bus=bus), bus))
    sup.start()
    assert [(c.name, c.state, c.restart_count) for c in sup.which_children()] == [
        ("x", "running", 0),
        ("y", "running", 0),
    ]
    assert sup.stop()
    assert [c.state for c in sup.which_children()] == ["stopped", "stopped"]


def test_background_agent_giving_up_is_restarted_fresh_by_its_supervisor(bus):
    log = StateLog(bus)
    agent = RecordingAgent("bgx", behaviour=lambda task, ctx: 1 / 0 if task == "boom" else task)
    bg = BackgroundAgent(agent=agent, trigger=lambda e: e.n if isinstance(e, Ping) else None, max_restarts=0)
    sup = RestartSupervisor("s", bus=bus)
    sup.add_child(ChildSpec.for_background(bg, AgentContext(bus=bus), bus))
    sup.start()
    bus.publish(Ping(n="boom"))
    assert log.wait_for("bgx", "failed")
    assert log.wait_for("bgx", "running", count=2)  # the supervisor started it again
    bus.publish(Ping(n=7))
    assert agent.wait_for(2) and agent.tasks[-1] == 7
    assert sup.restart_count == 1
    assert sup.stop()


def test_stale_escalations_are_ignored():
    sup, kids, journal = make("one_for_one", names=("a",))
    sup.start()
    old_escalate = kids["a"].escalate
    kids["a"].crash()
    assert journal.wait_len(3)  # start, stop, start
    journal.take()
    old_escalate(RuntimeError("from an old incarnation"))
    kids["a"].crash()  # a current one, processed after the stale one
    assert journal.wait_len(2)
    assert sup.restart_count == 2
    assert sup.stop()


def test_start_while_running_is_a_lifecycle_error():
    sup, _, _ = make()
    sup.start()
    with pytest.raises(LifecycleError, match="cannot start while RUNNING"):
        sup.start()
    assert sup.stop()


def test_adding_a_child_to_a_running_supervisor_starts_it_and_remove_stops_it():
    sup, kids, journal = make(names=("a",))
    sup.start()
    journal.take()
    late = FakeChild("late", journal)
    sup.add_child(late.spec)
    assert journal.take() == [("start", "late")]
    assert sup.remove_child("late", 1.5)
    (entry,) = journal.take()
    assert entry[:2] == ("stop", "late") and 1.4 < entry[2] <= 1.5  # what is left of its 1.5 s
    with pytest.raises(ValueError, match="already has a child named 'a'"):
        sup.add_child(FakeChild("a", journal).spec)
    assert sup.stop()


# --- stop deadlines during a restart, concurrent stops, bad durations ------------------------


def stuck_sibling_setup(strategy="one_for_all"):
    """A supervisor with a stuck child 'stuck' and a child 'crash' that escalates at once; the
    restart that follows waits on 'stuck' (its run ignores the cancel until ``release``)."""
    bus = EventBus("stuck-sibling")
    ctx = AgentContext(bus=bus)
    entered, cancelled, release = threading.Event(), threading.Event(), threading.Event()

    def stubborn(task, c):
        entered.set()
        c.cancel_token.wait(10)
        cancelled.set()  # the restart is stopping it now
        release.wait(10)

    stuck = BackgroundAgent(agent=RecordingAgent("stuck", behaviour=stubborn), trigger=lambda e: 1, subscribe_to=Ping)
    crash = BackgroundAgent(
        agent=RecordingAgent("crash", behaviour=lambda t, c: 1 / 0),
        trigger=lambda e: 1,
        subscribe_to=Pong,
        max_restarts=0,
    )
    sup = RestartSupervisor("sup", strategy=strategy, bus=bus)
    for bg in (stuck, crash):
        sup.add_child(ChildSpec.for_background(bg, ctx, bus))
    sup.start()
    bus.publish(Ping())
    assert entered.wait(5)  # 'stuck' is in its run
    bus.publish(Pong())  # 'crash' gives up -> the restart stops 'crash', then waits on 'stuck'
    assert cancelled.wait(5)
    return bus, sup, stuck, release


def test_stop_keeps_its_deadline_while_a_one_for_all_restart_waits_on_a_stuck_child():
    bus, sup, stuck, release = stuck_sibling_setup()
    started = time.monotonic()
    report = sup.stop(0.5)
    elapsed = time.monotonic() - started
    assert elapsed < 1.0, f"stop(0.5) took {elapsed:.2f} s"
    assert not report and "edgevox-bg-stuck" in report.abandoned and "edgevox-sup-sup" in report.abandoned
    release.set()
    sup.thread.join(5)
    stuck.thread.join(5)
    # the interrupted restart started nothing once the stop was requested
    assert sup.state is SupervisorState.STOPPED and stuck.state.value == "stopped"
    assert not sup.thread.is_alive() and not stuck.thread.is_alive()
    assert bus.close(2.0) == []


def test_remove_child_keeps_its_deadline_during_a_restart_and_the_restart_does_not_bring_it_back():
    bus, sup, stuck, release = stuck_sibling_setup()
    started = time.monotonic()
    report = sup.remove_child("stuck", 0.2)
    assert time.monotonic() - started < 1.0
    assert report.abandoned == ["edgevox-bg-stuck"] and sup.child_names() == ["crash"]
    release.set()
    stuck.thread.join(5)
    assert sup.stop(5.0)
    assert stuck.state.value == "stopped" and bus.close(2.0) == []


def test_concurrent_stops_share_one_stop_and_one_report():
    journal = Journal()
    entered, release = threading.Event(), threading.Event()

    def slow_stop(timeout_s):
        entered.set()
        release.wait(10)
        journal.add("stop", "slow")
        return StopReport()

    sup = RestartSupervisor("sup")
    sup.add_child(ChildSpec("slow", lambda escalate: None, slow_stop))
    sup.start()
    reports = []
    threads = [threading.Thread(target=lambda: reports.append(sup.stop(5.0))) for _ in range(4)]
    threads[0].start()
    assert entered.wait(5)
    for t in threads[1:]:
        t.start()
    assert sup._stops.wait_for_waiters(3, 5.0)
    release.set()
    for t in threads:
        t.join(5)
    assert journal.take() == [("stop", "slow")] and len(reports) == 4
    assert all(r is reports[0] and r.clean for r in reports)


def test_nothing_a_child_raises_while_restarting_ends_the_supervision_thread(clock):
    bus = EventBus("sup-errors")
    sup, kids, journal = make(names=("a",), clock=clock, bus=bus, max_restarts=5)

    def exiting_stop(timeout_s):
        raise SystemExit("stop broke")

    sup.start()
    kids["a"].spec.stop = exiting_stop
    kids["a"].crash()  # the restart's stop raises SystemExit on the supervision thread: counted
    kids["a"].spec.stop = kids["a"].stop
    assert journal.wait_len(2)  # ... and the restart still started 'a' again
    assert sup.thread.is_alive() and sup.restart_count == 1
    assert sup.stop(2.0) and bus.close(2.0) == []


def test_a_give_up_hook_raising_system_exit_is_reported_and_the_thread_survives(clock):
    bus = EventBus("give-up")
    errors = Journal()
    bus.subscribe(ErrorEvent, lambda e: errors.add(e))
    sup, kids, _ = make(names=("a",), clock=clock, bus=bus, max_restarts=0)

    def hook(error):
        raise SystemExit("the parent hook broke")

    sup.start(on_give_up=hook)
    kids["a"].crash()
    assert errors.wait_len(1)
    (event,) = errors.take()
    assert "supervision loop" in event[0].where and "SystemExit" in event[0].error
    assert sup.state is SupervisorState.FAILED and sup.thread.is_alive()
    assert sup.stop(2.0) and not sup.thread.is_alive() and bus.close(2.0) == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_restarts": -1}, "max_restarts = -1"),
        ({"max_restarts": 2.5}, "max_restarts = 2.5"),
        ({"restart_window_s": float("nan")}, "restart_window_s = nan"),
        ({"restart_window_s": float("inf")}, "restart_window_s = inf"),
        ({"restart_window_s": 0}, "restart_window_s = 0"),
    ],
)
def test_supervisor_options_that_cannot_work_are_rejected_naming_them(kwargs, match):
    with pytest.raises(ValueError, match=f"RestartSupervisor 'x': {match}: must be"):
        RestartSupervisor("x", **kwargs)


def test_child_spec_shutdown_timeouts_are_checked_and_stop_timeouts_clamped():
    with pytest.raises(ValueError, match="ChildSpec 'c': shutdown_timeout_s = inf"):
        ChildSpec("c", lambda e: None, lambda t: StopReport(), shutdown_timeout_s=float("inf"))
    sup, _, journal = make(names=("a",))
    sup.start()
    with pytest.raises(ValueError, match="stop: timeout_s = nan"):
        sup.stop(float("nan"))
    assert sup.stop(float("inf"))
    assert journal.take()[-1][:2] == ("stop", "a")
