"""The words a docstring gives a parameter's values: "x is toward the front edge, z is up"
(axis z for "lower your hand"), "slow: indoors", "0 mutes the speaker" ("mute yourself" is 0).

:mod:`edgevox.language.frames` keeps them in ``ParamFrame.value_words``; the resolver uses them
when the request names no value by its own name.
"""

from __future__ import annotations

import re
from typing import Any

from edgevox.language.terms import DIRECTIONS, content_stems, is_direction, stem, tokenize
from edgevox.language.units import unit
from edgevox.language.words import lemmas


def number_words(text: str) -> dict[Any, frozenset[str]]:
    """Verbs a docstring gives a number ("0 mutes the speaker": mute is 0), as stems: a
    number followed by a verb that takes an object."""
    out: dict[Any, set[str]] = {}
    for number, verb, nxt in re.findall(r"(?<![\w.-])(-?\d+(?:\.\d+)?)\s+([a-z]+)\s+([a-z]+)", text.lower()):
        if not verb.endswith("s") or unit(verb) is not None or nxt not in OBJECT_OPENERS:
            continue
        if not any(lemma != verb for lemma in lemmas(verb).get("VERB", ())):
            continue  # "3 passes": a plural noun, not a verb
        value = float(number) if "." in number else int(number)
        out.setdefault(value, set()).add(stem(verb))
    return {k: frozenset(v) for k, v in out.items()}


OBJECT_OPENERS = frozenset("the a an it its everything all them".split())


def _value_texts(value: str, text: str) -> list[str]:
    pattern = rf"(?<![\w-]){re.escape(value)}(?![\w-])\s*(?:is|=|means|:|-|\()\s*([^,;.)]+)"
    return [m.group(1) for m in re.finditer(pattern, text, flags=re.IGNORECASE)]


def value_words(values: list[Any], text: str) -> dict[Any, frozenset[str]]:
    """What the docstring says each enum value is: "x is toward the front edge", "z (up/down)",
    "slow: indoors". A direction word also gives its opposite (one axis, two ways)."""
    out: dict[Any, frozenset[str]] = {}
    for v in values:
        if not isinstance(v, str) or not v.strip():
            continue
        found: set[str] = set()
        for said in _value_texts(v, text):
            found |= set(content_stems(said)) | {stem(w) for w, _, _ in tokenize(said) if is_direction(w)}
        adverbs = {stem(w) for w, _, _ in tokenize(" ".join(_value_texts(v, text))) if is_direction(w)}
        for a, b in DIRECTIONS[:5]:
            if adverbs & (a | b):  # "z is up" (not "the charger by the lifts")
                found |= a | b
        if found:
            out[v] = frozenset(found)
    return out
