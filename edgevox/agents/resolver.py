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
- **Signs.** A number parameter whose description has a clause starting with
  "negative" (``"Negative for backwards (back up, reverse)."``) is negated when the
  utterance uses a content word of that clause. This is a documented docstring
  convention, so any tool set can use it.
- **Fit.** Required arguments found raise a tool's score; missing ones lower it.
- **Statements are not requests.** A one-clause utterance whose subject is the speaker
  ("I love the kitchen in this house") and that has no request word ("you", "please",
  "want", "need", "could", "let's"...) is answered in words, even if it names a room and
  a description word: a robot must not drive off because someone talked about a room.
  "I need you in the office" and "I'm cold, close the window" are still requests.

:meth:`SchemaResolver.propose` returns a :class:`Proposal`: a call (or ``None`` =
answer in words) and whether it is *sure*. When it is not (a close second, a missing
argument, only argument words matched), the agent asks the LLM, constrained to the
candidate tools and to the arguments already found (see ``decoders.py``).

Rejected alternative: a keyword list per tool written by hand. It does not carry
over to a new tool set; the schema does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from edgevox.agents.numbers import Unit, as_number, convert, find_numbers, parameter_unit, spoken_unit
from edgevox.agents.tools import Tool

STOPWORDS = frozenset(
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

_TOKEN_RE = re.compile(r"\d+(?:\.\d+)?|[a-z]+")

FIRST_PERSON = frozenset("i im ive id ill we were weve wed my our".split())
"""Subjects of a statement about the speaker (apostrophes are removed: "I'm" -> "im")."""
REQUEST_WORDS = frozenset(
    """you your youre please pls want wanna need needs would like let lets can could should must
    have gotta""".split()
)
"""Words that make an utterance a request even when it starts with "I" or "we"."""
_CLAUSE_BREAK = re.compile(r"[,;:!?]|\.\s|\b(?:and|so|then|but)\b", re.IGNORECASE)


def is_statement(text: str) -> bool:
    """True for a one-clause statement about the speaker with no request word (see module doc)."""
    words = [w for w, _, _ in tokenize(text)]
    if not words or words[0] not in FIRST_PERSON:
        return False
    if _CLAUSE_BREAK.search(text.strip().rstrip(".!?")):
        return False  # "I'm cold, close the window": another clause may be the request
    return not any(w in REQUEST_WORDS for w in words)


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
    return [stem(t) for t, _, _ in tokenize(text) if t not in STOPWORDS and not t[0].isdigit()]


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


@dataclass
class _ToolIndex:
    tool: Tool
    vocab: dict[str, float]
    negative_cues: dict[str, frozenset[str]]
    unit_words: dict[str, frozenset[str]]
    units: dict[str, Unit] = field(default_factory=dict)
    """The measurement unit each numeric parameter declares (see ``numbers.parameter_unit``)."""


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
        negative: dict[str, frozenset[str]] = {}
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
            m = re.search(r"\bnegative\b([^.;]*)", desc, re.I)
            if m:
                cues = set(content_stems(m.group(1))) - {"negativ", "mean", "valu", "number"}
                negative[pname] = frozenset(cues)
        # Enum values are argument words, not tool triggers.
        for prop in t.parameters.get("properties", {}).values():
            for value in _enum_values(prop):
                for s in content_stems(str(value)):
                    vocab.pop(s, None)
        return _ToolIndex(t, vocab, negative, units, measures)

    @property
    def tools(self) -> list[Tool]:
        return [e.tool for e in self._index]

    # -- proposal --------------------------------------------------------------------------

    def propose(self, text: str) -> Proposal:
        if is_statement(text):
            return Proposal(None, True, [], {}, {}, {}, "a statement about the speaker, not a request")
        tokens = tokenize(text)
        words = [t for t, _, _ in tokens]
        stems = {stem(w) for w in words if w not in STOPWORDS and not w[0].isdigit()}
        scores: dict[str, float] = {}
        triggers: dict[str, float] = {}
        found: dict[str, dict[str, Any]] = {}
        missing: dict[str, list[str]] = {}
        arg_hits: dict[str, int] = {}
        for entry in self._index:
            name = entry.tool.name
            args, miss, hits = self.extract_arguments(entry.tool, text, tokens=tokens, index=entry)
            # Parameter words ("minutes", "meters") identify a tool only next to a value for it.
            has_value = any(not _is_string(entry.tool, p) for p in args)
            trig = sum(
                self._idf.get(s, 0.0) * entry.vocab[s]
                for s in stems
                if s in entry.vocab and (entry.vocab[s] >= 1.0 or has_value)
            )
            fit = self.required_bonus * sum(
                1 for r in entry.tool.required if r in args and not _is_string(entry.tool, r)
            )
            fit -= self.missing_penalty * len(miss)
            triggers[name] = trig
            scores[name] = trig + fit
            found[name], missing[name], arg_hits[name] = args, miss, hits
        ranked = sorted(scores, key=lambda n: (triggers[n] >= self.min_trigger, scores[n]), reverse=True)
        best = ranked[0] if ranked else None
        if best is None or triggers[best] < self.min_trigger:
            arg_only = [n for n in ranked if arg_hits[n] > 0]
            if not arg_only:
                return Proposal(None, True, [], found, missing, scores, "no tool words in the request")
            return Proposal(None, False, arg_only[:3], found, missing, scores, "only argument values matched")
        others = [n for n in ranked[1:] if triggers[n] >= self.min_trigger]
        second = scores[others[0]] if others else -math.inf
        candidates = [best] + [n for n in others if scores[n] > scores[best] - 2 * self.margin][:2]
        call = (best, found[best])
        if missing[best]:
            return Proposal(call, False, candidates, found, missing, scores, f"missing {missing[best]}")
        if scores[best] - second < self.margin:
            return Proposal(call, False, candidates, found, missing, scores, f"close second: {others[0]}")
        return Proposal(call, True, candidates, found, missing, scores, "schema match")

    def extract_arguments(
        self,
        t: Tool,
        text: str,
        *,
        tokens: list[tuple[str, int, int]] | None = None,
        index: _ToolIndex | None = None,
    ) -> tuple[dict[str, Any], list[str], int]:
        """Arguments of ``t`` found in ``text``: (found, missing required names, argument-word hits)."""
        if tokens is None:
            tokens = tokenize(text)
        if index is None:
            index = next((e for e in self._index if e.tool.name == t.name), None) or self._index_tool(t)
        words = [w for w, _, _ in tokens]
        stems = [stem(w) for w in words]
        numbers = find_numbers(words)
        used_numbers: set[int] = set()
        props = t.parameters.get("properties", {})
        found: dict[str, Any] = {}
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
            # "a ninety second timer" for `minutes` is 1.5: said unit -> declared unit.
            value = convert(numbers[span_i].value, spoken_unit(words, numbers[span_i].end), index.units.get(pname))
            cues = index.negative_cues.get(pname)
            if cues and cues & set(stems):
                value = -abs(value)
            integer = (props[pname].get("type") or _anyof_type(props[pname])) == "integer"
            found[pname] = as_number(value, integer)
        for pname, prop in props.items():
            if pname in found or prop.get("type") != "string" or _enum_values(prop):
                continue
            value = _string_after_trigger(text, tokens, stems, index.vocab)
            if value:
                found[pname] = value
        missing = [r for r in t.required if r not in found]
        return found, missing, hits


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
    owners: dict[str, list[Any]] = {}
    for v in values:
        for w in {stem(w) for w, _, _ in tokenize(str(v)) if w not in STOPWORDS}:
            owners.setdefault(w, []).append(v)
    votes: dict[int, int] = {}
    for s in stems:
        if s in owners and len(owners[s]) == 1:
            i = values.index(owners[s][0])
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
        is_trigger = i < n and vocab.get(stems[i], 0) >= 1.0 and tokens[i][0] not in STOPWORDS
        if i < n and not is_trigger:
            continue
        a, b = start, i
        while a < b and (tokens[a][0] in STOPWORDS or tokens[a][0] in DETERMINERS):
            a += 1
        while b > a and (tokens[b - 1][0] in STOPWORDS or tokens[b - 1][0] in ("thanks", "thank")):
            b -= 1
        if b > a and (best is None or b - a >= best[1] - best[0]):
            best = (a, b)
        start = i + 1
    if best is None:
        return None
    return text[tokens[best[0]][1] : tokens[best[1] - 1][2]]
