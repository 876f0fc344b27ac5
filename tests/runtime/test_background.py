"""BackgroundAgent: triggering, OTP restart semantics, intensity windows, give-up, stop, overflow."""

from __future__ import annotations

import threading
import time

import pytest

from edgevox.errors import AgentError, LifecycleError
from edgevox.runtime.background import EXIT, AgentState, BackgroundAgent
from edgevox.runtime.context import AgentContext
from edgevox.runtime.debounce import debounce_trigger
from edgevox.runtime.events import InterruptEvent

from .conftest import Ping, Pong, RecordingAgent, StateLog


def crash_on(value):
    def behaviour(task, ctx):
        if task == value:
            raise RuntimeError(f"crash on {task}")
        return task

    return behaviour


def n_of(e):
    return e.n if isinstance(e, Ping) else None


@pytest.fixture
def log(bus):
    return StateLog(bus)


def start(bg, bus):
    bg.start(AgentContext(bus=bus), bus)
    return bg


def test_trigger_runs_the_agent_on_a_thread_named_after_it(bus):
    agent = RecordingAgent("worker")
    bg = start(BackgroundAgent(agent=agent, trigger=n_of, subscribe_to=Ping), bus)
    bus.publish(Pong(n=5))  # not subscribed
    bus.publish(Ping(n=1))
    assert agent.wait_for(1)
    assert agent.tasks == [1] and agent.threads[0].name == "edgevox-bg-worker"
    assert agent.ctxs[0].agent_name == "worker" and agent.ctxs[0].bus is bus
    assert bg.stop(2.0)
    assert bg.state is AgentState.STOPPED


def test_ignores_its_own_events_unless_include_own(bus):
    agent = RecordingAgent("echo", behaviour=lambda task, ctx: ctx.publish(Ping(n=task + 1)) if task < 3 else None)
    bg = start(BackgroundAgent(agent=agent, trigger=n_of, subscribe_to="*"), bus)
    bus.publish(Ping(n=0))
    assert agent.wait_for(1)
    assert bg.stop(2.0)
    assert agent.tasks == [0]  # its own Ping(n=1) did not trigger it

    agent2 = RecordingAgent("echo2", behaviour=lambda task, ctx: ctx.publish(Ping(n=task + 1)) if task < 3 else None)
    bg2 = start(BackgroundAgent(agent=agent2, trigger=n_of, include_own=True), bus)
    bus.publish(Ping(n=0))
    assert agent2.wait_for(4)
    assert bg2.stop(2.0)
    assert agent2.tasks == [0, 1, 2, 3]


def test_transient_restarts_after_a_crash_on_a_fresh_thread_with_fresh_state(bus, log):
    agent = RecordingAgent("t", behaviour=crash_on(1))
    bg = start(BackgroundAgent(agent=agent, trigger=n_of, restart="transient"), bus)
    bus.publish(Ping(n=1))
    assert log.wait_for("t", "restarting")
    bus.publish(Ping(n=2))
    assert agent.wait_for(2)
    assert bg.restart_count == 1 and isinstance(bg.last_error, RuntimeError)
    assert agent.threads[0] is not agent.threads[1]
    assert agent.ctxs[0].state is not agent.ctxs[1].state
    assert agent.ctxs[0].cancel_token is not agent.ctxs[1].cancel_token
    assert not agent.threads[0].is_alive() or agent.threads[0].join(2) is None
    assert bg.stop(2.0)


def test_transient_does_not_restart_after_a_clean_exit(bus, log):
    agent = RecordingAgent("t", behaviour=lambda task, ctx: EXIT)
    bg = start(BackgroundAgent(agent=agent, trigger=n_of, restart="transient"), bus)
    bus.publish(Ping(n=1))
    assert log.wait_for("t", "stopped")
    assert bg.state is AgentState.STOPPED and bg.restart_count == 0
    assert not [s for s in bus.subscriptions() if s.name == "bg-t"]  # unsubscribed
    assert bg.stop(2.0)


def test_permanent_restarts_even_after_a_clean_exit(bus, log):
    agent = RecordingAgent("p", behaviour=lambda task, ctx: EXIT)
    bg = start(BackgroundAgent(agent=agent, trigger=n_of, restart="permanent"), bus)
    bus.publish(Ping(n=1))
    assert log.wait_for("p", "restarting")
    bus.publish(Ping(n=2))
    assert agent.wait_for(2)
    assert bg.restart_count >= 1 and bg.last_error is None
    assert agent.threads[0] is not agent.threads[1]
    assert bg.stop(2.0)


def test_temporary_never_restarts(bus, log):
    agent = RecordingAgent("tmp", behaviour=crash_on(1))
    gave_up = []
    bg = BackgroundAgent(agent=agent, trigger=n_of, restart="temporary")
    bg.start(AgentContext(bus=bus), bus, on_give_up=lambda *a: gave_up.append(a))
    bus.publish(Ping(n=1))
    assert log.wait_for("tmp", "failed")
    assert bg.restart_count == 0 and bg.state is AgentState.FAILED and gave_up == []
    assert bg.stop(2.0)


def test_intensity_the_max_plus_first_restart_inside_the_window_gives_up(bus, log, clock):
    agent = RecordingAgent("w", behaviour=crash_on("boom"))
    gave_up = []
    bg = BackgroundAgent(
        agent=agent,
        trigger=lambda e: "boom",
        subscribe_to=Ping,
        restart="transient",
        max_restarts=2,
        restart_window_s=10.0,
        clock=clock,
    )
    bg.start(AgentContext(bus=bus), bus, on_give_up=lambda b, err: gave_up.append(err))
    for i, t in enumerate([0.0, 1.0]):
        clock.set(1000 + t)
        bus.publish(Ping())
        assert log.wait_for("w", "restarting", count=i + 1)
    clock.set(1000 + 9.999)  # still inside the 10 s window: the 3rd restart is one too many
    bus.publish(Ping())
    assert log.wait_for("w", "failed")
    assert bg.restart_count == 2 and bg.state is AgentState.FAILED
    assert len(gave_up) == 1 and isinstance(gave_up[0], RuntimeError)
    assert bg.stop(2.0)


def test_intensity_a_restart_exactly_one_window_later_no_longer_counts(bus, log, clock):
    agent = RecordingAgent("w", behaviour=crash_on("boom"))
    bg = BackgroundAgent(
        agent=agent, trigger=lambda e: "boom", subscribe_to=Ping, max_restarts=2, restart_window_s=10.0, clock=clock
    )
    bg.start(AgentContext(bus=bus), bus)
    for i, t in enumerate([0.0, 1.0, 10.0]):  # at 10.0 the restart at 0.0 has left the window
        clock.set(1000 + t)
        bus.publish(Ping())
        assert log.wait_for("w", "restarting", count=i + 1)
    assert bg.state is not AgentState.FAILED and bg.restart_count == 3
    clock.set(1000 + 10.5)  # restarts at 1.0, 10.0, 10.5 -> 3 > 2
    bus.publish(Ping())
    assert log.wait_for("w", "failed")
    assert bg.stop(2.0)


def test_giving_up_unsubscribes_publishes_and_stops_counting_drops(bus, log):
    agent = RecordingAgent("g", behaviour=crash_on(1))
    bg = start(BackgroundAgent(agent=agent, trigger=n_of, max_restarts=0, max_queue=1), bus)
    bus.publish(Ping(n=1))
    assert log.wait_for("g", "failed")
    assert not [s for s in bus.subscriptions() if s.name == "bg-g"]
    dropped = bg.dropped_events
    for n in range(100):
        bus.publish(Ping(n=n))
    assert bg.dropped_events == dropped and bg.queued == 0
    assert bg.stop(2.0)


def test_failed_start_attempts_count_toward_the_restart_budget(bus, log):
    builds = []

    def factory():
        builds.append(1)
        if len(builds) > 1:
            raise RuntimeError("cannot build")
        return RecordingAgent("f", behaviour=crash_on(1))

    gave_up = threading.Event()
    bg = BackgroundAgent(name="f", factory=factory, trigger=n_of, max_restarts=2)
    bg.start(AgentContext(bus=bus), bus, on_give_up=lambda *a: gave_up.set())
    bus.publish(Ping(n=1))  # crash -> restart -> build fails -> restart -> build fails -> give up
    assert gave_up.wait(5)
    assert len(builds) == 3 and bg.restart_count == 2 and "cannot build" in repr(bg.last_error)
    assert bg.stop(2.0)


def test_a_failing_first_start_raises_and_leaves_it_failed_and_unsubscribed(bus):
    def factory():
        raise RuntimeError("no model")

    bg = BackgroundAgent(name="x", factory=factory, trigger=n_of)
    with pytest.raises(AgentError, match="failed to start.*no model"):
        bg.start(AgentContext(bus=bus), bus)
    assert bg.state is AgentState.FAILED and not [s for s in bus.subscriptions() if s.name == "bg-x"]
    assert bg.stop(2.0)


def test_start_twice_is_a_lifecycle_error(bus):
    bg = start(BackgroundAgent(agent=RecordingAgent("s"), trigger=n_of), bus)
    with pytest.raises(LifecycleError, match="cannot start while RUNNING"):
        bg.start(AgentContext(bus=bus), bus)
    assert bg.stop(2.0)


@pytest.mark.parametrize("policy", ["drop_oldest", "drop_new"])
def test_dropped_events_is_exact_under_concurrent_publishers(bus, policy):
    entered, release = threading.Event(), threading.Event()

    def behaviour(task, ctx):
        if task == -1:
            entered.set()
            release.wait(10)
        return task

    agent = RecordingAgent("d", behaviour=behaviour)
    bg = start(BackgroundAgent(agent=agent, trigger=n_of, subscribe_to=Ping, max_queue=16, overflow=policy), bus)
    bus.publish(Ping(n=-1))
    assert entered.wait(5)  # the worker is busy: everything below queues or drops
    barrier = threading.Barrier(4)

    def publish(k):
        barrier.wait()
        for i in range(500):
            bus.publish(Ping(n=k * 1000 + i))

    threads = [threading.Thread(target=publish, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bg.dropped_events == 2000 - 16 and bg.queued == 16
    release.set()
    assert agent.wait_for(17)
    assert bg.stop(2.0)


def test_stop_cancels_the_in_flight_run_and_discards_queued_work(bus):
    entered = threading.Event()
    saw_cancel = []

    def long_run(task, ctx):
        if task == 0:
            entered.set()
            saw_cancel.append(ctx.cancel_token.wait(10))  # a long run that honours cancel
        return task

    agent = RecordingAgent("long", behaviour=long_run)
    bg = start(BackgroundAgent(agent=agent, trigger=n_of), bus)
    bus.publish(Ping(n=0))
    assert entered.wait(5)
    for n in range(1, 6):
        bus.publish(Ping(n=n))
    report = bg.stop(5.0)
    assert report and report.discarded == 5 and report.abandoned == []
    assert saw_cancel == [True] and agent.tasks == [0]
    assert bg.state is AgentState.STOPPED


def test_stop_with_drain_runs_the_queued_work_first(bus):
    entered, release = threading.Event(), threading.Event()

    def behaviour(task, ctx):
        if task == 0:
            entered.set()
            release.wait(10)
        return task

    agent = RecordingAgent("drain", behaviour=behaviour)
    bg = start(BackgroundAgent(agent=agent, trigger=n_of), bus)
    bus.publish(Ping(n=0))
    assert entered.wait(5)
    for n in range(1, 4):
        bus.publish(Ping(n=n))
    release.set()
    report = bg.stop(5.0, drain=True)
    assert report and report.discarded == 0 and agent.tasks == [0, 1, 2, 3]


def test_stop_reports_a_thread_it_had_to_abandon(bus):
    entered, release = threading.Event(), threading.Event()

    def stubborn(task, ctx):
        entered.set()
        release.wait(10)  # ignores the cancel token

    bg = start(BackgroundAgent(agent=RecordingAgent("stub", behaviour=stubborn), trigger=n_of), bus)
    bus.publish(Ping(n=0))
    assert entered.wait(5)
    report = bg.stop(0.05)
    assert not report and report.abandoned == ["edgevox-bg-stub"] and bg.abandoned_threads == ["edgevox-bg-stub"]
    assert bg.state is AgentState.STOPPED
    release.set()  # let it finish; its late exit must not restart anything
    bg.thread.join(5)
    assert bg.state is AgentState.STOPPED and bg.restart_count == 0


def test_control_events_overtake_queued_data_for_the_agent(bus):
    entered, release = threading.Event(), threading.Event()

    def behaviour(task, ctx):
        if task == 0:
            entered.set()
            release.wait(10)
        return task

    agent = RecordingAgent("c", behaviour=behaviour)
    trigger = lambda e: "interrupt" if isinstance(e, InterruptEvent) else n_of(e)  # noqa: E731
    bg = start(BackgroundAgent(agent=agent, trigger=trigger), bus)
    bus.publish(Ping(n=0))
    assert entered.wait(5)
    bus.publish(Ping(n=1))
    bus.publish(Ping(n=2))
    bus.publish(InterruptEvent())
    release.set()
    assert agent.wait_for(4)
    assert agent.tasks == [0, "interrupt", 1, 2]
    assert bg.stop(2.0)


def test_trailing_debounce_fires_the_final_state_on_the_agents_own_thread(bus):
    agent = RecordingAgent("deb")
    trig = debounce_trigger(n_of, interval_s=0.2, edge="trailing")
    bg = start(BackgroundAgent(agent=agent, trigger=trig, subscribe_to=Ping), bus)
    before = {t.name for t in threading.enumerate()}
    for n in range(20):
        bus.publish(Ping(n=n))
    assert agent.wait_for(1)
    assert agent.tasks == [19] and agent.threads[0].name == "edgevox-bg-deb"
    assert {t.name for t in threading.enumerate()} - before == set()  # no timer threads
    assert bg.stop(2.0)


def test_bad_options_are_rejected_with_the_value():
    with pytest.raises(ValueError, match="restart = 'sometimes'"):
        BackgroundAgent(agent=RecordingAgent(), trigger=n_of, restart="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="overflow = 'block'"):
        BackgroundAgent(agent=RecordingAgent(), trigger=n_of, overflow="block")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="exactly one"):
        BackgroundAgent(trigger=n_of)


# --- concurrent stops, anything raised by run(), durations that cannot work ------------------


def test_eight_concurrent_stops_finish_in_one_stops_time_and_all_report_the_truth(bus):
    entered = threading.Event()

    def finishing(task, ctx):
        entered.set()
        ctx.cancel_token.wait(10)
        threading.Event().wait(0.3)  # the run needs a moment to wind down after the cancel
        return task

    bg = start(BackgroundAgent(agent=RecordingAgent("w", behaviour=finishing), trigger=n_of), bus)
    bus.publish(Ping(n=0))
    assert entered.wait(5)
    barrier = threading.Barrier(8)
    reports = [None] * 8

    def stopper(i):
        barrier.wait(5)
        reports[i] = bg.stop(2.0)

    threads = [threading.Thread(target=stopper, args=(i,)) for i in range(8)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    elapsed = time.monotonic() - started
    # before: 14 s (each waiter joined while holding the lock the exiting worker needed), 8 false reports
    assert elapsed < 2.0, f"8 concurrent stops took {elapsed:.2f} s"
    assert all(r is not None and r.clean and r.abandoned == [] for r in reports), reports
    assert bg.abandoned_threads == [] and bg.state is AgentState.STOPPED and not bg.thread.is_alive()


def test_a_concurrent_stopper_with_a_shorter_deadline_is_told_what_still_runs(bus):
    entered, cancelled, release = threading.Event(), threading.Event(), threading.Event()

    def stubborn(task, ctx):
        entered.set()
        ctx.cancel_token.wait(10)
        cancelled.set()  # the first stop is under way
        release.wait(10)  # and this run ignores it until released

    bg = start(BackgroundAgent(agent=RecordingAgent("stub2", behaviour=stubborn), trigger=n_of), bus)
    bus.publish(Ping(n=0))
    assert entered.wait(5)
    first: list = []
    stopper = threading.Thread(target=lambda: first.append(bg.stop(5.0)))
    stopper.start()
    assert cancelled.wait(5)
    short = bg.stop(0.05)  # waits for the first stop, without holding anything the worker needs
    assert not short and short.abandoned == ["edgevox-bg-stub2"]
    release.set()
    stopper.join(5)
    assert first[0].clean and bg.state is AgentState.STOPPED


@pytest.mark.parametrize("exc", [SystemExit(1), KeyboardInterrupt(), GeneratorExit()])
def test_a_run_raising_any_base_exception_is_a_crash_the_policy_restarts(bus, log, exc):
    def behaviour(task, ctx):
        if task == 0:
            raise exc
        return task

    agent = RecordingAgent("exiter", behaviour=behaviour)
    bg = start(BackgroundAgent(agent=agent, trigger=n_of, subscribe_to=Ping), bus)
    bus.publish(Ping(n=0))
    assert log.wait_for("exiter", "restarting")
    bus.publish(Ping(n=1))
    assert agent.wait_for(2)
    assert bg.restart_count == 1 and isinstance(bg.last_error, type(exc)) and bg.state is AgentState.RUNNING
    assert bg.stop(2.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_queue": 0}, "max_queue = 0"),
        ({"max_queue": True}, "max_queue = True"),
        ({"max_restarts": -1}, "max_restarts = -1"),
        ({"restart_window_s": float("nan")}, "restart_window_s = nan"),
        ({"restart_window_s": float("inf")}, "restart_window_s = inf"),
        ({"restart_window_s": 0}, "restart_window_s = 0"),
        ({"start_timeout_s": 1e300}, "start_timeout_s = 1e[+]300"),
        ({"shutdown_timeout_s": -1.0}, "shutdown_timeout_s = -1.0"),
    ],
)
def test_sizes_and_durations_that_cannot_work_are_rejected_naming_them(kwargs, match):
    with pytest.raises(ValueError, match=f"BackgroundAgent 'rec': {match}: must be"):
        BackgroundAgent(agent=RecordingAgent(), trigger=n_of, **kwargs)


def test_stop_rejects_a_nan_timeout_and_clamps_an_infinite_one(bus):
    bg = start(BackgroundAgent(agent=RecordingAgent("inf"), trigger=n_of), bus)
    with pytest.raises(ValueError, match="stop: timeout_s = nan"):
        bg.stop(float("nan"))
    assert bg.stop(float("inf")) and bg.state is AgentState.STOPPED
