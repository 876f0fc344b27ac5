"""A deterministic tool-call proposer derived from tool schemas (the fast path).

Small models (SmolLM2-135M) pick the wrong tool or garble arguments for most
commands, even under a grammar, and each decode costs hundreds of milliseconds on a
CPU. Most robot commands, though, say what they want in words the tool's own schema
already contains. The :class:`SchemaResolver` reads only the schemas, never example
utterances:

- **Tool retrieval.** Each tool's vocabulary is the stemmed content words of its name
  and description (weight 1) and of its parameter names and descriptions (weight 0.5).
  An utterance scores each tool by the IDF-weighted words they share, so a word every
  tool uses counts for little. Argument values (enum values, booleans, numbers) never
  trigger a tool on their own.
- **Argument extraction** per JSON type: enum values by phrase (or by a word only one
  value has: "dock" -> "charging dock"); numbers from digits or words ("one point
  five", "half a"); booleans from on/off-style words; a string from the words after
  the last trigger word ("pick up *the red cup* please" -> "red cup").
- **Signs** come from the parameter's docstring: a clause with "negative" names the
  negative direction ("Negative for backwards (back, reverse).", "Negative lowers it",
  "negative = counter-clockwise"), a clause with "positive" the positive one. Direction
  words are widened to their synonyms and opposites by :data:`DIRECTIONS` (general
  English: lower/down/descend vs raise/up/lift...), so "Negative lowers it" also reads
  "move the arm down" as negative and "raise it" as positive. An explicit "minus" or
  "negative" in the utterance always wins; cues of both directions make it ask.
- **Units** never cross dimensions: a number said in another dimension than the
  parameter's ("go forward for ten seconds" for ``distance_m``) is not a value; the
  resolver asks ("How far should I move, in meters?").
- **Enums.** A word shared by several values, also inside a compound ("room" of
  "living room", "bedroom", "bathroom"), never selects one: "my room" asks which room.
- **Fit.** Required arguments found raise a tool's score; missing ones lower it.
- **Only requests act** (``intent.py``): a negated clause, a question (except to a
  *query* tool such as ``get_battery``), a report, a statement or a hypothetical is
  answered in words, and only the command clauses are resolved ("don't go to the
  kitchen, go to the office" -> ``go_to(office)``).

:meth:`SchemaResolver.propose` returns a :class:`Proposal`: a call (or ``None`` =
answer in words), whether it is *sure*, and a ``clarify`` question when an action is
likely but an argument is missing, ambiguous, in the wrong unit or out of bounds (the
agent asks it instead of guessing; a yes or the missing value completes the call).
When it is not sure about the *tool* (a close second, only argument words matched),
the agent asks the LLM, constrained to the candidate tools and to the arguments
already found (see ``decoders.py``).

Rejected alternative: a keyword list per tool written by hand. It does not carry
over to a new tool set; the schema does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from edgevox.agents.intent import Intent, analyze, is_query_tool
from edgevox.agents.numbers import (
    UNIT_NAMES,
    Unit,
    as_number,
    convert,
    find_numbers,
    parameter_unit,
    same_dimension,
    spoken_unit,
)
from edgevox.agents.tools import Tool

# Function words, ignored when matching a request to tools (the safety stop phrases are
# edgevox.voice.stop_phrases).
FUNCTION_WORDS = frozenset(
    """a an the to of in on at by for with from into onto over under up down out off about around
    i me my mine you your yours we us our it its this that these those he she they them their
    is are was were be been am being do does did doing done have has had having can could would will
    shall should may might must please pls just now right there here then than so and or but not no
    yes hey hi ok okay let lets some any all also very really what whats how why when where who which
    get set make take give put want need like know tell say said thing things bit little much many
    one ones value values given number amount""".split()
)
"""Generic English function words and light verbs: they never identify a tool."""

DETERMINERS = frozenset("a an the my your our his her their this that these those some".split())
TRUE_WORDS = frozenset("on enable enabled activate yes true open start".split())
FALSE_WORDS = frozenset("off disable disabled deactivate no false close shut".split())

_TOKEN_RE = re.compile(r"(?:(?<![\w.])-)?\d+(?:\.\d+)?|[a-z]+")


def is_statement(text: str) -> bool:
    """True when ``text`` is a statement, not a request (see ``intent.py``)."""
    return analyze(text).kind == "statement"


def tokenize(text: str) -> list[tuple[str, int, int]]:
    """Lower-case word tokens with their character spans in ``text``."""
    lowered = text.lower().replace("'", "").replace("\u2019", "")
    # Removing apostrophes shifts offsets; map back through an index of kept characters.
    kept = [i for i, ch in enumerate(text.lower()) if ch not in "'\u2019"]
    return [(m.group(), kept[m.start()], kept[m.end() - 1] + 1) for m in _TOKEN_RE.finditer(lowered)]


def stem(word: str) -> str:
    """A crude suffix stripper: enough to match "lights"/"light", "metres"/"meter", "moving"/"move"."""
    w = word
    if w.endswith("tres"):
        w = w[:-4] + "ters"
    elif w.endswith("tre"):
        w = w[:-3] + "ter"
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    elif len(w) > 4 and w.endswith(("ches", "shes", "xes", "sses")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def content_stems(text: str) -> list[str]:
    return [stem(t) for t, _, _ in tokenize(text) if t not in FUNCTION_WORDS and not t[0].isdigit()]


DIRECTIONS: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(stem(w) for w in a.split()), frozenset(stem(w) for w in b.split()))
    for a, b in (
        ("down downward lower descend drop", "up upward raise lift higher ascend"),
        ("back backward reverse retreat behind", "forward ahead advance front"),
        ("left", "right"),
        ("counterclockwise anticlockwise", "clockwise"),
        ("below under beneath", "above over"),
        ("close shut", "open"),
        ("decrease reduce less", "increase more"),
    )
)
"""Pairs of opposite directions (word stems), general English: a sign cue of a parameter
widens to its group, and the opposite group is the other sign."""
COMPOUNDS = {("counter", "clockwis"): "counterclockwis", ("anti", "clockwis"): "anticlockwis"}
"""Two-word stems read as one ("counter clockwise"), so "clockwise" inside it is no cue."""
SIGN_STOP = frozenset("negativ positiv mean valu number zero it is its".split())
AMBIGUOUS_NUMBER_JOINERS = frozenset(("or", "to"))
""""two or three meters", "five to ten minutes": a range is not a value; ask."""
MAX_SPOKEN_OPTIONS = 6
"""A clarifying question lists an enum's values when it has at most this many."""


@dataclass
class Proposal:
    """What the resolver proposes for one utterance."""

    call: tuple[str, dict[str, Any]] | None
    """``(tool name, arguments)`` or ``None`` for "answer in words"."""
    sure: bool
    candidates: list[str] = field(default_factory=list)
    """Plausible tools, best first (for a constrained LLM choice when not sure)."""
    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Arguments found per candidate tool."""
    missing: dict[str, list[str]] = field(default_factory=dict)
    """Required arguments not found per candidate tool."""
    scores: dict[str, float] = field(default_factory=dict)
    reason: str = ""
    clarify: str | None = None
    """A short question to ask instead of acting; ``call`` is then the proposed call it would
    complete (``missing`` names what the answer must supply)."""
    intent: Intent | None = None
    problems: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per candidate tool: argument -> why its value is not usable (unit, range, ambiguous)."""


ARGUMENTS_ONLY = "only argument values matched"
"""``Proposal.reason`` when no word of the request names a tool, only argument values did
("make it brighter in the bedroom": the room): a tool chosen then is a guess, to be confirmed."""


@dataclass(frozen=True)
class SignRule:
    """Direction words of a numeric parameter, read from its docstring."""

    negative: frozenset[str]
    positive: frozenset[str]

    def sign(self, stems: list[str]) -> int:
        """-1, +1, 0 (no cue) or 2 (cues of both directions)."""
        s = set(_join_compounds(stems))
        neg, pos = bool(self.negative & s), bool(self.positive & s)
        return 2 if neg and pos else -1 if neg else 1 if pos else 0


def _join_compounds(stems: list[str]) -> list[str]:
    out: list[str] = []
    for st in stems:
        if out and (out[-1], st) in COMPOUNDS:
            out[-1] = COMPOUNDS[(out[-1], st)]
        else:
            out.append(st)
    return out


def sign_rule(description: str) -> SignRule | None:
    """The sign convention of a parameter description, or None (see the module docstring).

    Each sentence is cut at its "negative"/"positive" words; the words of each piece are
    that sign's cues ("Positive raises, negative lowers."); a sentence with one sign word
    is all its cue ("Lowers the arm when negative.").
    """
    direction_words = set().union(*(a | b for a, b in DIRECTIONS))
    cues: dict[str, set[str]] = {"negativ": set(), "positiv": set()}

    def cue_words(piece: list[str]) -> set[str]:
        found = {st for st in piece if st not in SIGN_STOP and (st in direction_words or st not in FUNCTION_WORDS)}
        return (found & direction_words) or found  # "lowers the arm": the direction, not the arm

    text = re.sub(r"\(([^)]*)\)", lambda m: " " + m.group(1).replace(",", " ") + " ", description)
    for segment in re.split(r"[.;,:]", text.replace("-", " ")):
        stems = _join_compounds([stem(t) for t, _, _ in tokenize(segment)])
        marks = [i for i, st in enumerate(stems) if st in cues]
        for k, i in enumerate(marks):
            after = cue_words(stems[i + 1 : marks[k + 1] if k + 1 < len(marks) else len(stems)])
            before = cue_words(stems[marks[k - 1] + 1 if k else 0 : i])
            cues[stems[i]] |= after or before  # "negative lowers it" / "lowers it when negative"
    if not cues["negativ"] and not cues["positiv"]:
        return None
    neg, pos = set(cues["negativ"]), set(cues["positiv"])
    for a, b in DIRECTIONS:
        for group, other in ((a, b), (b, a)):
            if group & cues["negativ"]:
                neg |= group
                pos |= other
            if group & cues["positiv"]:
                pos |= group
                neg |= other
    return SignRule(frozenset(neg - pos), frozenset(pos - neg))


@dataclass
class _ToolIndex:
    tool: Tool
    vocab: dict[str, float]
    signs: dict[str, SignRule]
    unit_words: dict[str, frozenset[str]]
    units: dict[str, Unit] = field(default_factory=dict)
    """The measurement unit each numeric parameter declares (see ``numbers.parameter_unit``)."""
    query: bool = False
    """Only reads the world (may answer a question, see ``intent.is_query_tool``)."""


class SchemaResolver:
    """Proposes tool calls from the tools' schemas alone (no model, microseconds per call).

    Thread-safe after construction (read-only state).
    """

    def __init__(
        self,
        tools: Iterable[Tool],
        *,
        min_trigger: float = 1.0,
        margin: float = 0.75,
        required_bonus: float = 1.0,
        missing_penalty: float = 1.5,
    ) -> None:
        self.min_trigger = min_trigger
        self.margin = margin
        self.required_bonus = required_bonus
        self.missing_penalty = missing_penalty
        self._index = [self._index_tool(t) for t in tools]
        df: dict[str, int] = {}
        for entry in self._index:
            for w in entry.vocab:
                df[w] = df.get(w, 0) + 1
        self._value_phrases = {
            tuple(stem(w) for w, _, _ in tokenize(str(v)))
            for e in self._index
            for prop in e.tool.parameters.get("properties", {}).values()
            for v in _enum_values(prop)
        }
        n = max(len(self._index), 1)
        self._idf = {w: math.log((n + 1) / c) for w, c in df.items()}

    # -- index -----------------------------------------------------------------------------

    @staticmethod
    def _index_tool(t: Tool) -> _ToolIndex:
        vocab: dict[str, float] = {}

        def add(text: str, weight: float) -> None:
            for s in content_stems(text):
                vocab[s] = max(vocab.get(s, 0.0), weight)

        add(t.name.replace("_", " "), 1.0)
        add(t.description, 1.0)
        signs: dict[str, SignRule] = {}
        units: dict[str, frozenset[str]] = {}
        measures: dict[str, Unit] = {}
        for pname, prop in t.parameters.get("properties", {}).items():
            desc = prop.get("description", "")
            words = pname.replace("_", " ")
            add(words, 0.5)
            add(desc, 0.5)
            units[pname] = frozenset(content_stems(words + " " + desc))
            measure = parameter_unit(pname, desc)
            if measure is not None:
                measures[pname] = measure
            rule = sign_rule(desc)
            if rule is not None:
                signs[pname] = rule
                for cue in rule.negative | rule.positive:  # "lift" for "Negative lowers it"
                    vocab[cue] = max(vocab.get(cue, 0.0), 0.5)
        # Enum values are argument words, not tool triggers.
        for prop in t.parameters.get("properties", {}).values():
            for value in _enum_values(prop):
                for s in content_stems(str(value)):
                    vocab.pop(s, None)
        return _ToolIndex(t, vocab, signs, units, measures, is_query_tool(t.name, t.description))

    @property
    def tools(self) -> list[Tool]:
        return [e.tool for e in self._index]

    # -- proposal --------------------------------------------------------------------------

    def propose(self, text: str) -> Proposal:
        """What to do about ``text``: only a request acts (see ``intent.py``); a question may
        call a query tool; anything else is answered in words."""
        intent = analyze(text)
        if intent.kind in ("negated", "report", "hypothetical", "statement"):
            return Proposal(None, True, reason=f"{intent.kind}: {intent.reason}", intent=intent)
        if intent.kind == "question" and not intent.may_query:
            return Proposal(None, True, reason=f"a question: {intent.reason}", intent=intent)
        proposal = self._propose(intent.clause, query_only=intent.kind == "question")
        proposal.intent = intent
        if intent.elliptical and proposal.call is None and not proposal.sure:
            # "the green block": no verb and no tool word, so nothing asks for an action.
            return Proposal(None, True, reason="names only argument values, asks for nothing", intent=intent)
        if intent.kind == "question" and proposal.call is None and proposal.sure:
            proposal.reason = f"a question ({intent.reason}) for no query tool: answered in words"
        if intent.confirm and proposal.call is not None and proposal.clarify is None:
            name, args = proposal.call
            entry = self._entry(name)
            takes_time = any(entry.units.get(p, ("",))[0] == "time" for p in args)
            if not (intent.confirm == "duration" and takes_time):  # "a timer in five minutes" is its argument
                proposal.clarify = self.confirm_question(intent.confirm, name, args)
        return proposal

    def confirm_question(self, why: str, name: str, arguments: dict[str, Any]) -> str:
        """Ask before acting on a likely but unsure request (see ``Intent.confirm``)."""
        what = self.describe(name, arguments)
        if why in ("later", "duration"):
            return f"I can only do things now, not later. Should I {what} now?"
        return f"Should I {what}?"

    def _propose(self, text: str, *, query_only: bool = False) -> Proposal:
        tokens = tokenize(text)
        words = [t for t, _, _ in tokens]
        stems = {stem(w) for w in words if w not in FUNCTION_WORDS and not w[0].isdigit()}
        # Words of a value named whole ("charging dock") are that argument, not a tool word
        # ("where is the charging dock" is not about the battery's *charge*).
        stems -= self._named_value_stems(words)
        scores: dict[str, float] = {}
        triggers: dict[str, float] = {}
        found: dict[str, dict[str, Any]] = {}
        missing: dict[str, list[str]] = {}
        problems: dict[str, dict[str, str]] = {}
        arg_hits: dict[str, int] = {}
        for entry in self._index:
            if query_only and not entry.query:
                continue
            name = entry.tool.name
            ex = self._extract(entry, text, tokens)
            args, miss = ex.found, ex.missing
            # Parameter words ("minutes", "meters") identify a tool only next to a value for it.
            valued = [p for p in [*args, *ex.problems] if not _is_string(entry.tool, p)]
            trig = sum(
                self._idf.get(s, 0.0) * entry.vocab[s]
                for s in stems
                if s in entry.vocab and (entry.vocab[s] >= 1.0 or valued)
            )
            fit = self.required_bonus * sum(1 for r in entry.tool.required if r in valued)
            fit -= self.missing_penalty * len([m for m in miss if m not in ex.problems])
            triggers[name] = trig
            scores[name] = trig + fit
            found[name], missing[name], problems[name], arg_hits[name] = args, miss, ex.problems, ex.hits
        ranked = sorted(scores, key=lambda n: (triggers[n] >= self.min_trigger, scores[n]), reverse=True)
        best = ranked[0] if ranked else None

        def proposal(call: Any, sure: bool, candidates: list[str], reason: str, clarify: str | None = None) -> Proposal:
            return Proposal(call, sure, candidates, found, missing, scores, reason, clarify, None, problems)

        if best is None or triggers[best] < self.min_trigger:
            arg_only = [n for n in ranked if arg_hits[n] > 0]
            if not arg_only:
                return proposal(None, True, [], "no tool words in the request")
            return proposal(None, False, arg_only[:3], ARGUMENTS_ONLY)
        others = [n for n in ranked[1:] if triggers[n] >= self.min_trigger]
        second = scores[others[0]] if others else -math.inf
        candidates = [best] + [n for n in others if scores[n] > scores[best] - 2 * self.margin][:2]
        call = (best, found[best])
        if scores[best] - second < self.margin:
            return proposal(call, False, candidates, f"close second: {others[0]}")
        entry = self._entry(best)
        for pname, why in problems[best].items():
            return proposal(call, True, candidates, f"{pname}: {why}", self.question(entry, pname, why))
        unfillable = [m for m in missing[best] if not _is_string(entry.tool, m)]
        if unfillable:
            return proposal(call, True, candidates, f"missing {unfillable}", self.question(entry, unfillable[0]))
        if missing[best]:
            return proposal(call, False, candidates, f"missing {missing[best]}")
        return proposal(call, True, candidates, "schema match")

    def _named_value_stems(self, words: list[str]) -> set[str]:
        text = " " + " ".join(stem(w) for w in words) + " "
        named: set[str] = set()
        for phrase in self._value_phrases:
            if len(phrase) > 1 and f" {' '.join(phrase)} " in text:
                named |= set(phrase)
        return named

    def _entry(self, name: str) -> _ToolIndex:
        return next(e for e in self._index if e.tool.name == name)

    def extract_arguments(
        self,
        t: Tool,
        text: str,
        *,
        tokens: list[tuple[str, int, int]] | None = None,
        index: _ToolIndex | None = None,
    ) -> tuple[dict[str, Any], list[str], int]:
        """Arguments of ``t`` found in ``text``: (found, missing required names, argument-word hits).

        A value that cannot be used (wrong dimension, out of bounds, ambiguous) is missing.
        """
        ex = self.extract(t, text, tokens=tokens, index=index)
        return ex.found, ex.missing, ex.hits

    def extract(
        self,
        t: Tool,
        text: str,
        *,
        tokens: list[tuple[str, int, int]] | None = None,
        index: _ToolIndex | None = None,
    ) -> Extraction:
        """Arguments of ``t`` in ``text``, with the reasons some values could not be used."""
        if index is None:
            index = next((e for e in self._index if e.tool.name == t.name), None) or self._index_tool(t)
        return self._extract(index, text, tokens if tokens is not None else tokenize(text))

    def _extract(self, index: _ToolIndex, text: str, tokens: list[tuple[str, int, int]]) -> Extraction:
        t = index.tool
        words = [w for w, _, _ in tokens]
        stems = [stem(w) for w in words]
        numbers = find_numbers(words)
        used_numbers: set[int] = set()
        props = t.parameters.get("properties", {})
        found: dict[str, Any] = {}
        problems: dict[str, str] = {}
        hits = 0
        # Enums and booleans first: they are unambiguous words.
        for pname, prop in props.items():
            values = _enum_values(prop)
            if values:
                value = _match_enum(values, stems)
                if value is not None:
                    found[pname] = value
                    hits += 1
            elif prop.get("type") == "boolean" or _anyof_type(prop) == "boolean":
                value = _match_bool(words)
                if value is not None:
                    found[pname] = value
        numeric = [
            p for p, s in props.items() if (s.get("type") or _anyof_type(s)) in ("number", "integer") and p not in found
        ]
        for pname in numeric:
            span_i = _pick_number(numbers, used_numbers, stems, index.unit_words.get(pname, frozenset()), len(numeric))
            if span_i is None:
                continue
            used_numbers.add(span_i)
            span = numbers[span_i]
            if len(numeric) == 1 and _range_said(numbers, span_i, words):
                problems[pname] = f"a range, not one value: {text!r}"
                continue
            said, wanted = spoken_unit(words, span.end), index.units.get(pname)
            if not same_dimension(said, wanted):
                problems[pname] = f"said in {UNIT_NAMES.get(said, 'another unit')}, not a {wanted[0]}"  # type: ignore[index,call-overload]
                continue
            # "a ninety second timer" for `minutes` is 1.5: said unit -> declared unit.
            value = convert(span.value, said, wanted)
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
                value = -abs(value) if direction == -1 else abs(value) if direction == 1 else value
            elif rule is None and span.signed and props[pname].get("minimum") is None:
                # A negative value for a parameter whose docstring gives negatives no meaning
                # ("a timer for minus five minutes", "turn left minus ninety degrees").
                problems[pname] = "a negative value this parameter does not define"
                continue
            bound = _out_of_bounds(props[pname], value)
            if bound:
                problems[pname] = bound
                continue
            integer = (props[pname].get("type") or _anyof_type(props[pname])) == "integer"
            found[pname] = as_number(value, integer)
        for pname, prop in props.items():
            if pname in found or prop.get("type") != "string" or _enum_values(prop):
                continue
            value = _string_after_trigger(text, tokens, stems, index.vocab)
            if value:
                found[pname] = value
        missing = [r for r in t.required if r not in found]
        return Extraction(found, missing, hits, problems)

    # -- questions -------------------------------------------------------------------------

    def question(self, entry: _ToolIndex | str, pname: str, problem: str = "") -> str:
        """A short, speakable question for the value of ``pname`` ("How far should I move, in meters?")."""
        if isinstance(entry, str):
            entry = self._entry(entry)
        t = entry.tool
        prop = t.parameters.get("properties", {}).get(pname, {})
        verb = spoken_name(t.name)
        what = pname.replace("_", " ")
        values = _enum_values(prop)
        if values:
            if len(values) <= MAX_SPOKEN_OPTIONS:
                shown = [str(v) for v in values]
                return f"Which {what}: {', '.join(shown[:-1])} or {shown[-1]}?"
            return f"Which {what}?"
        kind = prop.get("type") or _anyof_type(prop)
        if kind == "boolean":
            return f"Should I {verb} on or off?"
        if kind in ("number", "integer"):
            unit = entry.units.get(pname)
            uname = UNIT_NAMES.get(unit) if unit else None
            lo, hi = (
                prop.get("minimum", prop.get("exclusiveMinimum")),
                prop.get("maximum", prop.get("exclusiveMaximum")),
            )
            prefix = ""
            if problem.startswith("out of bounds") and lo is not None and hi is not None:
                prefix = f"I can {verb} from {lo:g} to {hi:g}{' ' + uname if uname else ''}. "
            if unit is not None and unit[0] == "length":
                return f"{prefix}How far should I {verb}, in {uname}?"
            if uname:
                return f"{prefix}How many {uname} should I {verb}?"
            return f"{prefix}What {what} should I use to {verb}?"
        return f"What {what} should I {verb}?"

    def describe(self, name: str, arguments: dict[str, Any]) -> str:
        """The call as words ("turn right 180 degrees"), for "Did you mean ...?"."""
        entry = self._entry(name)
        parts = [spoken_name(name)]
        for pname, value in arguments.items():
            if isinstance(value, bool):
                parts.append("on" if value else "off")
            elif isinstance(value, (int, float)):
                unit = entry.units.get(pname)
                parts.append(f"{value:g} {UNIT_NAMES.get(unit, '')}".strip() if unit else f"{value:g}")
            else:
                parts.append(str(value))
        return " ".join(parts)


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


PARTICLES = frozenset("up down to on off in out over back away into onto".split())


def spoken_name(tool_name: str) -> str:
    """A tool name as a verb phrase: ``set_timer`` -> "set the timer", ``go_to`` -> "go to"."""
    parts = [p for p in tool_name.lower().split("_") if p]
    if len(parts) >= 2 and parts[1] not in PARTICLES:
        parts.insert(1, "the")
    return " ".join(parts)


def _range_said(numbers: list, i: int, words: list[str]) -> bool:
    """Two numbers side by side or joined by "or"/"to" ("two three meters", "two or three")."""
    for a in (i - 1, i):
        if a < 0 or a + 1 >= len(numbers):
            continue
        gap = words[numbers[a].end : numbers[a + 1].start]
        if not gap or (len(gap) == 1 and gap[0] in AMBIGUOUS_NUMBER_JOINERS):
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


def _is_string(t: Tool, pname: str) -> bool:
    prop = t.parameters.get("properties", {}).get(pname, {})
    return prop.get("type") == "string" and not _enum_values(prop)


def _enum_values(prop: dict[str, Any]) -> list[Any]:
    if "enum" in prop:
        return list(prop["enum"])
    for sub in prop.get("anyOf", []):
        if "enum" in sub:
            return list(sub["enum"])
    return []


def _anyof_type(prop: dict[str, Any]) -> str | None:
    for sub in prop.get("anyOf", []):
        if sub.get("type") not in (None, "null"):
            return sub.get("type")
    return None


def _match_enum(values: list[Any], stems: list[str]) -> Any:
    """The enum value named in the utterance: whole phrase first (longest), else a word unique to one value."""
    text_stems = " " + " ".join(stems) + " "
    best = None
    best_len = 0
    for v in values:
        vs = [stem(w) for w, _, _ in tokenize(str(v))]
        if vs and f" {' '.join(vs)} " in text_stems and len(vs) > best_len:
            best, best_len = v, len(vs)
    if best is not None:
        return best
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


def _match_bool(words: list[str]) -> bool | None:
    t = any(w in TRUE_WORDS for w in words)
    f = any(w in FALSE_WORDS for w in words)
    if t != f:
        return t
    return None


def _pick_number(
    numbers: list, used: set[int], stems: list[str], unit_words: frozenset[str], n_numeric: int
) -> int | None:
    free = [i for i in range(len(numbers)) if i not in used]
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


def _string_after_trigger(
    text: str, tokens: list[tuple[str, int, int]], stems: list[str], vocab: dict[str, float]
) -> str | None:
    """The longest run of words between the words that named the tool, without filler at its ends.

    "pick up *the red cup* please" -> "red cup"; "add *eggs* to the shopping list" -> "eggs".
    """
    best: tuple[int, int] | None = None
    start = 0
    n = len(tokens)
    for i in range(n + 1):
        is_trigger = i < n and vocab.get(stems[i], 0) >= 1.0 and tokens[i][0] not in FUNCTION_WORDS
        if i < n and not is_trigger:
            continue
        a, b = start, i
        while a < b and (tokens[a][0] in FUNCTION_WORDS or tokens[a][0] in DETERMINERS):
            a += 1
        while b > a and (tokens[b - 1][0] in FUNCTION_WORDS or tokens[b - 1][0] in ("thanks", "thank")):
            b -= 1
        if b > a and (best is None or b - a >= best[1] - best[0]):
            best = (a, b)
        start = i + 1
    if best is None:
        return None
    return text[tokens[best[0]][1] : tokens[best[1] - 1][2]]
