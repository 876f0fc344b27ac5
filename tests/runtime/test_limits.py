"""Every duration and size a caller can pass to the runtime is checked by one rule (runtime/limits.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgevox.runtime import (
    AgentPool,
    BackgroundAgent,
    Blackboard,
    CancelToken,
    ChildSpec,
    EventBus,
    Mailbox,
    RestartSupervisor,
    Runtime,
    StopReport,
    TimerWheel,
    debounce_trigger,
    request,
)
from edgevox.runtime.activities import ActivityRegistry
from edgevox.runtime.limits import MAX_COUNT, MAX_DURATION_S, count, duration, optional_duration, wait_s

from .conftest import RecordingAgent


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e300, -0.5, MAX_DURATION_S * 1.01, "5", None, True])
def test_a_duration_that_acts_must_be_finite_and_in_range(bad):
    with pytest.raises(ValueError, match=r"^Thing: delay_s = .*: must be a .*number of seconds"):
        duration("delay_s", bad, owner="Thing")


def test_valid_durations_pass_as_floats_and_none_passes_where_it_means_no_timeout():
    assert duration("t", 0) == 0.0 and duration("t", np.float32(0.5)) == 0.5
    assert duration("t", MAX_DURATION_S) == MAX_DURATION_S
    assert optional_duration("t", None) is None
    with pytest.raises(ValueError, match="or None for no timeout"):
        optional_duration("t", math.inf)
    with pytest.raises(ValueError, match=r"t = 0: must be a finite number of seconds in \(0, "):
        duration("t", 0, above_minimum=True)


def test_a_wait_rejects_nan_clamps_inf_and_does_not_wait_for_a_negative():
    with pytest.raises(ValueError, match="w = nan"):
        wait_s("w", math.nan)
    with pytest.raises(ValueError, match="w = 'long'"):
        wait_s("w", "long")
    assert wait_s("w", math.inf) == wait_s("w", 1e300) == MAX_DURATION_S
    assert wait_s("w", -3) == 0.0 and wait_s("w", 1.5) == 1.5


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "3", MAX_COUNT + 1])
def test_a_count_is_a_whole_number_in_range(bad):
    with pytest.raises(ValueError, match=r"max_queue = .*: must be a whole number in \[1, "):
        count("max_queue", bad, minimum=1)
    assert count("n", np.int64(3)) == 3


# One row per user-facing argument: what to call with the bad value, and the name the error gives.
def _rows():
    ag = RecordingAgent

    def bg(**kw):
        return BackgroundAgent(agent=ag(), trigger=lambda e: None, **kw)

    return {
        "TimerWheel.call_later": lambda v: TimerWheel("x", start_thread=False).call_later(v, print),
        "Blackboard.post_request": lambda v: Blackboard().post_request("k", 1, timeout=v),
        "Mailbox block_timeout_s": lambda v: Mailbox(block_timeout_s=v),
        "EventBus.subscribe block_timeout_s": lambda v: EventBus().subscribe("*", print, block_timeout_s=v),
        "BackgroundAgent restart_window_s": lambda v: bg(restart_window_s=v),
        "BackgroundAgent start_timeout_s": lambda v: bg(start_timeout_s=v),
        "BackgroundAgent shutdown_timeout_s": lambda v: bg(shutdown_timeout_s=v),
        "RestartSupervisor restart_window_s": lambda v: RestartSupervisor(restart_window_s=v),
        "Runtime restart_window_s": lambda v: Runtime(restart_window_s=v),
        "ChildSpec shutdown_timeout_s": lambda v: ChildSpec("c", print, StopReport, shutdown_timeout_s=v),
        "debounce_trigger interval_s": lambda v: debounce_trigger(print, v),
        "debounce_trigger max_wait_s": lambda v: debounce_trigger(print, 1.0, max_wait_s=v),
    }


@pytest.mark.parametrize("value", [math.nan, math.inf, 1e300, -1.0])
@pytest.mark.parametrize("where", sorted(_rows()))
def test_every_duration_that_acts_rejects_what_it_cannot_honour(where, value):
    with pytest.raises(ValueError, match=r" = .*: must be a finite number of seconds"):
        _rows()[where](value)


def _waits(rt: Runtime):
    return {
        "Runtime.stop": lambda v: rt.stop(v),
        "Runtime.safety_stop": lambda v: rt.safety_stop(grace_s=v),
        "AgentPool.stop_all": lambda v: rt.pool.stop_all(v),
        "RestartSupervisor.stop": lambda v: rt.supervisor.stop(v),
        "Blackboard.close": lambda v: rt.blackboard.close(v),
        "EventBus.close": lambda v: rt.bus.close(v),
        "Subscription.close": lambda v: rt.bus.subscribe("*", print).close(v),
        "Mailbox.get": lambda v: Mailbox().get(v),
        "CancelToken.wait": lambda v: CancelToken().wait(v),
        "ActivityRegistry.cancel_all": lambda v: ActivityRegistry().cancel_all("x", grace_s=v),
        "request": lambda v: request(rt.bus, from_agent="a", to="b", timeout_s=v),
        "TimerWheel.close": lambda v: TimerWheel("w").close(v),
        "AgentPool.close": lambda v: AgentPool().close(v),
    }


@pytest.mark.parametrize("where", sorted(_waits(None)))  # type: ignore[arg-type]
def test_every_wait_rejects_nan_naming_it(where):
    rt = Runtime("limits")
    try:
        with pytest.raises(ValueError, match=r"= nan: must be a number of seconds"):
            _waits(rt)[where](math.nan)
    finally:
        assert rt.stop(2.0)


def test_an_infinite_stop_wait_is_clamped_not_an_overflow():
    rt = Runtime("inf").start()
    assert CancelToken().wait(0) is False
    token = CancelToken()
    token.cancel()
    assert token.wait(math.inf) is True  # would be OverflowError unclamped
    assert rt.stop(math.inf)
