"""debounce_trigger: exact edges with an injected clock."""

from __future__ import annotations

import pytest

from edgevox.runtime.debounce import debounce_trigger

from .conftest import Ping


def feed(trig, clock, times):
    """Send Ping(n=i) at each absolute time; return [(time, fired n)]."""
    fired = []
    for i, t in enumerate(times):
        clock.set(t)
        task = trig(Ping(n=i))
        if task is not None:
            fired.append((t, task))
    return fired


def ident(e):
    return e.n


def test_leading_fires_at_once_then_drops_inside_the_interval(clock):
    trig = debounce_trigger(ident, interval_s=1.0, clock=clock)
    fired = feed(trig, clock, [0.0, 0.5, 0.999, 1.0, 1.5, 3.0])
    assert fired == [(0.0, 0), (1.0, 3), (3.0, 5)]  # exactly interval_s later fires again
    assert trig.suppressed == 3 and trig.due_in_s() is None


def test_leading_continuous_stream_fires_once_per_interval(clock):
    trig = debounce_trigger(ident, interval_s=0.5, clock=clock)
    times = [i * 0.1 for i in range(51)]  # 10 Hz for 5 s
    fired = feed(trig, clock, [round(t, 6) for t in times])
    assert len(fired) == 11
    assert all(b[0] - a[0] >= 0.5 - 1e-9 for a, b in zip(fired, fired[1:], strict=False))


def test_trailing_fires_the_last_task_only_after_the_stream_is_quiet(clock):
    trig = debounce_trigger(ident, interval_s=1.0, edge="trailing", clock=clock)
    assert feed(trig, clock, [0.0, 0.4, 0.8]) == []
    clock.set(1.79)
    assert trig.poll() is None and trig.due_in_s() == pytest.approx(0.01)
    clock.set(1.8)  # 1.0 s after the last task
    assert trig.poll() == 2
    assert trig.poll() is None and trig.due_in_s() is None


def test_trailing_with_max_wait_fires_a_never_quiet_stream(clock):
    trig = debounce_trigger(ident, interval_s=1.0, edge="trailing", max_wait_s=2.0, clock=clock)
    fired = []
    for i in range(40):  # every 0.25 s, never quiet for 1 s
        clock.set(i * 0.25)
        trig(Ping(n=i))
        if (task := trig.poll()) is not None:
            fired.append((clock(), task))
    assert fired[0] == (2.0, 8)  # held since 0.0, max_wait 2.0: the latest task at that moment


def test_both_fires_leading_and_delivers_the_final_state_of_the_burst(clock):
    trig = debounce_trigger(ident, interval_s=1.0, edge="both", clock=clock)
    fired = feed(trig, clock, [0.0, 0.2, 0.4, 0.6])
    assert fired == [(0.0, 0)]
    clock.set(1.59)
    assert trig.poll() is None
    clock.set(1.6)  # quiet for 1.0 s after the last task (0.6)
    assert trig.poll() == 3


def test_both_continuous_stream_fires_once_per_interval_and_then_the_last(clock):
    trig = debounce_trigger(ident, interval_s=0.5, edge="both", clock=clock)
    fires = []
    for i in range(22):  # 0.0 .. 2.1 every 0.1
        clock.set(round(i * 0.1, 6))
        if (t := trig(Ping(n=i))) is not None:
            fires.append((clock(), t))
    clock.set(2.59)
    assert trig.poll() is None
    clock.set(2.6)  # 0.5 s after the last task (2.1)
    fires.append((clock(), trig.poll()))
    assert fires == [(0.0, 0), (0.5, 5), (1.0, 10), (1.5, 15), (2.0, 20), (2.6, 21)]


def test_both_holds_the_last_of_a_burst_inside_the_window(clock):
    trig = debounce_trigger(ident, interval_s=1.0, edge="both", clock=clock)
    feed(trig, clock, [0.0, 0.9])
    clock.set(1.5)
    assert trig.poll() is None  # 0.9 + 1.0 = 1.9 is the trailing deadline
    clock.set(1.9)
    assert trig.poll() == 1


def test_fires_are_always_at_least_one_interval_apart(clock):
    for edge in ("leading", "trailing", "both"):
        trig = debounce_trigger(
            ident, interval_s=0.3, edge=edge, max_wait_s=0.6 if edge == "trailing" else None, clock=clock
        )
        fires = []
        for i in range(200):
            clock.set(i * 0.07 + (1.0 if i % 37 == 0 else 0))
            if trig(Ping(n=i)) is not None:
                fires.append(clock())
            if trig.poll() is not None:
                fires.append(clock())
        assert all(b - a >= 0.3 - 1e-9 for a, b in zip(fires, fires[1:], strict=False)), edge


def test_events_the_trigger_ignores_do_not_count(clock):
    trig = debounce_trigger(lambda e: e.n if e.n % 2 else None, interval_s=1.0, clock=clock)
    assert feed(trig, clock, [0.0, 0.1]) == [(0.1, 1)]


def test_bad_arguments_name_the_problem():
    with pytest.raises(ValueError, match="interval_s"):
        debounce_trigger(ident, interval_s=0)
    with pytest.raises(ValueError, match="edge"):
        debounce_trigger(ident, interval_s=1, edge="middle")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_wait_s"):
        debounce_trigger(ident, interval_s=1, edge="trailing", max_wait_s=0.5)
