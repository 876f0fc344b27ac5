"""Every period, timeout and rate key of the config has a usable range (issue 25).

``dashboard.refresh_s: 1.0e-300`` passed its "> 0" check and kept a core 65 % busy. The walk
below covers the whole schema, so a new time or rate key without both bounds fails here.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field, StrictFloat

from edgevox.config import parse_config
from edgevox.config.docs import render_config_docs
from edgevox.config.fields import Section, number_bounds
from edgevox.config.schema import AppConfig
from edgevox.errors import ConfigError

TIME_OR_RATE = re.compile(
    r"(_s|_ms|_hz)$|per_s|rate|timeout|period|interval|refresh|latency|lease|window|debounce|delay"
)
"""Key names that hold a duration, a period or a rate."""


def _members(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _members(arg)]
    return [annotation]


def _nested(annotation: Any) -> Iterator[type[BaseModel]]:
    for member in _members(annotation):
        if isinstance(member, type) and issubclass(member, BaseModel):
            yield member
        for arg in typing.get_args(member):  # list[Model], dict[str, Model]
            yield from (m for m in _members(arg) if isinstance(m, type) and issubclass(m, BaseModel))


def numeric_time_keys(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, dict[str, float]]]:
    """``(key path, bounds)`` of every time or rate key of ``model`` that holds a number."""
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        for sub in _nested(field.annotation):
            yield from numeric_time_keys(sub, path + ".")
        numeric = any(m in (int, float) for m in _members(field.annotation))
        if numeric and TIME_OR_RATE.search(name):
            yield path, number_bounds(field.annotation, field.metadata)


def unbounded(model: type[BaseModel]) -> list[str]:
    """Time and rate keys without a closed lower bound and an upper bound. ``gt`` does not
    count: ``> 0`` lets ``1.0e-300`` through. ``>= 0`` does, where 0 means "none" (a tiny
    value then acts as none)."""
    return [
        f"{path} {bounds or 'has no bounds'}"
        for path, bounds in numeric_time_keys(model)
        if "ge" not in bounds or not ({"le", "lt"} & set(bounds))
    ]


def test_every_period_timeout_and_rate_key_of_the_schema_has_a_lower_and_an_upper_bound():
    keys = dict(numeric_time_keys(AppConfig))
    # The walk reaches every section, including those defined in other packages.
    for path in ("dashboard.refresh_s", "bridges.zenoh.lease_s", "orchestration.coordinator.progress_interval_s"):
        assert path in keys
    assert len(keys) > 30
    assert unbounded(AppConfig) == []


def test_the_walk_flags_a_new_key_without_bounds():
    class Poller(Section):
        poll_period_s: float = Field(1.0, description="x")
        retry_timeout_s: Annotated[StrictFloat, Field(gt=0, le=10)] | None = Field(None, description="x")
        ok_s: Annotated[StrictFloat, Field(ge=0.05, le=10)] = Field(1.0, description="x")

    class Holder(Section):
        pollers: dict[str, Poller] = Field(default_factory=dict, description="x")

    flagged = unbounded(Holder)
    assert [line.split()[0] for line in flagged] == ["pollers.poll_period_s", "pollers.retry_timeout_s"]


def test_a_tiny_refresh_period_is_one_line_naming_the_key_the_value_and_the_range():
    with pytest.raises(ConfigError) as err:
        parse_config("dashboard:\n  refresh_s: 1.0e-300\n", source="robot.yaml", env={})
    assert str(err.value) == "robot.yaml:2: dashboard.refresh_s = 1.0e-300: must be >= 0.05 (allowed: 0.05 to 60)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bridges:\n  zenoh:\n    max_control_per_s: 1.0e-300\n", "bridges.zenoh.max_control_per_s = 1.0e-300"),
        ("bridges:\n  ros2:\n    diagnostics_period_s: 0.001\n", "bridges.ros2.diagnostics_period_s = 0.001"),
        ("orchestration:\n  coordinator:\n    progress_interval_s: 1.0e-9\n", "progress_interval_s = 1.0e-09"),
        ("safety:\n  tool_timeout_s: 1.0e-300\n", "safety.tool_timeout_s = 1.0e-300: must be >= 0.01"),
        ("audio:\n  input:\n    latency: 1.0e-300\n", "audio.input.latency = 1.0e-300"),
        ("endpointing:\n  max_utterance_s: 0.001\n", "endpointing.max_utterance_s = 0.001: must be >= 0.5"),
        ("runtime:\n  shutdown_timeout_s: 1.0e+30\n", "runtime.shutdown_timeout_s = 1.0e+30: must be <= 600"),
    ],
)
def test_out_of_range_time_and_rate_values_are_refused_with_their_range(text, expected):
    with pytest.raises(ConfigError) as err:
        parse_config(text, source="robot.yaml", env={})
    message = str(err.value)
    assert expected in message and "(allowed: " in message and "\n" not in message


def test_the_generated_reference_shows_each_range():
    docs = render_config_docs()
    assert "| `dashboard.refresh_s` | number (>= 0.05, <= 60) |" in docs
    assert "| `bridges.zenoh.max_control_per_s` | number (>= 0.01, <= 1000000.0) |" in docs
