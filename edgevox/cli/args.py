"""Argument types shared by the commands: a bad value is argparse's one-line usage error
naming the option and the accepted range (never a traceback later)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def number(*, low: float = 0.0, high: float, inclusive_low: bool = False) -> Callable[[str], float]:
    """An argparse ``type`` for a finite number in ``(low, high]`` (``[low, high]`` when ``inclusive_low``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        above = value >= low if inclusive_low else value > low
        if not math.isfinite(value) or not above or value > high:
            side = ">=" if inclusive_low else ">"
            raise argparse.ArgumentTypeError(f"{text!r}: expected a number {side} {low:g} and <= {high:g}")
        return value

    parse.__name__ = "number"  # argparse names the type in its messages
    return parse


SECONDS = number(high=7 * 86400.0)
"""A positive duration in seconds (at most a week)."""


def whole(*, low: int = 0, high: int) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number from {low} to {high}")
        return value

    parse.__name__ = "whole number"
    return parse


COUNT = whole(high=10_000_000)
"""A count (of events, trials, clips...): 0 or more."""
