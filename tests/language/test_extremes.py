"""The end of a scale said in words (``edgevox.language.extremes.extreme``)."""

from __future__ import annotations

import pytest

from edgevox.language.extremes import extreme
from edgevox.language.terms import sign_rule

ROWS = [
    ("just max it out then", 1),
    ("as far up as itll go then", 1),
    ("do the biggest you can", 1),
    ("as wide as it goes", 1),
    ("zoom all the way out", -1),
    ("the lowest one", -1),
    ("drive forward", None),
    ("five then", None),
]


@pytest.mark.parametrize(("text", "end"), ROWS)
def test_superlatives_and_all_the_way_name_an_end_of_the_scale(text, end):
    assert extreme(text.split()) == end


def test_a_direction_goes_through_the_parameters_sign_convention():
    tilt = sign_rule("Positive tilts up, negative tilts down.")
    assert extreme("as far down as it goes".split(), tilt) == -1
    turn = sign_rule("Positive turns left, negative turns right.")
    assert extreme("turn it up all the way".split(), turn) is None  # "up" is no left or right


def test_how_many_times_is_a_count():
    from edgevox.language.numbers import find_numbers

    assert [n.value for n in find_numbers("sound the horn twice".split())] == [2.0]
    assert [n.value for n in find_numbers("knock once".split())] == [1.0]


def test_a_remark_in_parentheses_names_no_direction_unless_it_names_a_sign():
    seen = sign_rule("Positive slides right and negative left (as seen from behind the camera).")
    assert seen.sign(["forward"]) == 0 and seen.sign(["right"]) == 1  # "behind" is a point of view
    down = sign_rule("Positive moves along the axis, negative the opposite way (so negative z goes down).")
    assert down.sign(["down"]) == -1
