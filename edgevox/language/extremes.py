"""The end of a scale said in words: "max it out", "all the way up", "as wide as it goes",
"the lowest" (see :func:`extreme`)."""

from __future__ import annotations

from typing import Any

from edgevox.language.lexicon import Relation, relation

MAXIMUM_WORDS = frozenset("max maximum full highest biggest largest widest furthest farthest most top".split())
MINIMUM_WORDS = frozenset("min minimum lowest smallest narrowest least bottom".split())
ALL_THE_WAY = ("all", "the", "way")
COMPLETELY = frozenset("fully completely entirely totally wholly".split())
"""Adverbs of degree that say an act is done to its end ("shut the vents *completely*"): the end
of the scale the verb's direction goes to, as "all the way" says."""
INCREASING = frozenset("up in higher more right open wider bigger louder faster forward".split())
DECREASING = frozenset("down out lower less left close narrower smaller quieter slower back".split())


def extreme(tokens: list[str], signs: Any = None) -> int | None:
    """+1 for "the most" of a value, -1 for "the least", None when no extreme is said.

    English says the end of a scale with a superlative ("max it out", "the biggest you can",
    "as wide as it goes", "full volume", "lowest") or "all the way" / "as far ... as" with a
    direction ("all the way up", "zoom all the way out", "as far up as it goes"). A direction
    goes through the parameter's sign convention when it has one ("as far down" of a tilt is
    its minimum), else up/in/more read as the maximum and down/out/less as the minimum."""
    words = list(tokens)
    direction = 0
    for w in words:
        if signs is not None:
            if (sign := signs.sign([w.rstrip("s")])) in (-1, 1):
                direction = direction or sign
            elif w in INCREASING or w in DECREASING:
                return None  # "turn it up all the way" is no rotation of a left/right turn
        elif w in INCREASING or _opens(w) is True:
            direction = direction or 1
        elif w in DECREASING or _opens(w) is False:
            direction = direction or -1
    said_extent = (
        _has(words, ALL_THE_WAY)
        or any(w in COMPLETELY for w in words)
        or (
            _has(words, ("as",))
            and any(w in ("far", "much", "wide", "high", "low") for w in words)
            and any(w in ("go", "goes", "can", "possible") for w in words)
        )
    )
    if any(w in MAXIMUM_WORDS for w in words):
        return -1 if any(w in ("down",) for w in words) and said_extent else 1
    if any(w in MINIMUM_WORDS for w in words):
        return -1
    if said_extent:
        return direction or (1 if any(w in ("wide", "high", "far") for w in words) else None)
    return None


def _opens(word: str) -> bool | None:
    """True for a verb that means "open" in one of its senses, False for one that means
    "close" ("shut"), None for others (WordNet synonyms)."""
    if word in INCREASING or word in DECREASING or not word.isalpha():
        return None
    for verb, opening in (("open", True), ("close", False)):
        if relation(word, verb, "v") == Relation.SYNONYM:
            return opening
    return None


def _has(words: list[str], seq: tuple[str, ...]) -> bool:
    n = len(seq)
    return any(tuple(words[i : i + n]) == seq for i in range(len(words) - n + 1))
