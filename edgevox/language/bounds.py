"""Bounds a docstring states for a number, in words: "between 0 and 100", "-5 to 5",
"(0-100)", "at most 20", "30 at most", "up to 5 m", "at least 1", "max 2 m either way".

Read conservatively (each a row of ``tests/language/test_bounds.py``): two different ranges,
or two different values for one limit, read as none; a limit "either way" bounds the
magnitude; a remark in parentheses inside a range ("from 1 (damp) to 3 (wet)") is skipped.
``@tool`` puts what is read into the parameter's schema (``minimum``/``maximum``), so
validation enforces it and the resolver refuses values outside with a spoken reason.
"""

from __future__ import annotations

import re

_NUM = r"(-?\d+(?:\.\d+)?)"
_FIRST_UNIT = r"(?:\s*(?!(?:and|or|to)\b)[a-z%\u00b0/]{1,12})?"
"""A unit after the first number of a range ("from 5 ml to 200 ml", "between 10 cm and 50 cm")."""
_DOC_RANGES = (
    re.compile(rf"\bbetween\s+{_NUM}{_FIRST_UNIT}\s+and\s+{_NUM}(?!\w|\.\d)", re.IGNORECASE),
    re.compile(rf"(?:^|(?<=[\s,;:(]))(?:from\s+)?{_NUM}{_FIRST_UNIT}\s+to\s+{_NUM}(?!\w|\.\d)", re.IGNORECASE),
    re.compile(rf"\(\s*{_NUM}\s*(?:-|\u2013|\.\.)\s*{_NUM}\s*[a-z%\u00b0/]*\s*\)", re.IGNORECASE),
    # an en or em dash joins a range in prose ("0\u2013100")
    re.compile(rf"(?:^|(?<=\s)){_NUM}\s*[\u2013\u2014]\s*{_NUM}(?!\w|\.\d)", re.IGNORECASE),
    # the two ends said as the full extent: "0 is fully closed and 100 is fully open"
    re.compile(
        rf"\b{_NUM}\s+(?:is|means)\s+(?:fully|completely|all the way)\b[^.;]*?\b{_NUM}\s+(?:is|means)\s+"
        r"(?:fully|completely|all the way)\b",
        re.IGNORECASE,
    ),
)
"""Ranges read from a parameter's docstring: "-5 to 5", "from 0 to 10", "between 0 and 100",
"(0-100)", "(0-100 %)". Conservative: one range only, low < high, else none is read."""
_UNIT_GAP = r"(?:\s*(?!(?:and|or|to|but)\b)[a-z%\u00b0/]+){0,2}"
_DOC_LIMITS = (
    (
        "maximum",
        re.compile(
            rf"\b(?:at most|up to|no more than|not more than|limited to|no further than|no farther than|max(?:imum)?(?: of)?)\s+{_NUM}",
            re.I,
        ),
    ),
    ("maximum", re.compile(rf"{_NUM}{_UNIT_GAP}\s+(?:at most|max(?:imum)?)\b", re.I)),
    ("minimum", re.compile(rf"\b(?:at least|no less than|not less than|min(?:imum)?(?: of)?)\s+{_NUM}", re.I)),
    ("minimum", re.compile(rf"{_NUM}{_UNIT_GAP}\s+(?:at least|min(?:imum)?)\b", re.I)),
)
"""One-sided limits: "at most 20", "up to 5 m", "limited to 50 m", "30 at most", "max 2 m", "at least 1"."""
_EITHER_WAY = re.compile(r"\b(?:either way|in either direction|each way|either direction|in both directions)\b", re.I)
"""A limit "either way" bounds the magnitude: "at most 5 either way" is -5 to 5."""


def docstring_bounds(description: str, *, signed: bool = False) -> dict[str, float | int]:
    """``{"minimum": lo, "maximum": hi}`` from a range in ``description``, else the one-sided
    limits it states ("at most 20" -> ``{"maximum": 20}``; "at most 5 either way" -> -5 to 5),
    or ``{}``. Two different values for one limit read as none.

    ``signed``: the text gives negative values a meaning ("positive raises, negative lowers"),
    so a range that starts at zero or above bounds something else (the mast's travel, not a
    move of it), and a limit alone bounds the size either way ("at most 50 cm per move")."""
    found = {(m.group(1), m.group(2)) for rx in _DOC_RANGES for m in rx.finditer(description)}
    if not found:  # "from 1 (barely damp) to 3 (wet)": a remark in parentheses is not part of it
        plain = re.sub(r"\s*\([^()]*\)", "", description)
        found = {(m.group(1), m.group(2)) for rx in _DOC_RANGES[:2] for m in rx.finditer(plain)}
    if signed:
        found = {f for f in found if _number(f[0]) < 0}
    if len(found) > 1:
        return {}  # two different ranges: do not guess
    if found:
        lo, hi = (_number(x) for x in found.pop())
        return {"minimum": lo, "maximum": hi} if lo < hi else {}
    limits: dict[str, set[float | int]] = {}
    for key, rx in _DOC_LIMITS:
        for m in rx.finditer(description):
            limits.setdefault(key, set()).add(_number(m.group(1)))
    out: dict[str, float | int] = {k: next(iter(v)) for k, v in limits.items() if len(v) == 1}
    if (signed or _EITHER_WAY.search(description)) and "maximum" in out and "minimum" not in out and out["maximum"] > 0:
        out["minimum"] = -out["maximum"]
    if "minimum" in out and "maximum" in out and out["minimum"] >= out["maximum"]:
        return {}
    return out


def _number(text: str) -> float | int:
    return float(text) if "." in text else int(text)
