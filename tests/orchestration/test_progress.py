"""Long orchestration turns: heartbeat events at an interval, "still working" said once, and at
the overall timeout an answer with what was finished. Time is a fake clock driven by the test."""

from __future__ import annotations

import threading

import pytest

from edgevox.errors import ArgumentError
from edgevox.orchestration import Coordinator, Immediate, Orchestration, build_orchestration
from edgevox.orchestration.events import OrchestrationProgress, OrchestrationTimedOut, TurnAnswered
from edgevox.runtime.context import AgentContext
from edgevox.runtime.timers import TimerWheel


class Clock:
    """A fake clock and the wheel that reads it; ``advance`` runs what is due on this thread."""

    def __init__(self) -> None:
        self.now = 0.0
        self.wheel = TimerWheel("test", clock=lambda: self.now, start_thread=False)

    def advance(self, seconds: float, step: float = 1.0) -> None:
        end = self.now + seconds
        while self.now < end:
            self.now = min(end, self.now + step)
            self.wheel.run_due()


class Team(Orchestration):
    """A custom strategy: asks each member in turn and joins the answers."""

    def __init__(self, members, **kw):
        super().__init__(**kw)
        self.members = members

    def _run(self, task, ctx):
        from edgevox.agents.base import AgentResult

        texts = [self.call(m, task, ctx).text for m in self.members]
        return AgentResult(" ".join(texts), agent=self.name)
        yield  # pragma: no cover - a generator


@pytest.fixture
def clock():
    c = Clock()
    yield c
    assert c.wheel.close() == []


def slow(clock, seconds, text="done"):
    """An agent behaviour taking ``seconds`` of fake time (stopping when cancelled)."""

    def behaviour(task, ctx):
        for _ in range(int(seconds)):
            clock.advance(1.0)
            ctx.cancel_token.raise_if_cancelled()
        return text

    return behaviour


def test_a_long_turn_publishes_progress_at_the_interval_and_says_still_working_once(
    Scripted, bus, recorded, of_kind, clock
):
    spoken: list[str] = []
    delivery = Immediate(lambda items: spoken.extend(i.text for i in items))
    fast, worker = Scripted("fast", "fast answer"), Scripted("worker")
    worker.behaviour = slow(clock, 12, "slow answer")
    coord = Coordinator(
        {"fast": fast, "worker": worker},
        strategy=Team([fast, worker], name="team"),
        bus=bus,
        timers=clock.wheel,
        progress_interval_s=5.0,
        still_working="Still working on it.",
        delivery=delivery,
    )
    result = coord.run("survey the house", AgentContext(session_id="s1"))
    assert result.text == "fast answer slow answer"
    beats = of_kind(recorded, OrchestrationProgress)
    assert [(b.strategy, b.step, b.agent, b.elapsed_s, b.beat) for b in beats] == [
        ("team", 2, "worker", 5.0, 1),
        ("team", 2, "worker", 10.0, 2),
    ]
    assert all(b.session_id == "s1" for b in beats)
    delivery.pump()
    assert spoken == ["Still working on it."]  # once, not at every beat
    # The turn is over: no more heartbeats, nothing left on the wheel.
    clock.advance(20.0)
    assert len(of_kind(recorded, OrchestrationProgress)) == 2 and clock.wheel.pending() == 0


def test_a_long_routed_turn_names_the_agent_and_route(Scripted, bus, recorded, of_kind, clock):
    agent = Scripted("planner")
    agent.behaviour = slow(clock, 7, "planned")
    coord = Coordinator({"planner": agent}, bus=bus, timers=clock.wheel, progress_interval_s=3.0)
    assert coord.run("plan my day", AgentContext(session_id="s1")).text == "planned"
    beats = of_kind(recorded, OrchestrationProgress)
    assert [(b.strategy, b.agent, b.elapsed_s) for b in beats] == [("route", "planner", 3.0), ("route", "planner", 6.0)]


def test_a_quick_turn_publishes_no_progress(Scripted, bus, recorded, of_kind, clock):
    coord = Coordinator({"a": Scripted("a", "hi")}, bus=bus, timers=clock.wheel, progress_interval_s=5.0)
    coord.run("hello", AgentContext())
    clock.advance(30.0)
    assert of_kind(recorded, OrchestrationProgress) == [] and clock.wheel.pending() == 0


def test_at_the_overall_timeout_the_user_gets_what_was_finished(Scripted, bus, recorded, of_kind, clock):
    fast, worker = Scripted("fast", "the kitchen is clear"), Scripted("worker")
    worker.behaviour = slow(clock, 100)
    coord = Coordinator(
        {"fast": fast, "worker": worker},
        strategy=Team([fast, worker], name="team"),
        bus=bus,
        timers=clock.wheel,
        timeout_s=8.0,
    )
    result = coord.run("survey the house", AgentContext(session_id="s1"))
    assert result.text == (
        "I ran out of time after 8 seconds; here is what I have so far. fast: the kitchen is clear Not finished: worker."
    )
    assert result.ok is False and clock.now == 8.0
    [event] = of_kind(recorded, OrchestrationTimedOut)
    assert (event.strategy, event.finished, event.unfinished) == ("team", ["fast"], ["worker"])
    assert of_kind(recorded, TurnAnswered)[-1].text == result.text
    # The caller's context was not cancelled: the next turn works.
    worker.behaviour = "quick now"
    assert coord.run("again", AgentContext(session_id="s1")).text == "the kitchen is clear quick now"


def test_a_timeout_before_anything_finished_says_so(Scripted, clock):
    worker = Scripted("worker")
    worker.behaviour = slow(clock, 100)
    coord = Coordinator({"worker": worker}, strategy=Team([worker], name="team"), timers=clock.wheel, timeout_s=3.0)
    text = coord.run("go", AgentContext()).text
    assert text.startswith("I ran out of time after 3 seconds before anything was finished (worker did not finish).")


def test_the_coordinators_own_timer_thread_is_one_for_all_turns_and_stops_on_close(Scripted):
    coord = Coordinator({"a": Scripted("a", "hi")}, progress_interval_s=30.0, timeout_s=60.0)
    before = threading.active_count()
    for i in range(5):
        coord.run("hello", AgentContext(session_id=f"s{i}"))
    assert threading.active_count() <= before + 1  # one wheel thread, not one per turn
    assert coord.close() == []


def test_progress_and_timeout_from_yaml(Scripted):
    config = {"coordinator": {"progress_interval_s": 2.5, "still_working": "One moment.", "timeout_s": 40}}
    coord = build_orchestration(config, {"a": Scripted("a", "hi")})
    assert (coord.progress_interval_s, coord.still_working, coord.timeout_s) == (2.5, "One moment.", 40)
    assert coord.run("hello", AgentContext()).text == "hi"
    assert coord.close() == []


def test_bad_progress_values_are_clear_errors(Scripted):
    for bad in (0, -1, float("nan"), float("inf"), "5"):
        with pytest.raises(
            ArgumentError, match=r"Coordinator: progress_interval_s = .*must be a (finite )?number of seconds"
        ):
            Coordinator({"a": Scripted("a")}, progress_interval_s=bad)
        with pytest.raises(ArgumentError, match=r"Coordinator.*timeout_s = "):
            Coordinator({"a": Scripted("a")}, timeout_s=bad)
