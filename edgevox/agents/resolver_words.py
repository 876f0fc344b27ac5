"""The resolver's words: tokens, crude stems, the function words that never name a tool, and
the sign conventions read from a numeric parameter's docstring ("Negative for backwards").

General English only, never a tool's own vocabulary (that comes from its schema, see
:mod:`edgevox.agents.resolver`). The rules are pinned by ``tests/agents/test_resolver.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
