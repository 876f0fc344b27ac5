"""Speech cleaning (edgevox.voice.speechtext) and numbers as a listener expects to hear them
(edgevox.voice.spoken_numbers): one table row per case, grouped by class."""

from __future__ import annotations

import time

import pytest

from edgevox.voice.speechtext import clean_for_speech
from edgevox.voice.spoken_numbers import RULES, say_numbers

SPOKEN_NUMBERS = {
    "cardinal": [
        ("0", "zero"),
        ("42", "forty-two"),
        ("I see 3 cups.", "I see three cups."),
        ("1,200 robots", "one thousand two hundred robots"),
        ("2024 steps", "two thousand and twenty-four steps"),
        ("room 101", "room one hundred and one"),
    ],
    "big number": [
        ("1,000,000", "one million"),
        ("1500000 people", "one million five hundred thousand people"),
        ("3.5 million", "three point five million"),
        ("7,000,000,000", "seven billion"),
    ],
    "negative": [
        ("-42", "minus forty-two"),
        ("It is -5 °C.", "It is minus five degrees Celsius."),
        ("a drop of −3.5%", "a drop of minus three point five percent"),
    ],
    "decimal": [
        ("3.14", "three point one four"),
        ("0.05", "zero point zero five"),
        ("It is 3.5 meters.", "It is three point five meters."),
    ],
    "year": [
        ("in 1990", "in nineteen ninety"),
        ("since 2005", "since two thousand and five"),
        ("March 2024", "March twenty twenty-four"),
        ("by 2030 we", "by twenty thirty we"),
        ("In 1066, the", "In ten sixty-six, the"),
        ("44 BC", "forty-four BC"),
    ],
    "decade": [
        ("the 1990s", "the nineteen nineties"),
        ("music of the 1960s", "music of the nineteen sixties"),
        ("the 2000s", "the two thousands"),
        ("the '80s", "the eighties"),
        ("in the 90s", "in the nineties"),
        ("wait 90s", "wait ninety seconds"),  # no decade cue: a duration
    ],
    "money": [
        ("$3.50", "three dollars and fifty cents"),
        ("It costs $5.", "It costs five dollars."),
        ("$1", "one dollar"),
        ("$0.99", "ninety-nine cents"),
        ("$1.01", "one dollar and one cent"),
        ("$1,200", "one thousand two hundred dollars"),
        ("$3.5 million", "three point five million dollars"),
        ("£2.50", "two pounds and fifty pence"),
        ("€20", "twenty euro"),
    ],
    "ordinal": [
        ("1st", "first"),
        ("The 1st, 2nd and 21st.", "The first, second and twenty-first."),
        ("the 3rd floor", "the third floor"),
        ("12th and 30th", "twelfth and thirtieth"),
        ("the 100th time", "the one hundredth time"),
    ],
    "percent": [
        ("45%", "forty-five percent"),
        ("battery at 100 %", "battery at one hundred percent"),
        ("1%", "one percent"),
    ],
    "time": [
        ("at 3:30 pm.", "at three thirty p m."),
        ("at 3:05", "at three oh five"),
        ("at 3:00", "at three o'clock"),
        ("at 15:00", "at fifteen hundred"),
        ("at 9 am.", "at nine a m."),
        ("3 p.m. today", "three p m today"),
        ("11:45 AM", "eleven forty-five a m"),
    ],
    "date": [
        ("on 2024-03-15", "on March fifteenth, twenty twenty-four"),
    ],
    "unit": [
        ("Move 10 m", "Move ten meters"),
        ("1 m left", "one meter left"),
        ("1.5 m/s", "one point five meters per second"),
        ("5 km/h", "five kilometers per hour"),
        ("50 cm", "fifty centimeters"),
        ("22°C", "twenty-two degrees Celsius"),
        ("turn 90°", "turn ninety degrees"),
        ("10m", "ten meters"),
        ("5kg", "five kilograms"),
        ("200 ms", "two hundred milliseconds"),
    ],
    "range": [
        ("3-5 minutes", "three to five minutes"),
        ("1990-2000", "nineteen ninety to two thousand"),
    ],
    "fraction": [
        ("1/2", "a half"),
        ("3/4 cup", "three quarters cup"),
        ("2/3", "two thirds"),
        ("24/7", "twenty-four seven"),
    ],
    "version": [
        ("v1.2.3", "version one point two point three"),
        ("version 2.0.1", "version two point zero point one"),
        ("v2", "version two"),
    ],
    "digit string": [
        ("007", "zero zero seven"),
        ("call 555-1234", "call five five five, one two three four"),
        ("192.168.1.1", "one nine two dot one six eight dot one dot one"),
        ("12345678901234567890", " ".join("one two three four five six seven eight nine zero".split() * 2)),
    ],
    "model name": [
        ("R2D2", "R two D two"),
        ("an A320 jet", "an A three twenty jet"),
        ("4K video", "four K video"),
    ],
}


@pytest.mark.parametrize(
    ("written", "spoken"),
    [pytest.param(w, s, id=f"{cls}: {w}") for cls, rows in SPOKEN_NUMBERS.items() for w, s in rows],
)
def test_numbers_are_spoken_as_a_listener_expects(written, spoken):
    assert clean_for_speech(written) == spoken


def test_no_digit_is_left_for_the_voice_to_guess():
    for rows in SPOKEN_NUMBERS.values():
        for written, _ in rows:
            assert not any(ch.isdigit() for ch in " ".join(say_numbers(written).split())), written
    assert len(RULES) >= 10


@pytest.mark.parametrize(
    ("raw", "spoken"),
    [
        ("**Sure!** Go to [the kitchen](http://x.com).", "Sure! Go to the kitchen."),
        (
            "Move 10 m at 1.5 m/s, then 1 m left.",
            "Move ten meters at one point five meters per second, then one meter left.",
        ),
        ("It is 22°C & 45% humid 😀", "It is twenty-two degrees Celsius and forty-five percent humid"),
        ("See https://example.com/a?b=1", "See a link"),
        ("## Plan\n- go 3 km", "Plan go three kilometers"),
        ("Go to #3 now", "Go to number three now"),
        ("It is 3 < 5 and 7 > 2.", "It is three less than five and seven greater than two."),
        ("```", ""),
    ],
)
def test_clean_for_speech(raw, spoken):
    assert clean_for_speech(raw) == spoken


@pytest.mark.parametrize(
    ("raw", "spoken"),
    [
        ('{"name": "move", "arguments": {"distance_m": 2}}', ""),
        ('Okay. {"name": "move", "arguments": {"distance_m": 2}} Done.', "Okay. Done."),
        ('<tool_call>{"name": "go_to", "arguments": {"room": "kitchen"}}</tool_call>', ""),
        ('<tool_call>{"name": "go_to"', ""),  # cut off mid-call by the chunker
        ('{ "ok": true', ""),  # an object split across chunks: its first line...
        ('"distance_m": 2.5,', ""),  # ... a member line ...
        ("}", ""),  # ... and its closing brace
        ("],", ""),
        ('[{"a": 1}, {"b": [1, 2]}]', ""),
        ("[1, 2, 3]", ""),
        ('["kitchen", "hall"]', ""),
        ("[laughs] Sure.", "laughs Sure."),
        ("The room {kitchen} is clean.", "The room is clean."),
        ("```python\nprint(1)\nx = 2\n```", ""),
        ("Here:\n```\nrm -rf /\n", "Here:"),
        ("```python", ""),
        ("I am <b>here</b>.<br/>", "I am here."),
        ("Done<|im_end|>", "Done"),
        ("It is 3 < 5 and 7 > 2.", "It is three less than five and seven greater than two."),
        ('He said "hi": twice.', 'He said "hi": twice.'),
        ("Move 2 m forward, then turn 90°.", "Move two meters forward, then turn ninety degrees."),
    ],
)
def test_machine_text_is_never_spoken(raw, spoken):
    assert clean_for_speech(raw) == spoken


@pytest.mark.parametrize(
    "text",
    ["[" * 20000, "{" * 20000, "![" * 10000, " " * 20000 + ".", "1" * 20000, "1." * 10000, "a@b." * 5000, "<" * 20000],
)
def test_cleaning_a_huge_pathological_input_takes_milliseconds_not_minutes(text):
    """A 20,000-character line typed or emitted once made the cleaner run for 30-70 s (quadratic
    patterns) while the stdin reader - and so a typed "stop" behind it - waited."""
    started = time.perf_counter()
    clean_for_speech(text)
    assert time.perf_counter() - started < 1.0
