"""Checks on every duration and size a caller passes to the runtime.

One rule, in one place, so no argument can reach a thread as ``1e300``, ``inf`` or
``nan`` (``Condition.wait(1e300)`` raises ``OverflowError`` on the thread that waits,
which once killed the blackboard's timer thread and with it every later timeout).

Two kinds of duration, told apart by what happens when it elapses:

* **Timeouts and intervals that act** (a request's timeout, a timer's delay, a restart
  window, a debounce interval, a configured shutdown timeout): :func:`duration` rejects
  ``nan``, ``inf``, negatives and anything above :data:`MAX_DURATION_S` with one
  ``ArgumentError`` (a ``ValueError``) naming the owner, the argument, the value and the accepted range.
  ``None`` means "no timeout" where the API allows it (:func:`optional_duration`).
* **Waits** ("wait up to", e.g. ``stop(timeout_s)``, ``close(timeout_s)``,
  ``get(timeout)``): :func:`wait_s` rejects only ``nan`` and non-numbers; a negative wait
  does not wait (as with ``threading.Event.wait``) and ``inf`` or a huge wait is clamped
  to :data:`MAX_DURATION_S`.

Sizes (queue lengths, restart counts) go through :func:`count`: an ``int`` (never a
``bool``) within a stated range.

Rejected alternative: clamping everything silently - a request timeout of ``1e300`` is
a bug in the caller, and a message naming it is worth more than a request that quietly
times out after 30 days.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from edgevox.errors import ArgumentError

MAX_DURATION_S = 30 * 24 * 3600.0
"""The longest duration the runtime accepts (30 days). Longer is a mistake (``1e300``,
``inf``); waits longer than this are clamped to it."""

MAX_COUNT = 10_000_000
"""The largest queue size or count the runtime accepts."""


def _where(owner: str, name: str) -> str:
    return f"{owner}: {name}" if owner else name


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _number(owner: str, name: str, value: object, accepted: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ArgumentError(f"{_where(owner, name)} = {value!r}: must be a number of seconds {accepted}")
    return float(value)


def duration(
    name: str,
    value: object,
    *,
    owner: str = "",
    minimum: float = 0.0,
    above_minimum: bool = False,
    maximum: float = MAX_DURATION_S,
    none_hint: str = "",
) -> float:
    """``value`` as seconds if it is a finite number within range, else ``ValueError``.

    ``above_minimum=True`` makes the lower bound exclusive (``> minimum``).
    """
    low = "(" if above_minimum else "["
    accepted = f"in {low}{_num(minimum)}, {_num(maximum)}]" + (f", {none_hint}" if none_hint else "")
    seconds = _number(owner, name, value, accepted)
    too_low = seconds <= minimum if above_minimum else seconds < minimum
    if not math.isfinite(seconds) or too_low or seconds > maximum:
        raise ArgumentError(f"{_where(owner, name)} = {value!r}: must be a finite number of seconds {accepted}")
    return seconds


def optional_duration(
    name: str,
    value: object,
    *,
    owner: str = "",
    minimum: float = 0.0,
    above_minimum: bool = False,
    maximum: float = MAX_DURATION_S,
) -> float | None:
    """Like :func:`duration`, but ``None`` (no timeout) passes through."""
    if value is None:
        return None
    return duration(
        name,
        value,
        owner=owner,
        minimum=minimum,
        above_minimum=above_minimum,
        maximum=maximum,
        none_hint="or None for no timeout",
    )


def wait_s(name: str, value: object, *, owner: str = "") -> float:
    """A "wait up to" duration: ``nan`` and non-numbers are rejected, a negative wait is 0,
    ``inf`` and waits above :data:`MAX_DURATION_S` are clamped to it."""
    accepted = f"(a wait: 0 .. {_num(MAX_DURATION_S)}; longer is clamped)"
    seconds = _number(owner, name, value, accepted)
    if math.isnan(seconds):
        raise ArgumentError(f"{_where(owner, name)} = nan: must be a number of seconds {accepted}")
    return min(max(seconds, 0.0), MAX_DURATION_S)


def optional_wait_s(name: str, value: object, *, owner: str = "") -> float | None:
    """Like :func:`wait_s`, but ``None`` (wait as long as it takes) passes through."""
    return None if value is None else wait_s(name, value, owner=owner)


def count(
    name: str, value: object, *, owner: str = "", minimum: int = 0, maximum: int = MAX_COUNT, none_hint: str = ""
) -> int:
    """``value`` if it is an ``int`` (not a ``bool``) in ``[minimum, maximum]``, else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or not minimum <= int(value) <= maximum:
        hint = f" {none_hint}" if none_hint else ""
        raise ArgumentError(
            f"{_where(owner, name)} = {value!r}: must be a whole number in [{minimum}, {maximum}]{hint}"
        )
    return int(value)
