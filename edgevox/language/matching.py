"""Does a request name a tool? Its verb against the tool's verbs, its nouns against the tool's objects.

The rules, each a principle of English (rows of ``tests/language/test_matching.py``):

- **The verb says what is done.** A request verb matches a tool verb when they are one
  lemma with the same particle ("take off" = ``take_off``), or WordNet synonyms ("lift" and
  "raise", "travel" and "go"), or near (one is a kind of the other: "fly" is a way to
  "move"). A phrasal verb is another verb: "take" does not name ``take_off`` and "turn off"
  does not name ``turn``. A direction particle ("move *down*", "fly *up*") is a direction,
  not part of the verb, unless the tool's own verb has it ("back up", "go back").
- **Light verbs need their object.** "set", "take", "get", "do", "make", "go", "put" mean
  little alone ("*set* the volume", "*take* a photo"): matched alone they are weak evidence;
  the object decides.
- **The object says what it is done to.** A request noun matches a tool object when they are
  one lemma or WordNet synonyms; one that is a kind of the other ("snapshot" is a kind of
  "picture") names the tool weakly: the robot asks before acting on it.
- **Antonyms never match** (WordNet keeps "raise" and "lower" in different synsets; the sign
  of a value is the job of the sign rules).

:func:`match` returns a :class:`Match` with the strength of each; :attr:`Match.trigger` is
what may select a tool. Argument values (an enum value, a number) never select a tool: they
only rank tools that a verb or an object already named (the resolver adds them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from edgevox.language.frames import Phrase, ToolFrame, noun_lemma
from edgevox.language.lexicon import (
    Relation,
    defined_by,
    kind_of,
    near_in_frequent_senses,
    nominalizations,
    relation,
    switch_polarity,
)
from edgevox.language.nlp import parse
from edgevox.language.phrasal import PARTICLES, PREPOSITIONS
from edgevox.language.requests import RequestFrame, is_direction
from edgevox.language.terms import stem
from edgevox.language.words import LIGHT_VERBS

EXACT = 3.0
OTHER_VERB = 2.5
"""The same verb as one of the tool's other docstring verbs (not its own)."""
SYNONYM = 2.0
DIRECTION_VERB = 2.0
"""The request's verb is one of the tool's sign-convention words ("reverse", "lower")."""
DENOMINAL = 2.0
"""The tool's own object said as the request's verb ("zoom" of ``set_zoom``)."""
NEAR = 0.5
RARE_NEAR = 0.25
"""A verb near the tool's only through a rare sense of it: it names the tool weakly, to confirm."""
"""One verb is a kind of the other: weak evidence, never enough alone."""
LIGHT = 0.5
"""A light verb matched alone ("set" of ``set_volume``): it needs its object."""
PARTICLE_MISMATCH = 0.5
"""The same verb with another particle on the request side ("turn off" for ``turn``)."""
OBJECT_SAME = 1.0
OBJECT_SYNONYM = 0.75
OBJECT_NEAR = 0.5
"""One object is a kind of the other ("snapshot" / "picture"): named, never sure alone."""
OTHER_OBJECT = 0.75
"""Weight of an object only the docstring names (the name's own objects weigh 1)."""
MAX_OBJECT = 2.0


@dataclass(frozen=True)
class Match:
    verb: float
    """Strength of the best verb match (0 none, 1 near or light, 2 synonym, 3 same)."""
    verb_exact: bool
    """The verb is said as it is (one lemma and particle; a light verb too, at its light weight)."""
    objects: float
    """Sum of object matches (capped)."""
    how: str = ""
    own_verb: bool = True
    """The best verb match is the tool's own verb (not another verb of its docstring)."""

    @property
    def trigger(self) -> float:
        return self.verb + self.objects


def match(request: RequestFrame, frame: ToolFrame) -> Match:
    """How strongly ``request`` names the tool of ``frame`` (see the module docstring)."""
    best, exact, how, own = 0.0, False, "", True
    for rp in request.verbs:
        if _object_made_verb(rp, frame) and DENOMINAL > best:
            # "zoom to eight times" for ``set_zoom``: English makes verbs of nouns ("zoom",
            # "mop", "photograph"); the tool's own object said as the verb names it. A light verb
            # is no noun made a verb: "*do* a spot clean" does not name ``set_do_not_disturb``.
            best, exact, how, own = DENOMINAL, False, f"verb {rp.verb!r} = object of the name", True
        if (
            stem(rp.verb) in frame.sign_cues
            and (not rp.particle or is_direction(rp.particle))
            and DIRECTION_VERB > best
        ):
            # "reverse one metre" for ``move`` ("Negative for backwards (back, reverse)"),
            # "lower the platform" for ``lift`` ("Negative lowers it"): the verb is a direction
            # the tool's own docstring names for its motion. A phrasal verb is another verb:
            # "lift *off*" is no lifting.
            best, exact, how, own = DIRECTION_VERB, False, f"verb {rp.verb!r} = a direction of its motion", True
        for tp in frame.verbs:
            # A tool named by a light verb alone ("go", ``go_to``) is named by that verb, unless a
            # direction makes it a move ("go forward for ten seconds").
            bare = not frame.own_objects and not request.directions
            understood = frame.directions & {stem(d) for d in request.directions}
            score, is_exact = _verb_score(rp, tp, bare_name=bare, understood=understood)
            if score > best:
                best, exact, how, own = score, is_exact, f"verb {rp.text!r} ~ {tp.text!r}", tp.own
    for rp in request.verbs:
        if rp.verb in LIGHT_VERBS and not rp.particle and EXACT > best:
            # "give a little *nod*", "give it a good *shake*": a light verb with the act as its
            # noun says the act's verb; the tool's own verb said so names it
            for tp in frame.verbs:
                if tp.own and not tp.particle and tp.verb in request.nouns:
                    best, exact, how, own = EXACT, True, f"{rp.verb!r} a {tp.verb!r}: its verb as a noun", True
        if rp.particle and nominalizations(rp.text) & frame.objects and DENOMINAL > best:
            # "shut the camera down" for a tool whose docstring names a "shutdown": the phrasal
            # verb's act named as a noun (WordNet's derivations)
            best, exact, how, own = DENOMINAL, False, f"verb {rp.text!r} = its noun", False
    if best < EXACT and _name_said(request, frame):
        best, exact, how, own = EXACT, True, f"its name {' '.join(frame.name_words)!r} said", True
    if best < DENOMINAL and (value_verb := _value_verb(request, frame)):
        best, exact, how, own = DENOMINAL, False, value_verb, True
    if best < DENOMINAL and (light_value := _light_verb_value(request, frame)):
        best, exact, how, own = DENOMINAL, False, light_value, True
    objects = 0.0
    named = []
    for noun in request.nouns:
        s = 0.0
        for obj in frame.objects:
            weight = 1.0 if obj in frame.own_objects else OTHER_OBJECT
            if noun == obj:
                s = max(s, OBJECT_SAME * weight)
            elif (rel := relation(noun, obj, "n")) == Relation.SYNONYM:
                s = max(s, OBJECT_SYNONYM * weight)
            elif rel == Relation.NEAR:
                s = max(s, OBJECT_NEAR * weight)  # "a picture" of a tool that takes snapshots
        if s:
            named.append(noun)
        objects += s
    objects = min(objects, MAX_OBJECT)
    if named:
        how = f"{how}; object {', '.join(sorted(named))}".lstrip("; ")
    return Match(best, exact, objects, how, own)


def _verb_score(
    rp: Phrase, tp: Phrase, bare_name: bool = False, understood: frozenset[str] = frozenset()
) -> tuple[float, bool]:
    """The phrase as said first ("go up" ~ "climb"), then, when its particle is a direction
    the tool's verb does not have, the bare verb ("move down" ~ "move").

    ``bare_name``: the tool's name is only a light verb ("go", ``go_to``): it has no object
    to wait for, so its verb said as it is names it fully (not "go *up*": a direction)."""
    score, exact = _phrase_score(rp, tp)
    if bare_name and tp.own and rp.verb == tp.verb and rp.particle == tp.particle:
        return EXACT, True
    if rp.particle and rp.particle != tp.particle and is_direction(rp.particle) and stem(rp.particle) in understood:
        # a direction the tool takes ("move *down*" of a signed move); else the phrasal verb
        # stands ("turn *up*" the volume is no turn)
        bare, bare_exact = _phrase_score(Phrase(rp.verb), tp)
        if bare > score:
            score, exact = bare, bare_exact
    if exact and not tp.own:
        return min(score, OTHER_VERB), True  # ranks below the tool whose own verb it is
    return score, exact


def _object_made_verb(rp: Phrase, frame: ToolFrame) -> bool:
    """The request's verb is the tool's own object made a verb ("zoom" for ``set_zoom``), or the
    verb its object is the act of ("record" for ``start_recording``: WordNet derives
    "recording" from "record"). Saying that verb does the act, so it names no tool whose own
    verb ends the act ("record" is no ``stop_recording``)."""
    if rp.particle not in ("", "in", "out", "up", "down") or rp.verb in LIGHT_VERBS:
        return False  # "zoom *in*": a particle of direction keeps the verb; "zoom off" is another verb
    if rp.verb in frame.own_objects:
        return True
    if not nominalizations(rp.verb) & frame.own_objects:
        return False
    return not any(tp.own and switch_polarity(tp.verb) is False for tp in frame.verbs)


def _phrase_score(rp: Phrase, tp: Phrase) -> tuple[float, bool]:
    light = tp.verb in LIGHT_VERBS and not tp.particle
    if is_direction(rp.verb) and rp.verb != "move":
        # "back up": a direction said as a verb; only the same phrasal verb is its name (the
        # request also carries "move" for the motion, see requests.py)
        return (EXACT, True) if (rp.verb, rp.particle) == (tp.verb, tp.particle) else (0.0, False)
    if rp.verb == tp.verb:
        if rp.particle == tp.particle:
            return (LIGHT, True) if light else (EXACT, True)
        if tp.particle and not rp.particle:
            return 0.0, False  # "take a photo" is not "take off"
        return PARTICLE_MISMATCH, False  # "turn off" for "turn"
    rel = relation(rp.text, tp.text, "v")
    if rel == Relation.SAME:
        return (LIGHT, True) if light else (EXACT, True)
    said_light = rp.verb in LIGHT_VERBS and not rp.particle
    if rel >= Relation.SYNONYM:
        return (NEAR, False) if light or said_light else (SYNONYM, False)  # "turn" ~ "change": a light verb's sense
    if rel == Relation.NEAR and said_light and kind_of(tp.verb, rp.verb):
        return NEAR, False  # "go to the front desk" for ``walk_to``: walking is a way to go
    if rel == Relation.NEAR and not said_light:
        if not near_in_frequent_senses(rp.text, tp.text, "v") and not (
            defined_by(rp.text, tp.text) or defined_by(rp.text, tp.verb)
        ):
            return RARE_NEAR, False  # near only in a rare sense ("snap" ~ "move"): asked, never acted on
        return NEAR, False
    if not said_light and not rp.particle and not tp.particle and (p := switch_polarity(rp.verb)) is not None:
        if p == switch_polarity(tp.verb):
            return NEAR, False  # "kill" and "stop" both end something working (WordNet): near, confirmed
    return 0.0, False  # "put" is near "park" in one of its many senses: its object says what is done


def _name_said(request: RequestFrame, frame: ToolFrame) -> bool:
    """The tool's name said as a phrase ("do a *spot clean*", "*return to* the *dock*"): a
    name of several words, one of them a content word after the first,
    in order in the request; a determiner, number or adjective may stand inside it."""
    words = [noun_lemma(w) for w in frame.name_words]
    if len(words) < 2 or all(w in PARTICLES or w in PREPOSITIONS for w in words[1:]) or words[0] in LIGHT_VERBS:
        # "go_to", "take_off": a verb and its particle; "set_volume", "take_snapshot": a light
        # verb and its object. The verb and object rules read those.
        return False
    seq = request.sequence
    for i in range(len(seq)):
        k, j = 0, i
        while k < len(words) and j < len(seq):
            lemma, word, modifier = seq[j]
            if words[k] in (lemma, word, noun_lemma(word)):
                k += 1
            elif not (modifier and k > 0):
                break
            j += 1
        if k == len(words):
            return True
    return False


def _light_verb_value(request: RequestFrame, frame: ToolFrame) -> str:
    """A light verb whose object is a whole value of one of the tool's choices ("*do* a
    *foliar feed* on bed 8" for ``spray(mix=...)``): a light verb carries little meaning, its
    object says what is done, and a value only this tool takes says which tool."""
    light = [rp for rp in request.verbs if rp.verb in LIGHT_VERBS and not rp.particle]
    if not light or len(request.verbs) != len(light):
        return ""
    objects = [  # the light verb's direct object, whole: "do *a foliar feed*", not "take Priya *to the cafeteria*"
        " ".join(w.lower_ for w in c.subtree)
        for t in parse(request.text)
        if t.lemma_.lower() in LIGHT_VERBS and t.pos_ in ("VERB", "AUX")
        for c in t.children
        if c.dep_ == "dobj"
    ]
    for p in frame.params:
        for v in p.values:
            value = str(v).lower().replace("_", " ")
            if len(value) < 3 or value in frame.objects:
                continue
            if any(re.search(rf"\b{re.escape(value)}\b", phrase) for phrase in objects):
                return f"{light[0].verb!r} + its {p.name} {v!r}"
    return ""


def _value_verb(request: RequestFrame, frame: ToolFrame) -> str:
    """A verb that names a value of one of the tool's choices, with an object that names a
    value of another ("*mop* the kitchen": mode mop, room kitchen; "*hoover* the bedroom":
    WordNet's synonym of vacuum). English makes verbs of instruments and manners; the second
    value shows the request is about this tool ("rock, please" names no room: no tool)."""
    for rp in request.verbs:
        if rp.particle:
            continue
        for p in frame.params:
            for v in p.values:
                said = str(v).lower()
                if " " in said or "_" in said or not said.isalpha():
                    continue
                if rp.verb != said and relation(rp.verb, said, "v") < Relation.SYNONYM:
                    continue
                others = {
                    w
                    for q in frame.params
                    if q is not p
                    for val in q.values
                    for w in str(val).lower().replace("_", " ").split()
                }
                if others & (request.nouns | request.lemmas - {rp.verb}):
                    return f"verb {rp.verb!r} = {p.name} {v!r}"
    return ""
