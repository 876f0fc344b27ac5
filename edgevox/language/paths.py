"""Where a motion goes: a particle that is the path to a destination ("head *over* to dock
two"), a place said after "back" ("back *to the dock*"), and a destination after a verb and its
object ("take this *up to room 412*"). A place is a noun phrase whose head WordNet does not
class as a state, quantity, time or act ("back to *idle*" is no place)."""

from __future__ import annotations

import itertools
from typing import Any

from edgevox.language.lexicon import lexname
from edgevox.language.nlp import parse
from edgevox.language.numbers import find_numbers
from edgevox.language.terms import is_direction
from edgevox.language.words import lemmas as readings

PATH_PREPOSITIONS = frozenset("to into onto towards toward".split())
NUMBER_WORDS = frozenset("half one two three four five six seven eight nine ten".split())


def path_particle(toks: list, i: int, particle: str) -> bool:
    """The particle is the path of a motion, not part of a phrasal verb, when a destination or
    a direction follows it ("head *over* to dock two", "pop *down* to the cafeteria", "swing
    it *over* to the right")."""
    for k in range(i + 1, min(i + 6, len(toks) - 1)):
        if toks[k].lower_ == particle:
            nxt = toks[k + 1].lower_
            after = toks[k + 2] if k + 2 < len(toks) else None
            if nxt in PATH_PREPOSITIONS:  # "down to the cafeteria" is a path; "down to thirty" a value
                if after is None or after.like_num or after.lower_ in NUMBER_WORDS or after.pos_ == "ADJ":
                    return False  # "down to quiet": a level
                rest = [t.lower_ for t in toks[k + 2 :]]
                amount = find_numbers(rest)  # "up to a metre and a half", "down to a quarter"
                return not (amount and amount[0].start == 0)
            return is_direction(nxt)
    return False


NOT_PLACES = frozenset("noun.state noun.quantity noun.attribute noun.feeling noun.time noun.event noun.act".split())
"""WordNet's classes of nouns that name no place: "back to *idle*" (a state), "back to *work*"
(an act), "back to *zero*" (a quantity)."""
PLACE_PREPOSITIONS = frozenset("to at in into onto towards toward home".split())


def place_follows(toks: list, i: int, particle: str) -> bool:
    """A place is said right after the particle: "back *home*", or a preposition of place and
    a noun ("back *to the dock*", "back *at your charger*"); not a state ("back to *idle*")."""
    for k in range(i + 1, min(i + 6, len(toks) - 1)):
        if toks[k].lower_ == particle:
            nxt = toks[k + 1]
            if nxt.lower_ == "home":
                return True
            if nxt.lower_ not in PLACE_PREPOSITIONS:
                return False
            return place_at(toks, k + 2) is not None
    return False


def place_at(toks: list, k: int) -> str | None:
    """The noun phrase naming a place that opens at ``toks[k]``, without its determiner ("the
    *start mark*", "*room 412*"), or None ("idle" is a state): the last noun of its run heads
    it, whatever the parse ("the start *mark*")."""
    rest = [t for t in toks[k:] if t.dep_ not in ("det", "poss", "amod", "compound", "nummod")]

    def noun(t: Any) -> bool:  # "to *room* 412": a noun with its number, though tagged a verb
        labelled = t.i + 1 < len(t.doc) and t.doc[t.i + 1].like_num and "NOUN" in readings(t.lower_)
        return t.pos_ in ("NOUN", "PROPN") or labelled

    run = list(itertools.takewhile(noun, rest))
    if not run or lexname(run[-1].lower_, "n") in NOT_PLACES:
        return None
    doc = run[-1].doc
    first = next(t for t in toks[k:] if t.dep_ not in ("det", "poss"))
    last = run[-1].i
    while last + 1 < len(doc) and doc[last + 1].like_num:  # "room *four twelve*"
        last += 1
    return str(doc[first.i : last + 1].text)


def destination_follows(toks: list, i: int) -> str | None:
    """The place a path from the verb at ``toks[i]`` goes to ("take this *up to room 412*",
    "bring the tray *to the kitchen*", "go to the *rooftop garden*"), or None."""
    for k in range(i + 1, min(i + 6, len(toks) - 1)):
        if toks[k].lower_ in PATH_PREPOSITIONS:
            return place_at(toks, k + 1)
    return None


def destination(text: str) -> str | None:
    """The place the request's first verb goes to, or None; a direction is no place ("move to
    the *left*")."""
    toks = list(parse(text))
    verb = next((t for t in toks if t.pos_ == "VERB"), None)
    place = destination_follows(toks, verb.i) if verb is not None else None
    return None if place is None or is_direction(place.split()[-1]) else place
