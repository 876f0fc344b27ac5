"""Numbers in spoken text: "two", "forty five", "one point five", "half a", "2.5".

Spoken forms read here (each a row of the numbers table test):

- hundreds said as two numbers: "one eighty" -> 180, "two seventy" -> 270, "one
  twenty five" -> 125, "room four twelve" -> 412 (a teen, only when no unit follows: "bed two,
  ten litres" stays 2 and 10), and "oh" as a zero digit *inside* a number: "one oh five" ->
  105, "two point oh five" -> 2.05. A lone "oh" is an interjection ("oh move forward
  two" -> 2), never a zero.
- signs: "minus two", "negative two", "-2" -> -2, flagged ``signed`` so an explicit
  sign wins over direction words (see ``resolver.py``).
- digits said one by one, three or more in a row: "two seven zero" -> 270, "zero four five"
  -> 45 (a heading, a channel, a code); two in a row are two numbers ("one two" -> 1, 2).
- a tens word takes a units word, "ten" and the teens never do: "ten, five" -> 10, 5 (the
  comma is gone by the time words are read), "twenty five" -> 25.
- "a hundred and five" -> 105, "two and a half" -> 2.5, "a metre and a half" -> 1.5 (metres),
  "a couple of" -> 2.

Speech recognisers write numbers either way, and small models copy digits far more
reliably than they convert words, so the schema resolver normalises numbers first.
:func:`find_numbers` works on a list of lower-case word tokens and returns every
number with the token span it covers.

Units: :func:`spoken_unit` reads the unit said after a number ("ninety *seconds*", "half *a
turn*"); what a unit is and how it converts is :mod:`edgevox.language.units` (pint).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from edgevox.language.units import Unit, per, unit

UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fourty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
SCALES = {"hundred": 100, "thousand": 1000}
SIGN_WORDS = frozenset(("minus", "negative"))
ZERO_DIGIT = "oh"
"""Zero only between digits of one number ("one oh five"), else an interjection."""
FRACTIONS = {"half": 0.5, "quarter": 0.25, "third": 1 / 3}
"""Fractions said without an article ("*half* a metre", "a *quarter* turn")."""
COUNTS = {"couple": 2, "dozen": 12}
ORDINALS = {
    **{
        w: v
        for w, v in zip("first second third fourth fifth sixth seventh eighth ninth".split(), range(1, 10), strict=True)
    },
    **{w: v for w, v in zip("tenth eleventh twelfth".split(), range(10, 13), strict=True)},
    **{f"{w[:-1] if w.endswith('t') else w}th": v for w, v in UNITS.items() if 13 <= v <= 19},
    **{f"{w[:-1]}ieth": v for w, v in TENS.items() if w != "fourty"},
}
"""Ordinal words: a place in an order ("the *fourth* drawer", "the *third* floor")."""
DENOMINATORS = {
    "half": 2,
    "halves": 2,
    "quarter": 4,
    "quarters": 4,
    **{w: v for w, v in ORDINALS.items() if v >= 3},
    **{f"{w}s": v for w, v in ORDINALS.items() if v >= 3},
}
"""English names a fraction's denominator with "half", "quarter" or an ordinal from three on
("a *tenth*", "three *fifths*"); after "a" or a count the ordinal is a fraction, not a place."""


def _past_of(tokens: list[str], end: int) -> int:
    """After a fraction, "of a" before a unit belongs to it ("a tenth *of a* metre")."""
    if end < len(tokens) and tokens[end] == "of":
        end += 1
        if end + 1 < len(tokens) and tokens[end] in ("a", "an") and _unit_word(tokens[end + 1]) is not None:
            end += 1
    return end


def _counted_part(count: float, word: str) -> float | None:
    """ "one third", "three quarters": the part a count of a fraction takes, the word plural
    after two or more ("bench seven half a litre" is no three and a half); else None."""
    part = fraction(word)
    plural = word.endswith("s")
    counted = (count == 1 and not plural) or (count > 1 and plural and float(count).is_integer())
    return part if part is not None and counted else None


def fraction(word: str) -> float | None:
    """The part one denominator word names ("tenth" -> 0.1, "quarters" -> 0.25), else None."""
    d = DENOMINATORS.get(word)
    return 1 / d if d else None


DEFINITE = frozenset("the my your our its his her their this that".split())
"""A definite determiner: after it an ordinal names one thing of a row ("*the* third floor");
"a third", "one third" are fractions."""
_ORDINAL_RE = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
MULTIPLICATIVES = {"once": 1, "twice": 2, "thrice": 3}
"""Adverbs of how many times ("sound the horn *twice*"): a count."""
_DIGITS_RE = re.compile(r"^-?\d+(?:\.\d+)?$")


@dataclass(frozen=True)
class NumberSpan:
    value: float
    start: int
    """Index of the first token of the number."""
    end: int
    """Index one past the last token."""
    signed: bool = False
    """Said with an explicit sign ("minus two", "-2")."""


def _integer_words(tokens: list[str], i: int) -> tuple[float, int] | None:
    """Parse a spelled-out integer starting at ``i``: returns (value, next index)."""
    total = 0
    current = 0
    j = i
    seen = False
    while j < len(tokens):
        t = tokens[j]
        if seen and j == i + 1 and 1 <= current <= 19 and t in TENS:
            current = current * 100 + TENS[t]  # "one eighty" -> 180, "nineteen ninety"
        elif (
            seen
            and j == i + 1
            and 1 <= current <= 9
            and t == ZERO_DIGIT
            and j + 1 < len(tokens)
            and 1 <= UNITS.get(tokens[j + 1], 0) <= 9
        ):
            current = current * 100 + UNITS[tokens[j + 1]]  # "one oh five" -> 105
            j += 1
        elif (
            seen
            and j == i + 1
            and 1 <= current <= 9
            and 10 <= UNITS.get(t, 0) <= 19
            and not (j + 1 < len(tokens) and _unit_word(tokens[j + 1]) is not None)
        ):
            current = current * 100 + UNITS[t]  # "room four twelve" -> 412 (a label: no unit follows)
        elif t in UNITS:
            if seen and current % 10 != 0 and current != 0:
                break  # "two three" is two numbers
            if seen and current >= 10 and current % 10 == 0 and current < 100 and UNITS[t] >= 10:
                break
            if seen and 10 <= current % 100 <= 19:
                break  # "ten five": no English number puts a unit after "ten" or a teen
            current += UNITS[t]
        elif t in TENS:
            if seen and current % 100 != 0:
                break
            current += TENS[t]
        elif t in SCALES and seen:
            current = max(current, 1) * SCALES[t]
            if SCALES[t] >= 1000:
                total += current
                current = 0
        elif t == "and" and seen and j + 1 < len(tokens) and (tokens[j + 1] in UNITS or tokens[j + 1] in TENS):
            pass  # "a hundred and five"
        else:
            break
        seen = True
        j += 1
    if not seen:
        return None
    return float(total + current), j


def _decimal_point_at(tokens: list[str], k: int) -> bool:
    """``tokens[k]`` is "point" followed by a digit ("point *five*", "point *5*")."""
    if k + 1 >= len(tokens) or tokens[k] != "point":
        return False
    nxt = tokens[k + 1]
    return (nxt in UNITS and UNITS[nxt] < 10) or nxt == ZERO_DIGIT or bool(re.fullmatch(r"\d", nxt))


DIGIT_RUN = 3
"""Single digits said in a row, this many or more, are one number read digit by digit."""


def _digit_run(tokens: list[str], i: int) -> list[str]:
    """The digits of single-digit words from ``i`` on ("two seven zero"; "oh" after the first)."""
    out: list[str] = []
    for t in tokens[i:]:
        if t in UNITS and UNITS[t] <= 9:
            out.append(str(UNITS[t]))
        elif t == ZERO_DIGIT and out:
            out.append("0")
        else:
            break
    return out


def _ordinal(tokens: list[str], i: int) -> tuple[float, int] | None:
    """An ordinal as a number ("the *fourth* drawer" -> 4, "the *twenty first* floor" -> 21,
    "bed *3rd*" -> 3): said after a definite determiner (else "a third" is a fraction and
    "first, lower the arm" an order of steps), or written with its suffix. Not before a unit:
    "the first metre" is a stretch of the way, not a number of metres."""
    t = tokens[i]
    if (m := _ORDINAL_RE.match(t)) is not None:
        return float(m.group(1)), i + 1
    if i == 0 or tokens[i - 1] not in DEFINITE:
        return None
    value, end = 0, i
    if t in TENS and i + 1 < len(tokens) and ORDINALS.get(tokens[i + 1], 10) < 10:
        value, end = TENS[t], i + 1  # "the twenty *first*"
    if tokens[end] not in ORDINALS:
        return None
    value += ORDINALS[tokens[end]]
    if end + 1 < len(tokens) and _unit_word(tokens[end + 1]) is not None:
        return None
    return float(value), end + 1


METRE_WORDS = frozenset("metre metres meter meters".split())


def find_numbers(tokens: list[str]) -> list[NumberSpan]:
    """All numbers in ``tokens`` (lower-case words; digits like ``2.5`` as one token)."""
    spans: list[NumberSpan] = []
    i = 0
    n = len(tokens)
    while i < n:
        t = tokens[i]
        value: float | None = None
        end = i
        digits = _digit_run(tokens, i)
        if len(digits) >= DIGIT_RUN:
            value, end = float("".join(digits)), i + len(digits)  # "two seven zero" -> 270
        elif _DIGITS_RE.match(t):
            value, end = float(t), i + 1
        elif _decimal_point_at(tokens, i if t == "point" else i + 1) and t in ("oh", "zero", "o", "point"):
            value, end = 0.0, (i if t == "point" else i + 1)  # "point five", "oh point five" -> 0.5
        elif t in ("a", "an") and i + 1 < n and tokens[i + 1] in SCALES:
            parsed = _integer_words([*tokens[:i], "one", *tokens[i + 1 :]], i)  # "a hundred and five"
            assert parsed is not None
            value, end = parsed
        elif t in ("a", "an") and i + 1 < n and _unit_word(tokens[i + 1]) is not None:
            value, end = 1.0, i + 1  # "an hour", "a meter": one of the unit
        elif (ordinal := _ordinal(tokens, i)) is not None:
            value, end = ordinal
        elif t in ("a", "an", "one") and i + 1 < n and (part := fraction(tokens[i + 1])) is not None:
            value, end = part, _past_of(tokens, i + 2)  # "a half", "a quarter", "a tenth", "one fifth"
        elif t in FRACTIONS:
            value, end = FRACTIONS[t], i + 1  # "half a meter"
            if end < n and tokens[end] in ("a", "an", "of"):
                end += 1
        elif t in WHOLE_WORDS and i + 1 < n and _unit_word(tokens[i + 1]) is not None:
            value, end = 1.0, i + 1  # "a full turn", "one whole rotation" (the unit converts it)
        elif t in MULTIPLICATIVES:
            value, end = float(MULTIPLICATIVES[t]), i + 1
        elif t in COUNTS or (t == "a" and i + 1 < n and tokens[i + 1] in COUNTS):
            k = i + 1 if t == "a" else i
            value, end = float(COUNTS[tokens[k]]), k + 1
            if end < n and tokens[end] == "of":
                end += 1
        else:
            parsed = _integer_words(tokens, i)
            if parsed is not None:
                value, end = parsed
        if value is None:
            i += 1
            continue
        # "one point five", "2 point 5"
        if end + 1 < n and tokens[end] == "point":
            digits = []
            k = end + 1
            while k < n and (
                tokens[k] in UNITS
                and UNITS[tokens[k]] < 10
                or tokens[k] == ZERO_DIGIT
                or re.fullmatch(r"\d", tokens[k])
            ):
                digits.append("0" if tokens[k] == ZERO_DIGIT else str(UNITS.get(tokens[k], tokens[k])))
                k += 1
            if digits:
                value = float(f"{int(value)}.{''.join(digits)}")
                end = k
        # "three quarters", "two thirds", "three tenths of a metre": a count of a fraction
        if end < n and t.isalpha() and t not in ("a", "an") and (part := _counted_part(value, tokens[end])):
            value, end = value * part, _past_of(tokens, end + 1)
        # "two and a half", "one and a quarter"
        if end + 2 < n and tokens[end] == "and" and tokens[end + 1] in ("a", "an") and tokens[end + 2] in FRACTIONS:
            value += FRACTIONS[tokens[end + 2]]
            end += 3
        # "two full turns": the quantity word belongs to the number, the unit follows it
        if end + 1 < n and tokens[end] in WHOLE_WORDS and _unit_word(tokens[end + 1]) is not None:
            end += 1
        # "a metre and a half", "two hours and a quarter": the fraction follows the unit; the
        # span ends before the unit, which is read after it as usual
        resume = end
        if end + 1 < n and tokens[end] in METRE_WORDS:
            # "one metre twenty": centimetres after the metres, when nothing measures them
            cm = _integer_words(tokens, end + 1)
            if cm is not None and cm[0] < 100 and (cm[1] >= n or _unit_word(tokens[cm[1]]) is None):
                if cm[1] >= n or tokens[cm[1]] not in ("times", "time"):
                    value += cm[0] / 100
                    resume = cm[1]
        if (
            end + 3 < n
            and _unit_word(tokens[end]) is not None
            and tokens[end + 1] == "and"
            and tokens[end + 2] in ("a", "an")
            and tokens[end + 3] in FRACTIONS
        ):
            value += FRACTIONS[tokens[end + 3]]
            resume = end + 4
        start, signed = i, t.startswith("-")
        if i > 0 and tokens[i - 1] in SIGN_WORDS:
            start, signed, value = i - 1, True, -abs(value)
        spans.append(NumberSpan(value, start, end, signed))
        i = resume
    return spans


SPOKEN_ONLY_UNITS = {"rotation": "turn", "rotations": "turn", "circle": "turn", "circles": "turn"}
"""Words that are units only right after a number ("half a *rotation*"); pint does not know them."""
WHOLE_WORDS = frozenset(("full", "whole", "complete", "entire"))
"""Quantity words that mean one of the unit that follows ("a *full* turn" is 360 degrees)."""


def _unit_word(word: str) -> Unit | None:
    return unit(SPOKEN_ONLY_UNITS.get(word, word))


def spoken_unit(tokens: list[str], number_end: int) -> Unit | None:
    """The unit said right after a number ending at ``number_end`` ("ninety *seconds*",
    "half *an hour*", "two full *turns*")."""
    i = number_end
    if i < len(tokens) and tokens[i] in ("a", "an") and i + 1 < len(tokens):
        i += 1
    if i < len(tokens) and tokens[i] in WHOLE_WORDS and i + 1 < len(tokens):
        i += 1
    if i >= len(tokens):
        return None
    found = _unit_word(tokens[i])
    if found is None and i + 1 < len(tokens) and (found := _unit_word(tokens[i] + tokens[i + 1])) is not None:
        i += 1  # "fifteen arc minutes": a unit's name written as two words ("arcminutes")
    # "three metres per second", "half a metre a second": a rate
    if found is not None and i + 2 < len(tokens) and tokens[i + 1] in ("per", "a", "an", "every", "each"):
        rate_of = _unit_word(tokens[i + 2])
        if rate_of is not None and rate_of.dimension == "time":
            return per(found, rate_of) or found
    return found


def as_number(value: float, integer: bool = False) -> float | int:
    """``2.0`` -> ``2`` (ints stay ints in JSON), fractions kept."""
    if integer or float(value).is_integer():
        return int(round(value))
    return value
