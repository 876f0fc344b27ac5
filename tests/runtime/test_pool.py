"""AgentPool: registry, run with make_ctx, background agents, stop_all, thread safety."""

from __future__ import annotations

import threading

import pytest

from edgevox.errors import LifecycleError
from edgevox.runtime.background import AgentState
from edgevox.runtime.pool import AgentPool

from .conftest import Ping, RecordingAgent, StateLog


@pytest.fixture
def pool():
    p = AgentPool()
    yield p
    assert p.close(2.0)


def test_register_get_names_and_duplicate_names_are_an_error(pool):
    a = pool.register(RecordingAgent("a"))
    pool.register(RecordingAgent("b"))
    assert pool.get("a") is a and pool.names() == ["a", "b"] and "a" in pool and len(pool) == 2
    with pytest.raises(ValueError, match="agent name 'a' is already registered"):
        pool.register(RecordingAgent("a"))
    with pytest.raises(KeyError, match="no agent named 'zz'; registered: \\['a', 'b'\\]"):
        pool.get("zz")
    with pytest.raises(TypeError, match="needs a non-empty str attribute 'name'"):
        pool.register(object())  # type: ignore[arg-type]


def test_register_is_thread_safe_exactly_one_of_many_racing_duplicates_wins(pool):
    wins, errors = [], []
    barrier = threading.Barrier(8)

    def reg():
        barrier.wait()
        try:
            pool.register(RecordingAgent("same"))
            wins.append(1)
        except ValueError:
            errors.append(1)

    threads = [threading.Thread(target=reg) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1 and len(errors) == 7


def test_run_uses_make_ctx_with_the_shared_bus_and_blackboard(pool):
    agent = pool.register(RecordingAgent("a"))
    assert pool.run("a", "task") == "task"
    ctx = agent.ctxs[0]
    assert ctx.bus is pool.bus and ctx.blackboard is pool.blackboard and ctx.agent_name == "a"
    assert agent.threads[0] is threading.current_thread()


def test_make_ctx_applies_defaults_and_overrides_and_fresh_tokens():
    p = AgentPool(ctx_defaults={"session_id": "kitchen", "deps": {"robot": 1}})
    c1, c2 = p.make_ctx(), p.make_ctx(turn_id=3)
    assert c1.session_id == "kitchen" and c1.deps == {"robot": 1} and c2.turn_id == 3
    assert c1.bus is p.bus and c1.blackboard is p.blackboard
    assert c1.cancel_token is not c2.cancel_token
    with pytest.raises(TypeError, match="unexpected keyword"):
        p.make_ctx(nonsense=1)
    assert p.close(2.0)


def test_start_background_runs_supervised_and_stop_background_stops_it(pool):
    agent = pool.register(RecordingAgent("bg"))
    bg = pool.start_background("bg", trigger=lambda e: e.n if isinstance(e, Ping) else None, max_queue=4)
    assert bg.state is AgentState.RUNNING and bg.max_queue == 4
    assert [c.name for c in pool.supervisor.which_children()] == ["bg"]
    pool.bus.publish(Ping(n=3))
    assert agent.wait_for(1) and agent.ctxs[0].blackboard is pool.blackboard
    with pytest.raises(ValueError, match="already runs in the background"):
        pool.start_background("bg", trigger=lambda e: None)
    assert pool.stop_background("bg")
    assert bg.state is AgentState.STOPPED and pool.background_names() == []


def test_stop_all_cancels_foreground_runs_and_stops_background_agents(pool):
    entered = threading.Event()
    result = []

    def long(task, ctx):
        entered.set()
        return ctx.cancel_token.wait(10)

    pool.register(RecordingAgent("fg", behaviour=long))
    pool.register(RecordingAgent("bg"))
    bg = pool.start_background("bg", trigger=lambda e: None)
    runner = threading.Thread(target=lambda: result.append(pool.run("fg", 1)))
    runner.start()
    assert entered.wait(5)
    report = pool.stop_all(2.0)
    runner.join(5)
    assert report and result == [True] and bg.state is AgentState.STOPPED


class _Gate:
    """An agent that blocks until released and records how many run at once."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.entered = threading.Semaphore(0)

    def run(self, task, ctx):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        self.entered.release()
        try:
            self.release.wait(5.0)
            return task
        finally:
            with self.lock:
                self.now -= 1


def test_max_concurrency_caps_runs_and_a_waiting_run_is_cancelled_by_stop_all():
    from edgevox.errors import Cancelled

    pool = AgentPool(max_concurrency=2)
    gate = pool.register(_Gate("g"))
    results, errors = [], []

    def call(i):
        try:
            results.append(pool.run("g", i))
        except Cancelled as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(i,), name=f"caller-{i}") for i in range(3)]
    for t in threads:
        t.start()
    assert gate.entered.acquire(timeout=5.0) and gate.entered.acquire(timeout=5.0)
    # Two are inside; the third waits for a slot. stop_all cancels the waiting one (and the
    # running ones' tokens, which this agent ignores until released).
    assert not gate.entered.acquire(timeout=0.2)
    pool.stop_all(1.0)
    gate.release.set()
    for t in threads:
        t.join(5.0)
    assert gate.peak == 2
    assert len(results) == 2 and len(errors) == 1
    # Slots are given back: a new run goes through.
    assert pool.run("g", "again") == "again"
    assert pool.close(2.0)


def test_max_concurrency_must_be_positive():
    with pytest.raises(ValueError, match=r"max_concurrency = 0: must be a whole number in \[1, "):
        AgentPool(max_concurrency=0)


def test_concurrent_stop_all_calls_each_wait_for_the_stops_and_report_the_truth(pool):
    entered, cancelled, release = threading.Event(), threading.Event(), threading.Event()

    def stubborn(task, ctx):
        entered.set()
        ctx.cancel_token.wait(10)
        cancelled.set()
        release.wait(10)

    pool.register(RecordingAgent("quick"))
    pool.register(RecordingAgent("slow", behaviour=stubborn))
    pool.start_background("slow", trigger=lambda e: 1 if isinstance(e, Ping) else None)
    pool.start_background("quick", trigger=lambda e: None)  # stopped first (reverse order)
    pool.bus.publish(Ping())
    assert entered.wait(5)
    first: list = []
    stopper = threading.Thread(target=lambda: first.append(pool.stop_all(5.0)))
    stopper.start()
    assert cancelled.wait(5)
    second = pool.stop_all(0.05)  # before: [] and "clean" at once, while 'slow' still ran
    assert not second and second.abandoned == ["edgevox-bg-slow"]
    release.set()
    stopper.join(5)
    assert first[0].clean and pool.background_names() == []


def test_stop_timeouts_reject_nan(pool):
    with pytest.raises(ValueError, match="stop_all: timeout_s = nan"):
        pool.stop_all(float("nan"))


def test_start_background_after_the_supervisor_gave_up_raises_saying_how_to_restart(pool):
    """Bug (issue 12): the agent was added to a FAILED supervisor and returned, never started."""
    log = StateLog(pool.bus)

    def crash(task, ctx):
        raise RuntimeError("sensor driver broke")

    pool.register(RecordingAgent("flaky", behaviour=crash))
    pool.register(RecordingAgent("late"))
    pool.start_background("flaky", trigger=lambda e: 1 if isinstance(e, Ping) else None, max_restarts=0)
    budget = pool.supervisor.max_restarts
    for started in range(1, budget + 2):  # each crash escalates; one more than the budget gives up
        assert log.wait_for("flaky", "running", count=started)
        pool.bus.publish(Ping())
    assert log.wait_for(pool.supervisor.name, "failed")

    with pytest.raises(LifecycleError) as caught:
        pool.start_background("late", trigger=lambda e: None)
    message = str(caught.value)
    assert "cannot start background agent 'late'" in message and "gave up" in message
    assert "sensor driver broke" in message and "pool.supervisor.start()" in message and "\n" not in message
    assert pool.background_names() == ["flaky"] and "late" not in pool.supervisor.child_names()

    pool.supervisor.start()  # the fix the message names: a fresh budget, 'flaky' restarted
    late = pool.start_background("late", trigger=lambda e: None)
    assert late.state is AgentState.RUNNING and pool.background("flaky").state is AgentState.RUNNING


def test_start_background_on_a_stopped_supervisor_raises_instead_of_never_starting(pool):
    pool.register(RecordingAgent("a"))
    pool.start_background("a", trigger=lambda e: None)
    assert pool.supervisor.stop(2.0)
    pool.register(RecordingAgent("b"))
    with pytest.raises(LifecycleError, match=r"supervisor 'pool' is stopped; start it with pool.supervisor.start\(\)"):
        pool.start_background("b", trigger=lambda e: None)


def test_every_stop_takes_edgevox_timeout_spelling_and_refuses_two_different_values(pool):
    pool.register(RecordingAgent("a"))
    pool.register(RecordingAgent("b"))
    pool.start_background("a", trigger=lambda e: None)
    pool.start_background("b", trigger=lambda e: None)
    assert pool.stop_background("a", timeout=2.0)
    with pytest.raises(TypeError, match="give timeout_s or timeout, not both"):
        pool.stop_all(1.0, timeout=2.0)
    assert pool.stop_all(timeout=2.0) and pool.background_names() == []
    assert pool.close(timeout=2.0)
