"""How the dashboard writes numbers for people: durations and clock times in event summaries,
never raw floats (``views.py``)."""

from __future__ import annotations

import inspect
import time

import pytest

from edgevox.agents.events import ToolCallFinished
from edgevox.dashboard.config import DashboardConfig
from edgevox.dashboard.state import DashboardState
from edgevox.dashboard.views import duration, log_entry, readable_number
from edgevox.voice.events import Stopped


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        ("synth_s", 6.67999847792089e-06, "7 µs"),
        ("duration_s", 0.00634741700196173, "6.35 ms"),
        ("cancel_s", 0.25, "250 ms"),
        ("waited_s", 2.4, "2.40 s"),
        ("uptime_s", 95.0, "1 min 35 s"),
        ("progress", 0.3333333333, "0.3333"),
        ("level", float("nan"), "nan"),
    ],
)
def test_numbers_read_as_durations_or_short_numbers(key: str, value: float, shown: str):
    assert readable_number(key, value) == shown


def test_wall_clock_times_read_as_hours_minutes_seconds():
    at = time.mktime((2026, 11, 27, 21, 3, 7, 0, 0, -1))
    assert readable_number("heard_at", at) == "21:03:07" and readable_number("timestamp", at) == "21:03:07"
    assert duration(0.0004) == "400 µs"


def test_an_event_summary_has_no_raw_floats():
    finished = log_entry(ToolCallFinished(tool="go_to", result="ok", duration_s=0.00634741700196173, seq=3))
    assert finished["summary"] == "tool=go_to ok=True result=ok duration_s=6.35 ms"
    assert finished["fields"]["duration_s"] == 0.00634741700196173  # the raw value stays for tools
    stopped = log_entry(Stopped(reason="stop button", cancel_s=0.000214))
    assert "cancel_s=214 µs" in stopped["summary"]


def test_max_pages_has_one_default_in_the_config_and_the_state():
    default = inspect.signature(DashboardState).parameters["max_pages"].default
    assert DashboardConfig().max_pages == default == 16
