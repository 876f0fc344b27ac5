"""Numbers in reply text as a listener expects to hear them (words come from ``num2words``).

:func:`say_numbers` rewrites every number in a chunk of reply text by the first rule of
:data:`RULES` that matches it (``tests/voice/test_speechtext.py`` has a table row per class):

===============  =======================  ================================================
class            written                  spoken
===============  =======================  ================================================
ISO date         ``2024-03-15``           "March fifteenth, twenty twenty-four"
time             ``3:30 pm``, ``3:05``    "three thirty p m", "three oh five"
money            ``$3.50``, ``$0.99``     "three dollars and fifty cents", "ninety-nine cents"
version          ``v1.2.3``               "version one point two point three"
decade           ``1990s``, ``'80s``      "nineteen nineties", "eighties"
range            ``3-5``, ``1990-2000``   "three to five", "nineteen ninety to two thousand"
fraction         ``3/4``, ``24/7``        "three quarters", "twenty-four seven"
ordinal          ``21st``                 "twenty-first"
year             ``in 1990``              "in nineteen ninety" (after a cue word, before BC/AD)
quantity + unit  ``-5 °C``, ``45%``       "minus five degrees Celsius", "forty-five percent"
digit string     ``007``, ``555-1234``    "zero zero seven", "five five five, one two three four"
model name       ``A320``, ``R2D2``       "A three twenty", "R two D two"
===============  =======================  ================================================

A plain number is a cardinal ("1,200" -> "one thousand two hundred"; num2words says
"one hundred and five"), a decimal is read digit by digit after "point", and a run of
more than 15 digits or one with a leading zero is an identifier read digit by digit. A
bare four-digit number is a year only after a cue (``in``, ``since``, a month ...):
"2024 steps" is a count. "am"/"pm" become the letters "a m"/"p m", which every voice
spells. The commas num2words puts in big numbers are dropped: a voice pauses at them.

Why num2words and not the hand-written converter this replaced (which said "1990s" as
"one thousand nine hundred ninety seconds" and "$3.50" as "three point five zero
dollars"): it knows years, ordinals and currency names, imports in ~25 ms and costs
~20-40 us a number (``scripts/bench_text_libs.py``). ``inflect`` was measured and not
used: ~1.8 s to import (typeguard instruments it), for nothing num2words lacks here.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable

from num2words import CONVERTER_CLASSES, num2words

# unit -> (singular, plural). Matched only right after a number.
UNITS: dict[str, tuple[str, str]] = {
    "km/h": ("kilometer per hour", "kilometers per hour"),
    "m/s": ("meter per second", "meters per second"),
    "mph": ("mile per hour", "miles per hour"),
    "rpm": ("revolution per minute", "revolutions per minute"),
    "mm": ("millimeter", "millimeters"),
    "cm": ("centimeter", "centimeters"),
    "km": ("kilometer", "kilometers"),
    "m": ("meter", "meters"),
    "kg": ("kilogram", "kilograms"),
    "g": ("gram", "grams"),
    "ms": ("millisecond", "milliseconds"),
    "s": ("second", "seconds"),
    "sec": ("second", "seconds"),
    "min": ("minute", "minutes"),
    "h": ("hour", "hours"),
    "hz": ("hertz", "hertz"),
    "khz": ("kilohertz", "kilohertz"),
    "v": ("volt", "volts"),
    "w": ("watt", "watts"),
    "kw": ("kilowatt", "kilowatts"),
    "mah": ("milliamp hour", "milliamp hours"),
    "°c": ("degree Celsius", "degrees Celsius"),
    "°f": ("degree Fahrenheit", "degrees Fahrenheit"),
    "°": ("degree", "degrees"),
    "%": ("percent", "percent"),
    "gb": ("gigabyte", "gigabytes"),
    "mb": ("megabyte", "megabytes"),
}

CURRENCIES = {"$": "USD", "€": "EUR", "£": "GBP"}
"""Currency symbol -> num2words currency code (its unit and cent names)."""

YEAR_CUES = frozenset(
    "in since by until till from to of before after during around circa year early late mid"
    " spring summer autumn fall winter".split()
) | frozenset(m.lower() for m in calendar.month_name[1:])
"""A four-digit number right after one of these words is a year ("in 1990", "March 2024")."""

DECADE_CUES = frozenset("the early late mid".split())
"""``90s`` after one of these words is a decade ("the 90s"); otherwise it is ninety seconds."""

YEAR_RANGE = (1000, 2099)
"""Four-digit numbers that can be years."""

MAX_QUANTITY_DIGITS = 15
"""Longer digit runs are identifiers, read digit by digit."""

_DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_FRACTION_NAMES = {2: ("half", "halves"), 4: ("quarter", "quarters")}
_NUM = r"\d{1,3}(?:,\d{3})+|\d+"
_UNIT_ALTERNATIVES = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))


def cardinal(n: int) -> str:
    """``1205`` -> "one thousand two hundred and five" (num2words, without its commas)."""
    return num2words(n).replace(",", "")


def year(n: int) -> str:
    """``1990`` -> "nineteen ninety", ``2005`` -> "two thousand and five"."""
    return num2words(n, to="year").replace(",", "")


def ordinal(n: int) -> str:
    """``21`` -> "twenty-first"."""
    return num2words(n, to="ordinal").replace(",", "")


def digits(text: str) -> str:
    """``"007"`` -> "zero zero seven" (an identifier, a code)."""
    return " ".join(_DIGITS[int(d)] for d in text if d.isdigit())


def plural(words: str) -> str:
    """ "nineteen ninety" -> "nineteen nineties" (a decade)."""
    return words[:-1] + "ies" if words.endswith("y") else words + "s"


def quantity(whole: str, fraction: str | None = None, sign: str = "") -> str:
    """A written number as a quantity: ``("1,200", "5")`` -> "one thousand two hundred point five"."""
    plain = whole.replace(",", "")
    if len(plain) > MAX_QUANTITY_DIGITS or (len(plain) > 1 and plain[0] == "0" and not fraction):
        words = digits(plain[:40])
    else:
        words = cardinal(int(plain))
        if fraction:
            words += " point " + digits(fraction[:40])
    return ("minus " if sign else "") + words


def _word_before(match: re.Match[str]) -> str:
    found = re.search(r"([A-Za-z]+)[^\w\n]{0,2}$", match.string[max(0, match.start() - 24) : match.start()])
    return found.group(1).lower() if found else ""


def _word_after(match: re.Match[str]) -> str:
    found = re.match(r"\s?([A-Za-z]+)", match.string[match.end() : match.end() + 8])
    return found.group(1) if found else ""


def _is_year(match: re.Match[str], text: str) -> bool:
    if len(text) != 4 or not YEAR_RANGE[0] <= int(text) <= YEAR_RANGE[1]:
        return False
    return _word_before(match) in YEAR_CUES or _word_after(match) in ("BC", "AD", "BCE", "CE")


# -- the rules, in the order they apply ------------------------------------------------------


def _iso_date(m: re.Match[str]) -> str:
    y, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return digits(m.group(1)) + ", " + digits(m.group(2)) + ", " + digits(m.group(3))
    return f"{calendar.month_name[month]} {ordinal(day)}, {year(y)}"


def _time(m: re.Match[str]) -> str:
    hour, minute, meridiem = int(m.group(1)), int(m.group(2)), m.group(3)
    if minute == 0:
        words = cardinal(hour) + ("" if meridiem else " hundred" if hour > 12 else " o'clock")
    elif minute < 10:
        words = f"{cardinal(hour)} oh {cardinal(minute)}"
    else:
        words = f"{cardinal(hour)} {cardinal(minute)}"
    return words + (f" {meridiem[0].lower()} m" if meridiem else "")


def _clock_hour(m: re.Match[str]) -> str:
    return f"{cardinal(int(m.group(1)))} {m.group(2)[0].lower()} m"


def _money(m: re.Match[str]) -> str:
    forms = CONVERTER_CLASSES["en"].CURRENCY_FORMS[CURRENCIES[m.group(1)]]
    (unit_one, unit_many), (cent_one, cent_many) = [
        (a.removesuffix(" sterling"), b.removesuffix(" sterling")) for a, b in forms
    ]
    whole, fraction, scale = m.group(2).replace(",", ""), m.group(3), m.group(4)
    if scale or (fraction and len(fraction) != 2):  # "$3.5 million", "$3.999": a quantity of dollars
        return f"{quantity(whole, fraction)}{' ' + scale if scale else ''} {unit_many}"
    dollars, cents = int(whole), int(fraction or 0)
    parts = []
    if dollars or not cents:
        parts.append(f"{cardinal(dollars)} {unit_one if dollars == 1 else unit_many}")
    if cents:
        parts.append(f"{cardinal(cents)} {cent_one if cents == 1 else cent_many}")
    return " and ".join(parts)


def _version(m: re.Match[str]) -> str:
    prefix, number = m.group(1) or m.group(3), m.group(2) or m.group(4)
    parts = number.split(".")
    if len(parts) >= 4 and not prefix:  # an address: "one nine two dot one six eight dot ..."
        return " dot ".join(digits(p) for p in parts)
    return ("version " if prefix else "") + " point ".join(quantity(p) for p in parts)


def _glued(m: re.Match[str]) -> str:
    number = m.group(0)
    if number[0] == "0" and len(number) > 1 or len(number) > 4:
        words = digits(number)
    else:
        words = cardinal(int(number)) if len(number) <= 2 else year(int(number))  # "A320": "A three twenty"
    return f" {words} "


def _decade(m: re.Match[str]) -> str:
    apostrophe, number = m.group(1), m.group(2)
    if not number.endswith("0") or (len(number) == 2 and not apostrophe and _word_before(m) not in DECADE_CUES):
        return m.group(0)  # "90s" is ninety seconds, "1995s" is not a decade: the unit rule reads it
    return plural(year(int(number)) if len(number) == 4 else cardinal(int(number)))


def _range(m: re.Match[str]) -> str:
    low, high = m.group(1), m.group(2)
    if len(low) == len(high) == 4 and all(YEAR_RANGE[0] <= int(x) <= YEAR_RANGE[1] for x in (low, high)):
        return f"{year(int(low))} to {year(int(high))}"
    if len(low) <= 3 and len(high) <= 3 and int(low) < int(high) and low[0] != "0":
        return f"{cardinal(int(low))} to {cardinal(int(high))}"
    return ", ".join(digits(group) for group in re.split("[-–]", m.group(0)))  # a phone number, a code


def _fraction(m: re.Match[str]) -> str:
    top, bottom = int(m.group(1)), int(m.group(2))
    if not 0 < top < bottom <= 10:
        return f"{cardinal(top)} {cardinal(bottom)}"  # "24/7", "50/50"
    one, many = _FRACTION_NAMES.get(bottom, (ordinal(bottom), ordinal(bottom) + "s"))
    return f"{'a' if top == 1 else cardinal(top)} {one if top == 1 else many}"


def _ordinal(m: re.Match[str]) -> str:
    return ordinal(int(m.group(1)))


def _number(m: re.Match[str]) -> str:
    sign, whole, fraction, unit = m.group(1), m.group(2), m.group(3), m.group(4)
    if not sign and not fraction and not unit and _is_year(m, whole):
        return year(int(whole))
    words = quantity(whole, fraction, sign)
    if unit:
        one, many = UNITS[unit.lower()]
        words += " " + (one if not fraction and whole == "1" else many)
    elif m.string[m.end() : m.end() + 1].isalpha():
        words += " "  # "4K": "four K"
    return words


RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"(?<![\w.-])(\d{4})-(\d{2})-(\d{2})(?![\w-])"), _iso_date),
    (re.compile(r"(?<![\w.:])(\d{1,2}):([0-5]\d)(?![\d:])(?:\s?([AaPp])(?:\.[Mm]\.|[Mm]\b))?"), _time),
    (re.compile(r"(?<![\w.:])(\d{1,2})\s?([AaPp])(?:\.[Mm]\.|[Mm]\b)"), _clock_hour),
    (
        re.compile(r"([$€£])\s?(" + _NUM + r")(?:\.(\d+))?(?:\s(thousand|million|billion|trillion)\b)?"),
        _money,
    ),
    (re.compile(r"(?<![\w.])(v|version\s)?(\d+(?:\.\d+){2,})(?![\w.]?\d)|(?<![\w.])(v)(\d+(?:\.\d+)?)\b"), _version),
    (re.compile(r"(?<![\w.])(')?(\d{2}|\d{4})'?s\b"), _decade),
    (re.compile(r"(?<![\w.,-])(\d+)[-–](\d+)(?:-\d+)*(?![\w.,]?\d)"), _range),
    (re.compile(r"(?<![\w./])(\d+)/(\d+)(?![\w/]|\.\d)"), _fraction),
    (re.compile(r"(?<![\w.])(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE), _ordinal),
    (
        re.compile(
            r"(?<![\w.])([-−]?)(" + _NUM + r")(?:\.(\d+))?(?!\d)(?:\s?(" + _UNIT_ALTERNATIVES + r")(?![\w/]))?",
            re.IGNORECASE,
        ),
        _number,
    ),
    (re.compile(r"(?<=[A-Za-z])\d+|\d+(?=[A-Za-z])"), _glued),
)
"""(pattern, spoken form) in the order they apply; each rule's output has no digits left."""


def say_numbers(text: str) -> str:
    """``text`` with every number written as words (see the module's table)."""
    if not any(ch.isdigit() for ch in text):
        return text
    for pattern, spoken in RULES:
        text = pattern.sub(spoken, text)
    return text
