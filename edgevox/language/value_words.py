"""The words a docstring gives a parameter's values: "x is toward the front edge, z is up"
(axis z for "lower your hand"), "slow: indoors", "0 mutes the speaker" ("mute yourself" is 0),
and the names it gives points of a number's scale: "0 is north, 90 east, 180 south" ("steer
due east" is 90), "-50 (full astern)", "0 is idle/neutral", "0 faces straight ahead".

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
    # "x is toward ...", '"night" is the dim under-bed light': the value, quoted or not
    pattern = rf"(?<![\w-]){re.escape(value)}(?![\w-])[\"'`]?\s*(?:is|=|means|:|-|\()\s*([^,;.)]+)"
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


_NUMBER = r"(?<![\w.])(-?\d+(?:\.\d+)?)"
_COPULA = re.compile(_NUMBER + r"\s*(?:is|=|means|:)\s+(.+)", re.IGNORECASE)
_GLOSS = re.compile(_NUMBER + r"\s*\(([^()]+)\)")
_DOES = re.compile(_NUMBER + r"\s+([a-z]+s)\s+(.+)", re.IGNORECASE)
_ITEM = re.compile(_NUMBER + r"\s+(.+)")


def _as_value(number: str) -> int | float:
    return float(number) if "." in number else int(number)


def _name_sets(words: str) -> list[frozenset[str]]:
    """The alternatives of one name ("idle/neutral", "off or idle"), each as its content
    stems; a unit or a number is no name ("90 degrees")."""
    out = []
    for alt in re.split(r"/|\bor\b", words):
        stems = [w for w in content_stems(alt) if unit(w) is None]
        if stems and len(stems) <= 3:
            out.append(frozenset(stems))
    return out


def number_names(text: str) -> dict[Any, tuple[frozenset[str], ...]]:
    """The names a docstring gives points of a number's scale, each as the set of stems a
    request must say all of: "0 is north, 90 east" (after a name given with "is", the other
    items of its list are names too), "-50 (full astern) to 100 (full ahead)", "0 is
    idle/neutral" (two names), "0 faces straight ahead" (what 0 does: "straight ahead")."""
    out: dict[Any, list[frozenset[str]]] = {}

    def add(number: str, words: str) -> None:
        for names in _name_sets(words):
            out.setdefault(_as_value(number), []).append(names)

    for gloss in _GLOSS.finditer(text):
        if not re.search(r"\b(?:is|are|=|means)\b", gloss.group(2)):  # "10 (negative is backwards)": a remark
            add(gloss.group(1), gloss.group(2))
    for sentence in re.split(r"(?<=[.;])\s+|\n", text):
        items = [i.strip() for i in re.split(r",|\band\b|\(|\)", sentence.rstrip(".;")) if i.strip()]
        listed = False
        for item in items:
            m: re.Match[str] | None
            if (m := _COPULA.match(item)) is not None:
                add(m.group(1), m.group(2))
                listed = True
            elif (
                (m := _DOES.match(item)) is not None
                and unit(m.group(2)) is None
                and m.group(3).split()[0].lower() not in OBJECT_OPENERS  # "0 mutes *the speaker*": its object
            ):
                if any(lemma != m.group(2).lower() for lemma in lemmas(m.group(2).lower()).get("VERB", ())):
                    add(m.group(1), m.group(3))  # "0 faces straight ahead": what 0 does
            elif listed and (m := _ITEM.match(item)) is not None:
                add(m.group(1), m.group(2))  # "..., 90 east": the list goes on
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def named_number(names: Any, stems: list[str]) -> Any:
    """The one number whose name the request says in full ("steer due *east*"); None when no
    name, or names of several numbers, are said."""
    said = set(stems)
    hits = {v for v, alts in names.items() if any(alt <= said for alt in alts)}
    return next(iter(hits)) if len(hits) == 1 else None
