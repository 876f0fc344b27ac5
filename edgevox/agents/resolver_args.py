"""The resolver's argument extraction: each tool's index (its words, units and sign rules, read
from the schema) and the values an utterance gives its parameters, per JSON type.

Over 500 lines because every parameter of a tool is read in one pass over the request's
words: enums and booleans first, then numbers, then a string, each using what the others took
(a number inside a value's name, a word taken as a value, a label before its number).

Enum values by phrase (or by a word only one value has), booleans from on/off-style words,
numbers from digits or words with their unit, range, sign and bounds checked, and a string
from the words after the last trigger word. A value that cannot be used is reported with
the reason (:attr:`Extraction.problems`) so the resolver asks instead of guessing; see
:mod:`edgevox.agents.resolver` for the whole design.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from edgevox.agents.tools import Tool
from edgevox.language.clauses import QUOTED
from edgevox.language.extremes import extreme
from edgevox.language.frames import ToolFrame, enum_values, read_frame
from edgevox.language.lexicon import Relation, adjective_of, known, made_adjective, relation, switch_polarity
from edgevox.language.numbers import as_number, find_numbers, spoken_unit
from edgevox.language.requests import HALF_TURN_PARTICLES, intensifier, object_phrase, read_request
from edgevox.language.terms import (
    DIRECTION_STEMS,
    DIRECTIONS,
    FALSE_WORDS,
    FUNCTION_WORDS,
    TRUE_WORDS,
    SignRule,
    content_stems,
    is_direction,
    stem,
    tokenize,
)
from edgevox.language.units import Unit, convert, same_dimension, unit
from edgevox.language.value_words import named_number
from edgevox.language.words import LIGHT_VERBS, has_seq

INDEFINITES = frozenset("something anything everything stuff whatever it that this them".split())
"""Words that name nothing in particular: never a string value ("say something")."""
WHICH_WAY = "no direction said:"
"""Start of ``Extraction.problems[p]`` when a signed value was said without its direction."""
UNKNOWN_SIGN = "its docstring gives no sign for"
"""Start of ``Extraction.problems[p]`` when a direction was said for a signed value whose
docstring names neither sign."""
AMBIGUOUS_NUMBER_JOINERS = frozenset(("or", "to"))
""""two or three meters", "five to ten minutes": a range is not a value; ask."""


@dataclass
class ToolIndex:
    tool: Tool
    frame: ToolFrame
    """How the tool reads: verbs, objects, parameters (see :mod:`edgevox.language.frames`)."""
    unit_words: dict[str, frozenset[str]]
    """Per parameter, the stems of its name and text: a number followed by one is its value."""

    @property
    def signs(self) -> dict[str, SignRule]:
        """The sign convention of each signed numeric parameter (``ParamFrame.signs``)."""
        return {p.name: p.signs for p in self.frame.params if p.signs is not None}

    @property
    def units(self) -> dict[str, Unit]:
        """The measurement unit each numeric parameter declares (``ParamFrame.unit``)."""
        return {p.name: p.unit for p in self.frame.params if p.unit is not None}

    @property
    def query(self) -> bool:
        """Only reads the world (may answer a question, see ``ToolFrame.reads``)."""
        return self.frame.reads


_FRAMES: dict[str, ToolFrame] = {}
_FRAMES_LOCK = threading.Lock()


def tool_frame(t: Tool) -> ToolFrame:
    """The tool's frame, read once per distinct (name, description, schema)."""
    key = json.dumps([t.name, t.description, t.parameters], sort_keys=True, default=str)
    with _FRAMES_LOCK:
        frame = _FRAMES.get(key)
    if frame is None:
        frame = read_frame(t.name, t.description, t.parameters)
        with _FRAMES_LOCK:
            _FRAMES[key] = frame
    return frame


def index_tool(t: Tool) -> ToolIndex:
    """One tool's frame, and the words of each parameter."""
    unit_words = {
        pname: frozenset(content_stems(pname.replace("_", " ") + " " + prop.get("description", "")))
        for pname, prop in t.parameters.get("properties", {}).items()
    }
    return ToolIndex(t, tool_frame(t), unit_words)


@dataclass
class Extraction:
    """Arguments of one tool found in an utterance."""

    found: dict[str, Any]
    missing: list[str]
    """Required arguments not found (or not usable)."""
    hits: int
    """Enum values named (argument words)."""
    problems: dict[str, str] = field(default_factory=dict)
    """Argument -> why the value said for it is not used (unit, bounds, range, direction)."""
    shared_hits: int = 0
    """Enum parameters a word of several values names ("the aisle" of aisle A, B and C)."""
    described: set[str] = field(default_factory=set)
    """Choices whose value only the docstring's words for it named ("the front desk" for
    reception): the user may mean something else by them."""
    unit_hits: int = 0
    """Numbers said in the unit of a parameter ("five hundred *degrees*" of an angle), usable
    or not: evidence of the tool that measures in it."""


MOTION_DIMENSIONS = frozenset(("length", "angle"))
"""Dimensions of an amount of motion (how far, how much to turn), not of a level."""
CENTRE_STEMS = frozenset(stem(w) for w in ("centre", "center", "middle", "centred", "centered"))
"""English nouns of the middle point of a range (and their participles: "centred")."""


def _middle(param: Any) -> Any:
    """The midpoint of a parameter's bounds when its docstring names that point or says what
    it does ("0 looks straight ahead", "0 faces the desk" of -170..170), else None: a change
    ("by 20 cm") has no centre."""
    if param.minimum is None or param.maximum is None:
        return None
    mid = (param.minimum + param.maximum) / 2
    return next((v for v in (*param.number_names, *param.value_words) if v == mid), None)


def named_numbers(words: list[str], indexes: list[ToolIndex]) -> frozenset[tuple[int, int]]:
    """The numbers said as part of a name some tool has as a value ("dock *2*", "aisle 3",
    "jar two" of ``Literal["dock 1", "dock 2"]``): a name, not an amount, for every tool."""
    names: set[tuple[str, float]] = set()
    for index in indexes:
        for prop in index.tool.parameters.get("properties", {}).values():
            for v in enum_values(prop):
                vt = [w for w, _, _ in tokenize(str(v))]
                spans = find_numbers(vt)
                if len(vt) >= 2 and len(spans) == 1 and spans[0].start == len(vt) - 1:
                    names.add((vt[-2], spans[0].value))
    return frozenset(
        (n.start, n.end)
        for n in find_numbers(words)
        if n.start > 0 and not n.signed and (words[n.start - 1], n.value) in names
    )


def extract_from(
    index: ToolIndex, text: str, tokens: list[tuple[str, int, int]], named: frozenset[tuple[int, int]] = frozenset()
) -> Extraction:
    """Arguments of ``index.tool`` in ``text`` (tokenized as ``tokens``), per JSON type: enums and
    booleans first, then numbers (unit, range, sign and bounds checked), then a free string.
    ``named``: number spans that are part of a name (:func:`named_numbers`), no amount."""
    t = index.tool
    words = [w for w, _, _ in tokens]
    # "hold it *right* there", "right now": "right" stresses the adverb after it, no direction
    stems = ["" if intensifier(words, k) else stem(w) for k, w in enumerate(words)]
    # "creep forward, *slowly*": an adverb names a choice or a flag as its adjective does ("slow")
    said_as = (
        [stem(a) if (a := adjective_of(w)) else s for w, s in zip(words, stems, strict=True)]
        if len(words) > 1
        else stems
    )
    numbers = [n for n in find_numbers(words) if (n.start, n.end) not in named]
    used_numbers: set[int] = set()
    props = t.parameters.get("properties", {})
    found: dict[str, Any] = {}
    problems: dict[str, str] = {}
    hits = unit_hits = shared_hits = 0
    described: set[str] = set()
    # Enums and booleans first: they are unambiguous words.
    for pname, prop in props.items():
        values = enum_values(prop)
        if values:
            value = _match_enum(values, said_as, words)
            pf = index.frame.param(pname)
            if value is None:
                heads = {*index.frame.name_words, *index.frame.objects, *pname.lower().split("_")}
                value = _compound_value(values, words, heads)
            if value is None and pf is not None and pf.value_words:
                value = _match_value_words(pf.value_words, stems)
                if value is not None and not (pf.value_words[value] & set(stems) & DIRECTION_STEMS):
                    described.add(pname)  # a thing its docstring says it is ("the front desk"), not a direction
            if value is not None and _longer_value_hinted(values, value, stems):
                value = None  # "open the claw *halfway*": "open" or "half_open"? asked
                shared_hits += 1
            if value is not None:
                found[pname] = value
                hits += 1
            elif _shared_word(values, stems):
                shared_hits += 1  # "the aisle" of aisle A, B and C: this parameter, which value?
        elif prop.get("type") == "boolean" or anyof_type(prop) == "boolean":
            switch = index.frame.param(pname)
            value = _match_bool(words, stems, switch.truth if switch is not None else None)
            if value is None and pname in t.required and is_switch(pname, switch):
                value = _verb_switches(text)
            if value is None and known(pname, "a") and stem(pname) in said_as:
                value = True  # "grab the glass, gently": ``gentle`` is said (a flag named by an adjective)
            if value is not None:
                found[pname] = value
    numeric = [
        p for p, s in props.items() if (s.get("type") or anyof_type(s)) in ("number", "integer") and p not in found
    ]
    labels = _number_labels(numbers, stems, numeric)
    ends = _range_ends(numeric, numbers, words)
    for i, pname in ends.items():  # "scan aisles 3 through 6": first_aisle 3, last_aisle 6
        labels[i] = pname
    for pname in numeric:
        span_i = _pick_number(
            numbers,
            used_numbers,
            stems,
            index.unit_words.get(pname, frozenset()),
            len(numeric),
            labels,
            pname,
            words=words,
            wanted=index.units.get(pname),
        )
        if span_i is None:
            frame_param = index.frame.param(pname)
            if frame_param is not None and frame_param.value_words:
                named = _match_value_words(frame_param.value_words, stems)
                if named is not None:  # "mute yourself" when "0 mutes the speaker"
                    found[pname] = named
                    continue
            if frame_param is not None and frame_param.number_names:
                # "*straighten* the blade" when "0 is straight": a verb that makes the point's name
                made = [stem(a) for v in read_request(text).verbs if (a := made_adjective(v.verb))]
                named = named_number(frame_param.number_names, [*stems, *made])
                if named is not None:  # "steer due east" when "0 is north, 90 east"
                    found[pname] = named
                    hits += 1  # a value said by its name, as an enum's is
                    continue
            if frame_param is not None and set(stems) & CENTRE_STEMS and (middle := _middle(frame_param)) is not None:
                # "pan back to dead centre" of -170..170 when "0 looks straight ahead": the
                # centre of a scale whose points are named is its midpoint, when one is named
                found[pname] = middle
                hits += 1
                continue
            wanted = index.units.get(pname)
            if wanted is not None and wanted.dimension == "angle" and not numbers and _turns_around(text):
                # "turn around": to face the other way is half a turn; which way is asked
                unit_hits += 1  # "around" says an angle, as "a full turn" does
                rule = index.signs.get(pname)
                way = rule.sign(stems) if rule is not None else 1
                if way in (0, 2) and rule is not None:
                    problems[pname] = f"{WHICH_WAY} {rule.choices()}"
                else:
                    found[pname] = as_number(
                        way * convert(180, unit("degrees"), wanted), props[pname].get("type") == "integer"
                    )
                continue
            middle = _halfway(words, frame_param) if len(numeric) == 1 and not numbers else None
            if middle is not None:  # "open the vents halfway": the middle of its scale
                found[pname] = as_number(middle, (props[pname].get("type") or anyof_type(props[pname])) == "integer")
                continue
            signs = frame_param.signs if frame_param is not None else None
            # "a *full* clean" where "full" is a value already taken: no end of a scale
            taken = {w for v in found.values() if isinstance(v, str) for w, _, _ in tokenize(v)}
            end = extreme([w for w in words if w not in taken], signs) if len(numeric) == 1 and not numbers else None
            if end is not None and frame_param is not None:
                limit = frame_param.maximum if end > 0 else frame_param.minimum
                if limit is not None:  # "all the way up", "max it out", "as wide as it goes": the documented bound
                    found[pname] = as_number(limit, (props[pname].get("type") or anyof_type(props[pname])) == "integer")
            continue
        used_numbers.add(span_i)
        span = numbers[span_i]
        if labels.get(span_i) == pname:
            unit_hits += 1  # "aisle 6": said with the parameter's name, as a unit names its measure
        if _range_said(numbers, span_i, words, ("or",)) or (len(numeric) == 1 and _range_said(numbers, span_i, words)):
            # "two or three" is one value unsure, never two values ("water bench two or three")
            problems[pname] = f"a range, not one value: {text!r}"
            # "fifteen or twenty *minutes*": the range's unit, said after its last number
            wanted = index.units.get(pname)
            after = [numbers[k].end for k in (span_i, span_i + 1) if k < len(numbers)]
            unit_hits += int(
                wanted is not None
                and any((u := spoken_unit(words, e)) is not None and same_dimension(u, wanted) for e in after)
            )
            continue
        said, wanted = spoken_unit(words, span.end), index.units.get(pname)
        if said is not None and wanted is not None and said.pint_name == "degree" and wanted.dimension == "temperature":
            said = wanted  # "twenty one degrees" of a temperature: degrees of its own scale
        if (
            said is not None
            and (wanted is None or not same_dimension(said, wanted))
            and any(
                q != pname and q not in found and (u := index.units.get(q)) is not None and same_dimension(said, u)
                for q in numeric
            )
        ):
            # "at one metre per second": the speed's, not the distance's; "water it with 1.5
            # litres": the litres', not the bed number's (which stays missing)
            used_numbers.discard(span_i)
            continue
        if said is not None and wanted is not None and not same_dimension(said, wanted):
            problems[pname] = f"said in {said.spoken}, not a {wanted.dimension}"
            continue
        if said is not None and wanted is None and (props[pname].get("type") or anyof_type(props[pname])) == "integer":
            # "ten centimetres" is no bed number: a whole number with no unit counts or names things
            problems[pname] = f"said in {said.spoken}, a measure, not a count or a number of {pname}"
            continue
        if said is not None and wanted is not None:
            unit_hits += 1
        # "a ninety second timer" for `minutes` is 1.5: said unit -> declared unit.
        value = convert(span.value, said, wanted)
        if (
            said is None
            and wanted is not None
            and wanted.pint_name == "percent"
            and _fraction(words[span.start : span.end])
        ):
            value = span.value * 100  # "down to a quarter of its power": a part of the whole, 25 percent
        rule = index.signs.get(pname)
        if rule is not None and span.signed and rule.sign(stems) != 0:
            # "drive backward minus two meters": a direction word and a sign - which one?
            problems[pname] = "a sign and a direction word together"
            continue
        if rule is not None and not span.signed:  # an explicit "minus" alone decides the sign
            direction = rule.sign(stems)
            if direction == 2:
                problems[pname] = "words of both directions"
                continue
            level = wanted is not None and wanted.dimension not in MOTION_DIMENSIONS
            if direction == 0 and rule.of_motion and not (level and rule.forward_positive):
                # "turn thirty degrees", "jog the belt ten centimetres": which way? Even where
                # positive is forward: a robot does not guess a direction of motion. A level
                # whose positive is forward (a throttle in percent, a speed) is set as said
                # ("throttle up to sixty percent"); its negative is said with its way ("astern")
                problems[pname] = f"{WHICH_WAY} {rule.choices()}"
                continue
            value = -abs(value) if direction == -1 else abs(value) if direction == 1 else value
        elif rule is None and span.signed and props[pname].get("minimum") is None:
            # A negative value for a parameter whose docstring gives negatives no meaning
            # ("a timer for minus five minutes", "turn left minus ninety degrees").
            problems[pname] = "a negative value this parameter does not define"
            continue
        declared = index.frame.param(pname)
        lowest = props[pname].get("minimum", declared.minimum if declared is not None else None)
        said_ways = [w for w, st in zip(words, stems, strict=False) if st in DIRECTION_STEMS]
        if rule is None and not span.signed and lowest is not None and lowest < 0 and said_ways:
            # "tilt down 30 degrees" when the text says only "-90 to 90": which sign is down
            # is a guess; asked, never acted on
            problems[pname] = f"{UNKNOWN_SIGN} {said_ways[0]}"
            continue
        bounds = {"minimum": declared.minimum, "maximum": declared.maximum} if declared is not None else {}
        bound = _out_of_bounds({**props[pname], **{k: v for k, v in bounds.items() if v is not None}}, value)
        if bound:
            problems[pname] = bound
            continue
        integer = (props[pname].get("type") or anyof_type(props[pname])) == "integer"
        if integer and abs(value - round(value)) > 0.01:
            # "0.5 percent" of a whole-number parameter: rounding would do something else (0 is off)
            problems[pname] = f"not a whole number: {value:g}"
            continue
        found[pname] = as_number(value, integer)
    for pname, prop in props.items():
        if pname in found or prop.get("type") != "string" or enum_values(prop):
            continue
        quoted = QUOTED.search(text)
        value = quoted.group(1).strip() if quoted else (_after_name(text, pname) or object_phrase(text))
        if value and not quoted and _names_the_parameter(value, pname):
            problems[pname] = f"{value!r} names the {pname}, it does not say it"  # "show a message on your screen"
            continue
        if value and not quoted and _names_the_tool(value, t.name):
            problems[pname] = f"{value!r} names the tool, not a value"  # "count the *items*": which SKU?
            continue
        chosen = {str(v).replace("_", " ").lower() for q, v in found.items() if enum_values(props.get(q, {}))}
        if value and not quoted and value.replace("_", " ").lower() in chosen:
            continue  # "log a crack here": "crack" named the kind, one of its choices; no note besides
        if value and (quoted or value.lower() not in INDEFINITES):
            found[pname] = value
            hits += bool(quoted)  # a text in quotation marks is given as clearly as a number
    for pname in t.required:
        # "dim the lights to forty percent": a level above zero set on a device that is
        # switched means the device is on (a level of zero says nothing: "off" or "dark"?).
        if pname not in found and is_switch(pname, index.frame.param(pname)) and not problems:
            levels = [v for q, v in found.items() if q in numeric and isinstance(v, (int, float))]
            if levels and all(v > 0 for v in levels):
                found[pname] = True
    missing = [r for r in t.required if r not in found]
    if not found and not problems:
        # "tilt the camera" for ``pan_tilt(pan_deg=0, tilt_deg=0)``: the verb names a number
        # the tool takes, so it asks for that number; by its default it would do nothing
        said_verbs = {stem(v.verb) for v in read_request(text).verbs if not v.particle or is_direction(v.particle)}
        missing += [
            p for p in numeric if p not in t.required and said_verbs & {stem(w) for w in p.lower().split("_") if w}
        ]
    return Extraction(found, missing, hits, problems, unit_hits=unit_hits, shared_hits=shared_hits, described=described)


SWITCH_NAMES = frozenset(stem(w) for w in ("on", "enabled", "enable", "active", "activated", "power", "powered", "lit"))
"""Boolean parameter names that say a device works or not (``on``, ``enabled``, ``power``)."""


def is_switch(pname: str, param: Any) -> bool:
    """A boolean that switches the tool's device on or off: by its name, or its text says what
    turns it on and off ("True turns the pump on")."""
    named = {stem(w) for w, _, _ in tokenize(pname.replace("_", " "))}
    return bool(named & SWITCH_NAMES) or (param is not None and param.truth is not None)


def _verb_switches(text: str) -> bool | None:
    """On or off by the meaning of the request's verbs ("kill the siren": off; "activate the
    pump": on), when they agree; see ``lexicon.switch_polarity``."""
    said = {
        switch_polarity(v.text)  # "light up" is in WordNet too
        for v in read_request(text).verbs
        if v.particle or v.verb not in LIGHT_VERBS  # "do" is "finish" in one of its many senses
    } - {None}
    return next(iter(said)) if len(said) == 1 else None


def _halfway(words: list[str], param: Any) -> float | None:
    """ "halfway", "half way": the middle of a scale that starts at zero, between its documented
    bounds or the end points its docstring names ("0 is fully closed and 100 is fully open");
    None for a signed change or a scale with no known top."""
    if param is None or not ("halfway" in words or has_seq(words, ("half", "way"))):
        return None
    ends = [v for v in (param.minimum, param.maximum) if v is not None] or list(param.number_names)
    lo, hi = (min(ends), max(ends)) if len(ends) >= 2 else (None, None)
    if lo != 0 or hi is None or param.signs is not None:
        return None
    return (lo + hi) / 2


def _turns_around(text: str) -> bool:
    """ "turn around", "spin round": a verb of rotating (WordNet) with the particle "around",
    which means to face the opposite way ("go around the table", "look around" do not)."""
    return any(
        v.particle in HALF_TURN_PARTICLES and relation(v.verb, "rotate", "v") != Relation.NONE
        for v in read_request(text).verbs
    )


def _number_labels(numbers: list, stems: list[str], params: list[str]) -> dict[int, str]:
    """Numbers said right after a parameter's name ("aisle *6*", "shelf *two*"), or after it
    and the direction of the change ("tilt down *ten*", "pan right by *10*"), when the name is
    one parameter's only."""
    names: dict[str, list[str]] = {}
    for p in params:
        for w in p.lower().split("_"):
            if w:
                names.setdefault(stem(w), []).append(p)
    out = {}
    for i, n in enumerate(numbers):
        k = n.start - 1
        while k > 0 and k >= n.start - 2 and (stems[k] in DIRECTION_STEMS or stems[k] in ("by", "to")):
            k -= 1  # "tilt *down* ten", "pan right by 10": the change's direction between name and number
        owners = names.get(stems[k], []) if k >= 0 else []
        if len(owners) == 1:
            out[i] = owners[0]
    return out


_LABELLED = re.compile(r"[A-Za-z0-9][\w-]*")


def _after_name(text: str, pname: str) -> str | None:
    """The token said right after the parameter's name, when it holds a digit ("SKU 7781",
    "sku B-220"): a label and its value, as "aisle 6" is for a number."""
    name = pname.lower().replace("_", " ")
    m = re.search(rf"\b{re.escape(name)}\s+(?:number\s+)?({_LABELLED.pattern})", text, re.IGNORECASE)
    return m.group(1) if m and any(c.isdigit() for c in m.group(1)) else None


def _names_the_parameter(value: str, pname: str) -> bool:
    """The phrase opens with the parameter's own name ("*message* on your screen" for
    ``message``): it says there is one, not what it is."""
    said = [stem(w) for w, _, _ in tokenize(value)]
    return bool(said) and said[0] in {stem(w) for w in pname.lower().split("_") if w}


def _names_the_tool(value: str, tool_name: str) -> bool:
    """Every word of ``value`` is a word of the tool's name ("items" of ``count_items``)."""
    said = {stem(w) for w, _, _ in tokenize(value)}
    return bool(said) and said <= {stem(w) for w in tool_name.lower().split("_") if w}


def _fraction(said: list[str]) -> bool:
    """A part of a whole said in words ("a quarter", "half", "two thirds"): below one, with no
    digits and no decimal point."""
    value = find_numbers(said)
    return (
        len(value) == 1
        and 0 < value[0].value < 1
        and not any(w.replace(".", "").isdigit() or w in ("point", "zero", "oh") for w in said)
    )


RANGE_STARTS = frozenset("first start from begin beginning min minimum low lower lowest".split())
RANGE_ENDS = frozenset("last end to until final stop max maximum high upper highest".split())
RANGE_JOINERS = frozenset("to through thru till until and".split())


def _range_ends(params: list[str], numbers: list, words: list[str]) -> dict[int, str]:
    """Two numbers said as a range ("3 through 6", "from ten to twelve", "between 2 and 5",
    with a noun repeated: "aisle ten to aisle twelve") for a tool whose two numeric parameters
    are its ends by name (``first_aisle``/``last_aisle``, ``start``/``end``): number -> end."""
    starts = [p for p in params if set(p.lower().split("_")) & RANGE_STARTS]
    ends = [p for p in params if set(p.lower().split("_")) & RANGE_ENDS]
    if len(starts) != 1 or len(ends) != 1 or starts == ends:
        return {}
    pairs = []  # the range may sit among other numbers ("... over eight seconds")
    for i in range(len(numbers) - 1):
        a, b = numbers[i], numbers[i + 1]
        gap = [w for w in words[a.end : b.start] if w not in (words[a.start - 1],)]
        if not (len(gap) == 1 and gap[0] in RANGE_JOINERS):
            continue
        if gap[0] == "and" and "between" not in words[: a.start]:
            continue  # "3 and 6" is two values; "between 3 and 6" a range
        pairs.append(i)
    if len(pairs) != 1:
        return {}
    return {pairs[0]: starts[0], pairs[0] + 1: ends[0]}  # in the order said: "from twelve to ten" starts at twelve


def _range_said(numbers: list, i: int, words: list[str], joiners: tuple[str, ...] = ()) -> bool:
    """Two numbers side by side or joined by "or"/"to" ("two three meters", "two or three");
    with ``joiners``, only joined by one of those."""
    for a in (i - 1, i):
        if a < 0 or a + 1 >= len(numbers):
            continue
        gap = words[numbers[a].end : numbers[a + 1].start]
        if joiners and len(gap) == 1 and gap[0] in joiners:
            return True
        if not joiners and (not gap or (len(gap) == 1 and gap[0] in AMBIGUOUS_NUMBER_JOINERS)):
            return True
    return False


def _out_of_bounds(prop: dict[str, Any], value: float) -> str:
    lo, hi = prop.get("minimum"), prop.get("maximum")
    xlo, xhi = prop.get("exclusiveMinimum"), prop.get("exclusiveMaximum")
    if (lo is not None and value < lo) or (xlo is not None and value <= xlo):
        return f"out of bounds: {value:g} is below {lo if lo is not None else xlo}"
    if (hi is not None and value > hi) or (xhi is not None and value >= xhi):
        return f"out of bounds: {value:g} is above {hi if hi is not None else xhi}"
    return ""


def is_string(t: Tool, pname: str) -> bool:
    prop = t.parameters.get("properties", {}).get(pname, {})
    return prop.get("type") == "string" and not enum_values(prop)


def anyof_type(prop: dict[str, Any]) -> str | None:
    for sub in prop.get("anyOf", []):
        if sub.get("type") not in (None, "null"):
            return sub.get("type")
    return None


def _with_digits(words: list[str]) -> list[str]:
    """Spoken numbers as digits ("dock two" -> "dock 2"), so values written either way match."""
    out = list(words)
    for span in reversed(find_numbers(words)):
        if span.end - span.start >= 1 and not span.signed:
            out[span.start : span.end] = [f"{as_number(span.value)}"]
    return out


def _match_enum(values: list[Any], stems: list[str], words: list[str] | None = None) -> Any:
    """The enum value named in the utterance: whole phrase first (longest, numbers said either
    way), else a word unique to one value, else a direction of the value's own direction group
    ("back" or "reverse" for ``"backward"``)."""
    if words is not None:
        said = " " + " ".join(stem(w) for w in _with_digits(words)) + " "
        for v in sorted(values, key=lambda v: -len(str(v))):
            vs = [stem(w) for w in _with_digits([w for w, _, _ in tokenize(str(v))])]
            if vs and any(not w.isdigit() for w in vs) and any(w.isdigit() for w in vs) and f" {' '.join(vs)} " in said:
                return v
    found = _match_enum_words(values, stems)
    if found is not None:
        return found
    return _match_direction(values, stems)


def _compound_value(values: list[Any], words: list[str], heads: set[str]) -> Any:
    """A closed compound of one value and the thing it is a value of ("nightlight": "night" +
    "light" for ``light: "reading" | "night"``): that value."""
    hits = {
        v
        for w in words
        for v in values
        if isinstance(v, str) and len(v) >= 3 and w != v.lower() and w.startswith(v.lower()) and w[len(v) :] in heads
    }
    return next(iter(hits)) if len(hits) == 1 else None


def _longer_value_hinted(values: list[Any], value: Any, stems: list[str]) -> bool:
    """Another value holds ``value``'s words and more, and each of its other words begins a
    word said ("half" of "halfway" for ``half_open`` over ``open``): the shorter may not be
    the one meant."""
    have = {stem(w) for w, _, _ in tokenize(str(value))}
    said = set(stems)
    for v in values:
        vs = {stem(w) for w, _, _ in tokenize(str(v))}
        rest = vs - have
        if v != value and have < vs and all(any(s.startswith(w) and len(w) >= 3 for s in said) for w in rest):
            return True
    return False


def _shared_word(values: list[Any], stems: list[str]) -> bool:
    """A said word (not a number) that several values share ("aisle" of "aisle A", "aisle B")."""
    counts: dict[str, int] = {}
    for v in values:
        for w in {stem(w) for w, _, _ in tokenize(str(v))}:
            counts[w] = counts.get(w, 0) + 1
    return any(counts.get(w, 0) >= 2 and not w.isdigit() and len(w) > 1 for w in stems)


def _match_value_words(value_words: Any, stems: list[str]) -> Any:
    """The one enum value whose docstring words the request says ("lower the hand" -> z, when
    "z is up"); none when words of several values are said."""
    said = set(stems)
    owners: dict[str, set[Any]] = {}
    for v, ws in value_words.items():
        for w in ws:
            owners.setdefault(w, set()).add(v)
    hits = {next(iter(owners[w])) for w in said if w in owners and len(owners[w]) == 1}
    return next(iter(hits)) if len(hits) == 1 else None


def _match_direction(values: list[Any], stems: list[str]) -> Any:
    said = set(stems)
    hits = []
    for v in values:
        vs = [stem(w) for w, _, _ in tokenize(str(v))]
        if len(vs) != 1:
            continue
        group = next((g for a, b in DIRECTIONS for g in (a, b) if vs[0] in g), None)
        if group is not None and group & said:
            hits.append(v)
    return hits[0] if len(hits) == 1 else None


def _match_enum_words(values: list[Any], stems: list[str]) -> Any:
    """Whole phrase first (longest), else a word unique to one value."""
    text_stems = " " + " ".join(stems) + " "
    said = [
        v for v in values if (vs := [stem(w) for w, _, _ in tokenize(str(v))]) and f" {' '.join(vs)} " in text_stems
    ]
    phrase = {v: " ".join(stem(w) for w, _, _ in tokenize(str(v))) for v in said}
    # a value inside a longer one said ("room" in "living room") is not said of its own
    whole = [v for v in said if not any(u != v and f" {phrase[v]} " in f" {phrase[u]} " for u in said)]
    if len(whole) > 1:
        return None  # "vacuum and mop": two values for one choice, which is asked
    if whole:
        return whole[0]
    # A word names a value only if no other value has it, also inside a compound:
    # "room" belongs to "living room", "bedroom" and "bathroom", so "my room" names none.
    raw = [[w for w, _, _ in tokenize(str(v))] for v in values]
    owners: dict[str, set[int]] = {}
    for i, ws in enumerate(raw):
        for w in ws:
            if w not in FUNCTION_WORDS:
                owners.setdefault(stem(w), set()).add(i)
    for w, own in owners.items():
        for j, ws in enumerate(raw):
            if any(len(w) >= 3 and x != w and (x.startswith(w) or x.endswith(w)) for x in ws):
                own.add(j)
    votes: dict[int, int] = {}
    for s in stems:
        if s in owners and len(owners[s]) == 1:
            i = next(iter(owners[s]))
            votes[i] = votes.get(i, 0) + 1
    if len(votes) == 1:
        return values[next(iter(votes))]
    return None


def _match_bool(words: list[str], stems: list[str], rule: SignRule | None) -> bool | None:
    """A boolean from the parameter's own text ("true to start recording, false to stop":
    "start" is True), else from on/off words ("on", "enable", "off", "disable")."""
    if rule is not None:
        sign = rule.sign(stems)
        if sign in (-1, 1):
            return sign == 1
    t = any(w in TRUE_WORDS for w in words)
    f = any(w in FALSE_WORDS for w in words)
    if t != f:
        return t
    return None


def _pick_number(
    numbers: list,
    used: set[int],
    stems: list[str],
    unit_words: frozenset[str],
    n_numeric: int,
    labels: dict[int, str] | None = None,
    pname: str = "",
    *,
    words: list[str] | None = None,
    wanted: Unit | None = None,
) -> int | None:
    """``labels``: number -> the parameter whose name is said right before it ("aisle 6",
    "shelf two"): that number is that parameter's, and no other's. ``wanted``: the parameter's
    unit; a number said in its dimension is its value, not a bare number the rules picked
    before it ("raise the three-point linkage a hundred millimetres"), when it is the only one."""
    labels = labels or {}
    free = [i for i in range(len(numbers)) if i not in used and labels.get(i) in (None, pname)]
    picked = _by_label_or_place(numbers, free, stems, unit_words, n_numeric, labels, pname)
    measured = [
        i
        for i in free
        if wanted is not None
        and words is not None
        and (u := spoken_unit(words, numbers[i].end)) is not None
        and same_dimension(u, wanted)
    ]
    if picked is not None and picked not in measured and len(measured) == 1:
        return measured[0]
    return picked


def _by_label_or_place(
    numbers: list,
    free: list[int],
    stems: list[str],
    unit_words: frozenset[str],
    n_numeric: int,
    labels: dict[int, str],
    pname: str,
) -> int | None:
    own = [i for i in free if labels.get(i) == pname]
    if own:
        return own[0]
    if not free:
        return None
    # A number followed by one of the parameter's own words ("45 degrees") belongs to it.
    for i in free:
        end = numbers[i].end
        if end < len(stems) and stems[end] in unit_words:
            return i
    if n_numeric == 1 or len(free) == 1:
        return free[0]
    return None
