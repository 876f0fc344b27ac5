"""The unit rules of ``edgevox.language.units`` (pint), one row each."""

from __future__ import annotations

import pytest

from edgevox.language.numbers import spoken_unit
from edgevox.language.units import UnitMismatch, convert, parameter_unit, unit

SPOKEN = [
    # (word after a number, dimension or None)
    ("metres", "length"),
    ("meters", "length"),
    ("cm", "length"),
    ("centimetres", "length"),
    ("feet", "length"),
    ("km", "length"),
    ("seconds", "time"),
    ("minutes", "time"),
    ("hours", "time"),
    ("degrees", "angle"),
    ("radians", "angle"),
    ("turns", "angle"),
    ("percent", "ratio"),
    ("mph", "speed"),
    ("kg", "mass"),
    ("litres", "volume"),
    # closed-class English words pint also defines are English here
    ("a", None),
    ("in", None),
    ("are", None),
    ("at", None),
    # a parse only an unusual SI prefix allows is an English word
    ("fly", None),  # not a femto-light-year
    ("pinch", None),  # not a pico-inch
    ("apples", None),
]


@pytest.mark.parametrize(("word", "dimension"), SPOKEN)
def test_a_word_is_a_unit_when_pint_names_it_and_english_does_not_claim_it(word, dimension):
    u = unit(word)
    assert (u.dimension if u else None) == dimension


PARAMETERS = [
    # (name, description, pint unit or None)
    ("distance_m", "", "meter"),
    ("timeout_s", "", "second"),
    ("angle_deg", "", "degree"),
    ("speed_pct", "", "percent"),
    ("height_cm", "", "centimeter"),
    ("minutes", "", "minute"),
    ("duration", "Duration in minutes.", "minute"),
    ("distance", "how far to go, in metres (at most 20).", "meter"),
    ("level", "volume, 0-100 percent", "percent"),
    ("count", "How many items to fetch.", None),
    ("margin", "Kept in m.", None),  # a symbol only as a name suffix
    ("arm", "Which arm: the second arm is the left one.", None),  # a singular noun is English
    ("direction", "How far to turn.", None),
]


@pytest.mark.parametrize(("name", "description", "expected"), PARAMETERS)
def test_a_parameter_declares_its_unit_by_name_suffix_name_word_or_plural_description_word(name, description, expected):
    u = parameter_unit(name, description)
    assert (u.pint_name if u else None) == expected


def test_quantities_convert_within_a_dimension_and_never_across():
    assert convert(90, unit("seconds"), unit("minutes")) == 1.5
    assert convert(50, unit("cm"), unit("m")) == 0.5
    assert convert(10, unit("feet"), unit("metres")) == pytest.approx(3.048)
    assert convert(180, unit("degrees"), unit("radians")) == pytest.approx(3.141593, rel=1e-5)
    assert convert(3, None, unit("minutes")) == 3
    with pytest.raises(UnitMismatch):
        convert(3, unit("seconds"), unit("metres"))  # ten seconds is no distance
    with pytest.raises(UnitMismatch):
        convert(50, unit("percent"), unit("degrees"))  # an angle is not a ratio


def test_the_unit_said_after_a_number_is_read_through_articles_and_whole_words():
    assert spoken_unit("half an hour".split(), 1).pint_name == "hour"
    assert spoken_unit("ninety second timer".split(), 1).pint_name == "second"
    assert spoken_unit("a full turn".split(), 1).pint_name == "turn"
    assert spoken_unit("half a rotation".split(), 1).pint_name == "turn"
    assert spoken_unit("five apples".split(), 1) is None
    assert unit("metres").spoken == "meters" and unit("feet").spoken == "feet" and unit("percent").spoken == "percent"


@pytest.mark.parametrize("word", ["shake", "angstrom", "fermi", "parsec"])
def test_units_beyond_a_human_scale_are_english_words(word):
    # pint's "shake" is ten nanoseconds: "give it a good shake" says no time
    assert unit(word) is None


@pytest.mark.parametrize("word", ["millisecond", "second", "hour", "year", "mm", "metre", "km", "mile", "inch"])
def test_units_of_a_human_scale_are_units(word):
    assert unit(word) is not None


@pytest.mark.parametrize(
    ("name", "description", "spoken"),
    [
        ("speed_m_s", "", "meters per second"),  # two unit symbols at the end of a name: a rate
        ("rpm", "brush speed in revolutions per minute", "revolutions per minute"),  # a rate in words
        ("speed", "in metres a second", "meters per second"),
        ("timeout_s", "", "seconds"),
    ],
)
def test_a_parameters_rate_is_read_from_its_name_or_its_words(name, description, spoken):
    assert parameter_unit(name, description).spoken == spoken
