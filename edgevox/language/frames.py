"""How a tool is read from its author's own code: a :class:`ToolFrame`. (Over 420 lines because
the name, the docstring and the schema are read together: each reading needs the others, such as
a word of the name that the summary uses as a verb, or which parameter a sign sentence is about.)

A frame is what a request must say to call the tool, read only from the function name, its
docstring and its JSON schema (never from example sentences):

- **verbs** (with their particle): the name's first word when English has a verb reading
  of it (``take_off`` -> "take off", ``move_arm`` -> "move", ``get_battery`` -> "get"), and
  the verbs of the docstring's first sentence, coordinated ones included ("Turn, rotate or
  spin in place" -> turn, rotate, spin);
- **objects**: the nouns of the name and of that sentence ("arm", "altitude", "camera"),
  never the enum values (those are arguments, and never select a tool on their own);
- **reads**: the tool only reads the world (its verb is a reading verb: ``get_``, "Report",
  "Read", "Return", ``is_``): it may answer a question;
- **drastic**: an action that takes no required argument (``land``, ``return_home``,
  ``power_off``): nothing in a request refines it, so only its own verb may call it;
- **parameters** (:class:`ParamFrame`): JSON type, unit (:mod:`~edgevox.language.units`),
  sign convention wherever it is written (the parameter's text, else the function docstring
  when the tool has one signed number: "Positive climbs, negative descends"), bounds (the
  schema's, which ``@tool`` reads from ``Annotated``, ``Field`` and the docstring), default,
  enum values.

:mod:`~edgevox.language.frame_report` says how a tool was read, for ``edgevox check``.

This module reads plain data (name, description, schema): it imports nothing of the agents.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from edgevox.language.bounds import docstring_bounds
from edgevox.language.lexicon import changes_nothing
from edgevox.language.nlp import parse
from edgevox.language.phrasal import PARTICLES, PREPOSITIONS, verb_particles
from edgevox.language.terms import (
    DIRECTIONS,
    SignRule,
    bool_rule,
    is_direction,
    sign_rule,
    stem,
    tokenize,
)
from edgevox.language.units import Unit, parameter_unit
from edgevox.language.value_words import number_names, number_words, value_words
from edgevox.language.words import LIGHT_VERBS, can_be_base_verb

READING_VERBS = frozenset("get read report check query list show measure count describe is has".split())
"""Verbs that name a tool which only reads the world ("get_battery", "Report the position")."""
LIGHT_READING_VERBS = frozenset("get show is has".split())
"""Reading verbs of tool names that also ask for acts ("get the cup", "show me the kitchen")."""
QUESTION_WORDS = frozenset("where what which how when who".split())
"""A tool named with a question word ("where_am_i", "what_time") answers that question."""
NUMERIC = ("number", "integer")


@dataclass(frozen=True)
class Phrase:
    """A verb and its particle ("take", "off"); ``particle`` is "" for a plain verb."""

    verb: str
    particle: str = ""
    own: bool = True
    """The tool's own verb (its name's, else its docstring's first); False for the other verbs of
    its first sentence ("Fly back to the launch point and *land*" of ``return_home``)."""

    @property
    def text(self) -> str:
        return f"{self.verb} {self.particle}".strip()


@dataclass(frozen=True)
class ParamFrame:
    name: str
    kind: str
    """``number``, ``integer``, ``boolean``, ``enum``, ``string`` or ``other``."""
    required: bool
    description: str = ""
    unit: Unit | None = None
    signs: SignRule | None = None
    minimum: float | None = None
    maximum: float | None = None
    values: tuple[Any, ...] = ()
    """Enum values."""
    has_default: bool = False
    default: Any = None
    truth: SignRule | None = None
    """For a boolean: what its text says sets it ("true to start recording, false to stop":
    +1 for "start", -1 for "stop"; see ``terms.bool_rule``)."""
    value_words: Mapping[Any, frozenset[str]] = field(default_factory=dict)
    """Words the docstring gives each enum value ("x is toward the front, z is up": z <- up,
    and down, its opposite on the same axis), or a number ("0 mutes the speaker": 0 <- mute),
    as stems."""
    number_names: Mapping[Any, tuple[frozenset[str], ...]] = field(default_factory=dict)
    """Names the docstring gives points of a number's scale ("0 is north, 90 east": 90 <-
    {east}; "0 faces straight ahead": 0 <- {straight, ahead}), each a set of stems said in full."""

    @property
    def signed(self) -> bool:
        """A negative value means something (a sign convention, or bounds below zero)."""
        return self.signs is not None or (self.minimum is not None and self.minimum < 0)


@dataclass(frozen=True)
class ToolFrame:
    name: str
    description: str
    verbs: tuple[Phrase, ...]
    objects: frozenset[str]
    params: tuple[ParamFrame, ...]
    reads: bool = False
    drastic: bool = False
    name_words: tuple[str, ...] = field(default=())
    own_objects: frozenset[str] = frozenset()
    """The objects its name says (``set_fork_height``: fork, height); ``objects`` also has
    those of its docstring."""

    @property
    def sign_cues(self) -> frozenset[str]:
        """Stems of the words its sign conventions give (never enum values)."""
        out: set[str] = set()
        for p in self.params:
            if p.signs is not None:
                out |= p.signs.negative | p.signs.positive
        return frozenset(out)

    @cached_property
    def directions(self) -> frozenset[str]:
        """Stems of the directions its parameters understand (sign conventions, enum values)."""
        out: set[str] = set()
        for p in self.params:
            if p.signs is not None:
                out |= p.signs.negative | p.signs.positive
            for v in p.values:
                said = {stem(w) for w, _, _ in tokenize(str(v))}
                out |= said
                if len(said) == 1:  # "backward": also "back", "reverse" (one direction, other words)
                    out |= next((g for pair in DIRECTIONS for g in pair if said <= g), frozenset())
            for ws in p.value_words.values():
                out |= ws
        return frozenset(out)

    @cached_property
    def understood_directions(self) -> frozenset[str]:
        """:attr:`directions` and those its docstring says ("Drive straight forward or backward"),
        each with the other words of its direction ("backward": also "back")."""
        described = {stem(w) for w, _, _ in tokenize(self.description) if is_direction(w)}
        out = set(self.directions) | described
        for pair in DIRECTIONS:
            for group in pair:
                if group & described:
                    out |= group
        return frozenset(out)

    def param(self, name: str) -> ParamFrame | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if p.required)


WH_ATTRIBUTES = {
    "where": frozenset(("location", "position", "place")),
    "when": frozenset(("time",)),
}
"""What a question word asks for when it opens a question (English wh-words are a closed class)."""


def name_words(name: str) -> list[str]:
    """``takeOff`` / ``take_off`` / ``TakeOff`` -> ["take", "off"]."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[_\W]+", spaced.lower()) if w]


def read_frame(name: str, description: str, parameters: Mapping[str, Any]) -> ToolFrame:
    """The frame of a tool from its name, its docstring description and its argument schema."""
    words = name_words(name)
    verbs: list[Phrase] = []
    objects: set[str] = set()
    values = {
        w for prop in parameters.get("properties", {}).values() for v in enum_values(prop) for w in _words(str(v))
    }
    reads = bool(words) and (words[0] in READING_VERBS or words[0] in QUESTION_WORDS)
    if words and can_be_base_verb(words[0]):
        particle = words[1] if len(words) > 1 and words[1] in PARTICLES else ""
        verbs.append(Phrase(words[0], particle))
        rest = words[1 + bool(particle) :]
    else:
        rest = words
    own_objects = {
        noun_lemma(w) for w in rest if w not in values and w not in PARTICLES and w not in PREPOSITIONS and len(w) > 1
    }
    objects |= own_objects
    first = _first_sentence(description)
    label, colon, after = first.partition(":")
    opens_with_verb = len(label.split()) > 1 and can_be_base_verb(label.split()[0].lower())
    if colon and after.strip() and opens_with_verb:
        # "Report the cell's status: belt speed, arm position": the clause says what it does; a
        # list after the colon says what it covers ("belt" is no verb of it). A clause after it
        # ("Stop the cell: cut power to the belt") says how, and is read with it.
        lists = parse(after.strip())[0].pos_ != "VERB"
        first = label if lists else first
    elif colon and after.strip() and len(label.split()) <= LABEL_WORDS:
        # "Emergency stop: halt the wheels and brake the blade." - a label, then what it does
        objects |= {noun_lemma(w) for w in _words(label) if w not in values and len(w) > 1}
        first = after.strip()
    if first:
        doc_verbs, doc_objects, doc_reads, alternatives = _read_sentence(first, values)
        for v in doc_verbs:
            if v.verb in rest and not v.particle and v.verb in own_objects:
                # "pan_tilt": "Pan and/or *tilt* the camera head" - a word of the name that the
                # summary uses as a verb is one of the tool's own verbs, not its object; after a
                # light verb it is both ("set_zoom": "*Zoom* the lens"; "set the zoom")
                if not (verbs and verbs[0].verb in LIGHT_VERBS):
                    own_objects.discard(v.verb)
                    objects.discard(v.verb)
                verbs.append(Phrase(v.verb, "", True))
        for k, v in enumerate(doc_verbs):
            # The summary's main verb says what the tool does, as its name does, and so do the
            # verbs given as alternatives to it ("Move *or drive*", "Turn, rotate or spin"); a
            # verb after "and" is a further step ("Fly back ... *and land*").
            own = k < alternatives
            if all(v.verb != x.verb or v.particle != x.particle for x in verbs):
                verbs.append(Phrase(v.verb, v.particle, own))
        objects |= doc_objects
        reads = reads or doc_reads  # "arm_state": "Report the arm's height."
        if not reads and verbs and not parameters.get("required") and changes_nothing(verbs[0].verb):
            # "weigh_parcel": "Weigh the parcel and *report* its weight" - a verb that changes
            # nothing, then a reading verb: it reads ("how heavy is it?" asks it)
            reads = any(v.verb in READING_VERBS for v in doc_verbs)
    if reads:
        # A reading tool reports what its docstring lists ("whether the drone is flying, what
        # the gripper holds"): every verb and noun of it is a topic a question may ask about.
        for t in parse(description):
            if t.pos_ == "VERB" and all(t.lemma_.lower() != v.verb for v in verbs):
                verbs.append(Phrase(t.lemma_.lower(), "", False))
            elif t.pos_ in ("NOUN", "PROPN") and t.lower_ not in values and len(t.lower_) > 1:
                objects.add(t.lemma_.lower())
            elif t.lower_ in WH_ATTRIBUTES:
                objects |= WH_ATTRIBUTES[t.lower_]  # "Report *where* it is": it answers "where are you?"
    required = set(parameters.get("required", []))
    props = dict(parameters.get("properties", {}))
    function_signs = sign_rule(description)
    target = _sign_target(description, props, required) if function_signs is not None else None
    # Bounds written in the function docstring ("the head can only go between -30 and 90")
    # bound its one signed or only number, when its own text and schema give none.
    function_bounds = docstring_bounds(description)
    bounded = _sign_target(description, props, required) if function_bounds else None
    params = tuple(
        _param(
            p,
            s,
            p in required,
            function_signs if p == target else None,
            function_bounds if p == bounded else {},
            description,
        )
        for p, s in props.items()
    )
    # A word of the thing the tool handles ("Pick the *parcel*") is no word of one of its
    # values, even where a value's gloss says it ('"reject" (damaged parcels)')
    handled = {stem(o) for o in objects}
    params = tuple(
        replace(p, value_words={v: ws - handled for v, ws in p.value_words.items() if ws - handled})
        if p.kind == "enum"
        else p
        for p in params
    )
    drastic = not reads and not required
    return ToolFrame(
        name,
        description,
        tuple(verbs),
        frozenset(objects),
        params,
        reads,
        drastic,
        tuple(words),
        frozenset(own_objects),
    )


def _sign_target(description: str, props: Mapping[str, Any], required: set[str]) -> str | None:
    """The parameter a sign convention in the function docstring is about: the numeric one
    whose name it mentions ("Positive *distance* drives forward"), else the only numeric one,
    else the only required numeric one."""
    numeric = [p for p, s in props.items() if _kind(s) in NUMERIC]
    said = set(_words(description))
    named = [p for p in numeric if set(name_words(p)) & said]
    for group in (named, numeric, [p for p in numeric if p in required]):
        if len(group) == 1:
            return group[0]
    return None


def _param(
    pname: str,
    prop: Mapping[str, Any],
    required: bool,
    function_signs: SignRule | None,
    function_bounds: Mapping[str, float | int],
    function_text: str = "",
) -> ParamFrame:
    desc = str(prop.get("description", ""))
    kind = _kind(prop)
    unit = parameter_unit(pname, desc) if kind in NUMERIC else None
    signs = (sign_rule(desc) or function_signs) if kind in NUMERIC else None
    numeric = _numeric_member(prop)
    lo = numeric.get("minimum", numeric.get("exclusiveMinimum"))
    hi = numeric.get("maximum", numeric.get("exclusiveMaximum"))
    if lo is None and hi is None and kind in NUMERIC:
        if function_bounds and signs is not None:  # a signed change: see docstring_bounds(signed=True)
            function_bounds = docstring_bounds(function_text, signed=True)
        lo, hi = function_bounds.get("minimum"), function_bounds.get("maximum")
    return ParamFrame(
        pname,
        kind,
        required,
        desc,
        unit,
        signs,
        lo,
        hi,
        tuple(enum_values(prop)),
        "default" in prop,
        prop.get("default"),
        bool_rule(desc) if kind == "boolean" else None,
        value_words(enum_values(prop), f"{function_text}. {desc}")
        if kind not in NUMERIC
        else number_words(f"{function_text}. {desc}"),
        number_names(f"{function_text}. {desc}") if kind in NUMERIC else {},
    )


def _numeric_member(prop: Mapping[str, Any]) -> Mapping[str, Any]:
    if prop.get("type") in NUMERIC:
        return prop
    return next((s for s in prop.get("anyOf", []) if s.get("type") in NUMERIC), prop)


def _kind(prop: Mapping[str, Any]) -> str:
    if enum_values(prop):
        return "enum"
    t = prop.get("type") or next((s.get("type") for s in prop.get("anyOf", []) if s.get("type") != "null"), None)
    return t if t in ("number", "integer", "boolean", "string") else "other"


def enum_values(prop: Mapping[str, Any]) -> list[Any]:
    """The enum values of a parameter's schema (also inside an ``anyOf``), or []."""
    if "enum" in prop:
        return list(prop["enum"])
    for sub in prop.get("anyOf", []):
        if "enum" in sub:
            return list(sub["enum"])
    return []


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


LABEL_WORDS = 4
"""A summary opening with at most this many words and a colon opens with a label."""


def _first_sentence(description: str) -> str:
    """The summary sentence; "and/or" is read as "or" (it offers either verb: "Pan and/or tilt")."""
    first = re.split(r"(?<=[.!?])\s", description.strip(), maxsplit=1)[0] if description.strip() else ""
    return re.sub(r"\band\s*/\s*or\b", "or", first)


def noun_lemma(word: str) -> str:
    """A name word as a noun: "lights" -> "light", "warning" -> "warning" (not "warn")."""
    from lemminflect import getLemma

    lemma = getLemma(word, upos="NOUN")
    return lemma[0].lower() if lemma else word


CONTRASTING = frozenset(("instead", "rather", "other", "except", "unlike", "besides"))
"""Words opening a phrase of what a thing is not ("put it in a bin *instead of* a chute")."""


def _contrasted(token: Any) -> bool:
    """A word inside "instead of ...", "rather than ...", "except ...", up to the next
    punctuation or conjunction: named as what the tool does not do, none of its objects."""
    for prev in reversed(token.doc[: token.i]):
        if prev.is_punct or prev.pos_ == "CCONJ":
            return False
        if prev.lower_ in CONTRASTING:
            return True
    return False


def _read_sentence(sentence: str, values: set[str]) -> tuple[list[Phrase], set[str], bool, int]:
    """Verbs (with particles), objects and whether it opens with a reading verb, of one
    docstring sentence ("Raise or lower the arm." -> [raise, lower], {arm}, False).

    The verbs are the sentence's main verb and the verbs coordinated with it ("Turn, rotate or
    spin"), not those of its subordinate clauses ("... whether the drone is *flying*").
    Docstrings are imperative ("Lower the arm"), and the tagger reads some base verbs as
    adjectives or nouns there: the opening word is a verb when English has a verb reading of
    it, and so is a word coordinated with an accepted verb."""
    doc = parse(sentence)
    toks = [t for t in doc if not t.is_punct]
    verbs: list[Phrase] = []
    accepted: set[int] = set()
    objects: set[str] = set()
    alternatives = 0  # how many leading verbs are alternatives ("X, Y or Z"), before any "and"
    joined_by_and = False
    for i, t in enumerate(toks):
        word = t.text.lower()
        opening = i == 0 and can_be_base_verb(word)
        coordinated = (
            i >= 1
            and bool(accepted)
            and (t.dep_ == "conj" and t.head.i in accepted or toks[i - 1].lower_ in ("or", "and"))
            and (t.pos_ == "VERB" or can_be_base_verb(word))
        )
        # "Jog (nudge) the belt": a word in parentheses right after the verb is another name for it
        glossed = t.i >= 2 and doc[t.i - 1].text == "(" and doc[t.i - 2].i in accepted and can_be_base_verb(word)
        coordinated = coordinated or glossed
        # the parser's root, unless the opening verb came first and the root has a subject of
        # its own: "List which jars *are filled*" is what it lists, not a second action
        main = (
            t.dep_ == "ROOT"
            and t.pos_ == "VERB"
            and not (accepted and any(c.dep_ in ("nsubj", "nsubjpass") for c in t.children))
        )
        if is_direction(word):
            continue  # "to face left *or right*": a direction, not a verb
        if opening or coordinated or main:
            base = word if can_be_base_verb(word) else t.lemma_.lower()
            accepted.add(t.i)
            if accepted and len(accepted) > 1 and any(w.lower_ == "and" for w in toks[max(0, i - 3) : i]):
                joined_by_and = True
            for particle in verb_particles(toks, i, strict=True) or [""]:
                phrase = Phrase(base, particle)
                if phrase not in verbs:
                    verbs.append(phrase)
            if not joined_by_and:
                alternatives = len(verbs)
        elif t.pos_ in ("NOUN", "PROPN") and word not in values and len(word) > 1 and not _contrasted(t):
            objects.add(t.lemma_.lower())
    opening_reads = bool(toks) and toks[0].lower_ in READING_VERBS | {"returns", "reports", "reads", "gets"}
    return verbs, objects, opening_reads, alternatives
