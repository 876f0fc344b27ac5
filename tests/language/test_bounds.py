"""Bounds a docstring states in words (``edgevox.language.bounds``), one row each."""

from __future__ import annotations

import pytest

from edgevox.language.bounds import docstring_bounds

ROWS = [
    ("between 0 and 100", {"minimum": 0, "maximum": 100}),
    ("-5 to 5", {"minimum": -5, "maximum": 5}),
    ("(0-100 %)", {"minimum": 0, "maximum": 100}),
    ("how far to go, in metres (at most 20).", {"maximum": 20}),
    ("Moves are limited to 50 m at a time.", {"maximum": 50}),  # "limited to": a maximum
    ("anything from 5 ml to 200 ml per pour.", {"minimum": 5, "maximum": 200}),  # a unit on both ends
    ("30 at most", {"maximum": 30}),
    ("up to 10 minutes", {"maximum": 10}),
    ("at least 1 and at most 5", {"minimum": 1, "maximum": 5}),
    ("at most 5 either way", {"minimum": -5, "maximum": 5}),
    ("Max 2 m either way", {"minimum": -2, "maximum": 2}),
    ("water flow from 1 (barely damp) to 3 (wet).", {"minimum": 1, "maximum": 3}),
    ("Go to 5 rooms", {}),
    ("1 to 2 times, or 3 to 4", {}),  # two ranges: none is read
    ("at most 5, at most 6", {}),  # two values for one limit: none is read
    ("From 10 to 5", {}),
]


@pytest.mark.parametrize(("text", "bounds"), ROWS)
def test_bounds_are_read_conservatively(text, bounds):
    assert docstring_bounds(text) == bounds


def test_a_signed_change_is_bounded_by_its_limit_either_way_not_by_a_range_of_positions():
    text = "Raise or lower the mast by some centimetres (at most 50 cm per move). It travels between 0 and 180 cm."
    assert docstring_bounds(text) == {"minimum": 0, "maximum": 180}
    assert docstring_bounds(text, signed=True) == {"minimum": -50, "maximum": 50}
    assert docstring_bounds("Turn between -90 and 90 degrees.", signed=True) == {"minimum": -90, "maximum": 90}


@pytest.mark.parametrize(
    ("text", "bounds"),
    [
        ("Open the vents. 0 is fully closed and 100 is fully open.", {"minimum": 0, "maximum": 100}),
        ("speed 0\u2013100", {"minimum": 0, "maximum": 100}),
        ("1 is slow, 5 is fast", {}),  # meanings of two numbers, not said as the full extent
    ],
)
def test_a_range_in_prose_or_as_the_full_extent_of_the_scale(text, bounds):
    assert docstring_bounds(text) == bounds
