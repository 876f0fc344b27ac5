"""Units of measurement in requests and in tool docstrings, read and converted with ``pint``.

A quantity said in one unit is converted to the unit a tool parameter declares ("fifty
centimetres" for ``distance_m`` is 0.5, "a ninety second timer" for ``minutes`` is 1.5,
"ten feet" for a height in metres is 3.048); a quantity of another dimension is never a
value for it (ten seconds is no distance: the robot asks).

Which words are units, as principles (each a row of ``tests/language/test_units.py``):

- after a number, any unit name or symbol pint knows ("5 m", "30 cm", "ninety degrees",
  "two turns", "50 percent", "3 mph"), except closed-class English words that pint also
  defines ("a" is a year, "are" 100 square metres, "in" an inch, "at" a technical
  atmosphere): those are read as English;
- in a parameter's name, a last part after ``_`` that is a unit symbol (``distance_m``,
  ``timeout_s``, ``angle_deg``, ``speed_pct``) or any part that is a unit name
  (``minutes``, ``height_cm``);
- in a parameter's description, a unit name that is plural ("in metres", "degrees"), or
  follows "in", "per", "as" or a digit ("Speed in percent", "0-100 percent"): a singular
  noun alone ("the second arm", "How far to turn") is English, not a unit.

Angles are dimensionless to pint (a radian is a ratio of lengths); here an angle (degrees,
radians, turns) and a ratio (percent) are different dimensions, so "fifty percent" is
never fifty degrees.

Rejected alternative: a hand-written table of unit words (the previous ``UNIT_WORDS``): it
knew 12 units, missed "mph", "kg", "litres", "rpm" and Celsius, and converted by hand.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Any, NamedTuple

NOT_UNITS = frozenset(
    "a an are at in and or of to by per point as it is be on off up me my no count bit half quarter third dozen couple".split()
)
"""English words pint also defines as units: closed-class words, and the words English uses for
amounts and fractions ("a *quarter* turn", "a *couple* of", "count", "bit"). Never units."""
SYMBOL_SUFFIXES = frozenset("s ms min h hr m cm mm km deg rad pct kg g l ml mps kph kmh rpm".split())
"""Unit symbols read from the last part of a parameter name (``distance_m``)."""
COMMON_PREFIXES = frozenset(("kilo", "centi", "milli"))
"""SI prefixes read in speech ("km", "centimetres", "mm", "kg"); a word that parses only with
another prefix is an English word ("fly" would be a femto-light-year)."""
_ALIASES = {"pct": "percent", "percentage": "percent", "perc": "percent", "kmh": "kph"}
_UNCOUNTABLE = frozenset(("percent",))


class Unit(NamedTuple):
    """A unit of measurement: its dimension, pint's name for it, and how to say it."""

    dimension: str
    """"length", "time", "angle", "ratio", "speed", "temperature", ... (see :func:`unit`)."""
    pint_name: str
    spoken: str
    """Plural, as said in a question ("meters", "degrees", "percent")."""


_lock = threading.Lock()
_registry: Any = None


def _ureg() -> Any:
    global _registry
    with _lock:
        if _registry is None:
            import pint

            _registry = pint.UnitRegistry()
        return _registry


@functools.lru_cache(maxsize=4096)
def unit(word: str) -> Unit | None:
    """The unit a single word names (a symbol or a name, singular or plural), or None."""
    w = word.strip().lower()
    w = _ALIASES.get(w, w)
    if not w or w in NOT_UNITS or not re.fullmatch(r"[a-z%]+", w):
        return None
    ureg = _ureg()
    try:
        candidates = ureg.parse_unit_name(w)
    except Exception:  # noqa: BLE001 - pint raises several types for names it cannot read
        return None
    if len(candidates) != 1:
        return None  # "min": minute or milli-inch; ambiguous symbols are not read
    prefix, name, suffix = candidates[0]
    if prefix and prefix not in COMMON_PREFIXES:
        return None  # "fly" is no femto-light-year, "pinch" no pico-inch
    full = f"{prefix}{name}{suffix}"
    q = ureg.Quantity(1, full)
    dimension = _dimension(q)
    if dimension in HUMAN_SCALE:
        lo, hi = HUMAN_SCALE[dimension]
        if not lo <= float(q.to_base_units().magnitude) <= hi:
            return None  # "give it a good *shake*": no ten nanoseconds (pint's "shake")
    return Unit(dimension, full, _spoken(full))


HUMAN_SCALE = {"time": (1e-3, 1e9), "length": (1e-4, 1e7)}
"""Units people say to a robot are of a human scale (base units: seconds, metres): pint also
defines physicists' units that are everyday English words ("shake", 10 ns), never meant."""


def _dimension(q: Any) -> str:
    dims = str(q.dimensionality)
    if dims == "dimensionless":
        root = str(q.to_base_units().units)
        return "angle" if "radian" in root else "ratio"
    names = {
        "[length]": "length",
        "[time]": "time",
        "[mass]": "mass",
        "[temperature]": "temperature",
        "[length] / [time]": "speed",
        "[length] ** 3": "volume",
        "1 / [time]": "angular speed" if "radian" in str(q.to_base_units().units) else "frequency",
    }
    return names.get(dims, dims)


def _spoken(pint_name: str) -> str:
    words = pint_name.replace("degree_Celsius", "degree Celsius").replace("_", " ").split()
    if words and words[0] in _UNCOUNTABLE:
        return " ".join(words)
    from lemminflect import getInflection, getLemma

    if getLemma(words[0], upos="NOUN") not in ((words[0],), ()):
        return " ".join(words)  # "revolutions per minute": already plural
    plural = getInflection(words[0], "NNS")
    return " ".join([plural[0] if plural else words[0] + "s", *words[1:]])


def convert(value: float, said: Unit | None, wanted: Unit | None) -> float:
    """``value`` in ``said`` expressed in ``wanted`` (unchanged when either is unknown).

    Raises :class:`UnitMismatch` across dimensions."""
    if said is None or wanted is None or said.pint_name == wanted.pint_name:
        return value
    if said.dimension != wanted.dimension:
        raise UnitMismatch(f"{value:g} {said.spoken} is not a {wanted.dimension}")
    q = _ureg().Quantity(value, said.pint_name).to(wanted.pint_name)
    return round(float(q.magnitude), 6)


class UnitMismatch(ValueError):
    """A quantity said in a unit of another dimension than the parameter's (seconds for meters)."""


def same_dimension(said: Unit | None, wanted: Unit | None) -> bool:
    """False only when both units are known and measure different things."""
    return said is None or wanted is None or said.dimension == wanted.dimension


def parameter_unit(name: str, description: str = "") -> Unit | None:
    """The unit a parameter declares (see the module docstring for the rules)."""
    parts = [p for p in name.lower().split("_") if p]
    if len(parts) > 2 and parts[-1] in SYMBOL_SUFFIXES and parts[-2] in SYMBOL_SUFFIXES:
        top, bottom = unit(parts[-2]), unit(parts[-1])
        rate = per(top, bottom) if top is not None and bottom is not None else None
        if rate is not None:
            return rate  # ``speed_m_s``: metres per second, not seconds
    if parts and parts[-1] in SYMBOL_SUFFIXES and (len(parts) > 1 or unit(parts[-1]) is not None):
        found = unit(parts[-1])
        if found is not None:
            return found
    for part in parts:
        if len(part) > 3 and (found := unit(part)) is not None:
            return found
    words = re.findall(r"[a-z%]+|\d", description.lower())
    for i in range(1, len(words) - 1):
        if (
            words[i] in ("per", "a")
            and (top := unit(words[i - 1])) is not None
            and (bottom := unit(words[i + 1])) is not None
        ):
            if words[i] == "per" or bottom.dimension == "time":
                rate = per(top, bottom)
                if rate is not None:
                    return rate  # "in revolutions per minute", "metres a second": a rate
    for i, word in enumerate(words):
        if len(word) <= 3 and word not in ("%",):
            continue
        found = unit(word)
        if found is None:
            continue
        before = words[i - 1] if i else ""
        plural = word != found.pint_name and word.endswith("s")
        if plural or before in ("in", "per", "as") or before.isdigit() or word in _UNCOUNTABLE or word == "%":
            return found
    return None


def per(numerator: Unit, denominator: Unit) -> Unit | None:
    """A rate said in words ("metres per second", "metres a second")."""
    ureg = _ureg()
    try:
        q = ureg.Quantity(1, f"{numerator.pint_name} / {denominator.pint_name}")
    except Exception:  # noqa: BLE001 - pint raises several types for names it cannot combine
        return None
    return Unit(
        _dimension(q),
        f"{numerator.pint_name} / {denominator.pint_name}",
        f"{numerator.spoken} per {denominator.spoken[:-1] if denominator.spoken.endswith('s') else denominator.spoken}",
    )
