"""Phrasal verbs: the particles of a verb in a parsed sentence ("take *off*", "turn the lights
*off*", "Turn the camera *on or off*").

English makes new verbs of a verb and a particle: "take off" is not "take", "back up" is not
"back". Both tool docstrings (:mod:`edgevox.language.frames`) and requests
(:mod:`edgevox.language.requests`) read them with :func:`verb_particles`.
"""

from __future__ import annotations

from typing import Any

PARTICLES = frozenset("up down off on out in back over away around about through".split())
"""Adverb particles of English phrasal verbs ("take off", "back up", "turn on")."""
PREPOSITIONS = frozenset(
    "to at for of from with into onto by via in on along across through past toward towards under behind beside".split()
)
"""Prepositions in a tool name (``go_to``, ``look_at``): grammar, not objects."""

SWITCH_PARTICLES = frozenset(("on", "off"))
"""Particles that say what a switch does: "on or off" after a verb are its particles."""


def verb_particles(toks: list[Any], i: int, *, strict: bool = False) -> list[str]:
    """Particles of the verb at ``toks[i]``: the particle words right after it ("come *on*
    *back*", "turn *on* the lights"), those the parser attaches to it ("turn the lights
    *off*"), and particles coordinated with those ("switch the lights *on* or *off*").

    ``strict`` (docstrings): a particle word that opens a prepositional phrase is a
    preposition ("Turn *on* the spot"), unless the parser attached it as a particle."""
    verb = toks[i]
    out: list[str] = []
    taken: set[int] = set()
    consecutive = True
    if strict:  # "Turn the camera *on or off*", "Switch or turn the lights ... *on or off*"
        rest = [t.lower_ for t in toks[i + 1 :]]
        for k in range(len(rest) - 2):
            if rest[k] in SWITCH_PARTICLES and rest[k + 1] == "or" and rest[k + 2] in SWITCH_PARTICLES:
                return [rest[k], rest[k + 2]]
    window = toks[i + 1 : i + 8]
    for t in window:
        if t.pos_ == "VERB":
            break
        word = t.lower_
        particle = word in PARTICLES
        attached = t.dep_ == "prt" and t.head.i == verb.i or (t.dep_ == "advmod" and t.head.i == verb.i)
        coordinated = t.dep_ == "conj" and t.head.i in taken
        if strict and t.dep_ == "prep":
            consecutive = False
            continue
        if particle and (consecutive or attached or coordinated):
            out.append(word)
            taken.add(t.i)
        consecutive = consecutive and particle
    if not out and not strict:
        # "turn the bathroom light *on*", "switch the lights *off* in the kitchen": on/off
        # after the object, not opening a phrase of its own ("put it *on* the table")
        for t in toks[i + 1 :]:
            if t.lower_ in ("and", "then", "but", "or"):
                break  # the next clause's verb (the tagger's VERB tags inside the object are not)
            if t.lower_ in SWITCH_PARTICLES and not any(c.dep_ == "pobj" for c in t.children):
                return [t.lower_]
    return out
