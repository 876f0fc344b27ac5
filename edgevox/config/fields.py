"""The base model and the bounded value types every config section is built from.

Every number a config holds is finite and within a range a robot can use: ``.inf``, ``nan``,
``${T:-1e999}`` or ``max_tokens: 10000000`` are errors naming the key and the accepted range,
not values that surface later as a traceback in the middle of a shutdown. The ranges are
wide (they reject nonsense, not unusual choices).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr
from pydantic.fields import FieldInfo


class Section(BaseModel):
    """Base of every config model: unknown keys are errors, numbers are finite, values are
    validated on assignment too."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)


Name = Annotated[StrictStr, Field(min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_\-]*$")]
"""An agent/workflow/background-agent name: letters, digits, ``_`` and ``-``."""

HOUR_S = 3600
DAY_S = 86400

PosFloat = Annotated[StrictFloat, Field(gt=0, le=1e6)]
"""A positive ratio or factor (finite; at most a million)."""
NonNegFloat = Annotated[StrictFloat, Field(ge=0, le=1e6)]
PosInt = Annotated[StrictInt, Field(ge=1, le=1_000_000)]
NonNegInt = Annotated[StrictInt, Field(ge=0, le=1_000_000)]
Milliseconds = Annotated[StrictInt, Field(ge=0, le=60_000)]
"""A short interval in milliseconds, at most a minute."""

# Durations, periods and rates have a lower bound that is a usable value, never just "> 0":
# ``refresh_s: 1.0e-300`` passed "> 0" and kept a core 65 % busy polling. A key where 0 is
# meaningful (no debounce, no pre-roll) says ``>= 0``, and a tiny value then acts as 0.
MIN_TIMEOUT_S = 0.01
"""Shortest timeout, deadline or time window a config may set (10 ms)."""
MIN_PERIOD_S = 0.05
"""Shortest period of something done again and again (a poll, a report): 50 ms, 20 times a second."""
MIN_RATE_PER_S = 0.01
"""Lowest rate limit, in events per second (one per 100 s)."""

Seconds = Annotated[StrictFloat, Field(ge=MIN_TIMEOUT_S, le=DAY_S)]
"""A timeout or time window in seconds, from 10 ms to a day."""
ShortSeconds = Annotated[StrictFloat, Field(ge=MIN_TIMEOUT_S, le=HOUR_S)]
"""A timeout or time window in seconds, from 10 ms to an hour (a deadline a user waits on)."""
Period = Annotated[StrictFloat, Field(ge=MIN_PERIOD_S, le=HOUR_S)]
"""How often something is repeated (a poll, a refresh, a report), in seconds: 50 ms to an hour."""
RatePerSecond = Annotated[StrictFloat, Field(ge=MIN_RATE_PER_S, le=1e6)]
"""A rate limit in events per second: one per 100 s to a million."""
Threads = Annotated[StrictInt, Field(ge=1, le=256)]
"""CPU threads for an engine."""
Temperature = Annotated[StrictFloat, Field(ge=0, le=5)]
MAX_CONTEXT_TOKENS = 1 << 20
"""Largest context window a config may ask for (llama.cpp models reach 128 k to 1 M)."""
Tokens = Annotated[StrictInt, Field(ge=1, le=MAX_CONTEXT_TOKENS)]


_BOUNDS = ("ge", "gt", "le", "lt")


def number_bounds(annotation: Any, metadata: Iterable[Any] = ()) -> dict[str, float]:
    """The limits (``ge``, ``gt``, ``le``, ``lt``) on the number a field holds, from its own
    ``metadata`` and from an ``Annotated`` number inside an Optional or a union
    (``latency: "low" | "high" | number``); empty when it holds no bounded number."""
    found: dict[str, float] = {}

    def take(items: Iterable[Any]) -> None:
        for m in items:
            if isinstance(m, FieldInfo):
                take(m.metadata)
                continue
            for name in _BOUNDS:
                value = getattr(m, name, None)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    found[name] = value

    take(metadata)
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        take(typing.get_args(annotation)[1:])
        found = {**number_bounds(typing.get_args(annotation)[0]), **found}
    elif origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = {**number_bounds(arg), **found}
    return found


def range_text(bounds: dict[str, float]) -> str:
    """``0.05 to 60``, or ``> 0 and < 1`` where a bound is open."""
    if "ge" in bounds and "le" in bounds:
        return f"{_number(bounds['ge'])} to {_number(bounds['le'])}"
    signs = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    return " and ".join(f"{signs[k]} {_number(bounds[k])}" for k in _BOUNDS if k in bounds)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(float(value))
