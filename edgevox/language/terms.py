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
    tokens = [(m.group(), kept[m.start()], kept[m.end() - 1] + 1) for m in _TOKEN_RE.finditer(lowered)]
    return _rates(tokens, text) if "/" in text else tokens


def _rates(tokens: list[tuple[str, int, int]], text: str) -> list[tuple[str, int, int]]:
    """A slash between two unit symbols is "per" ("6 km/h" is "6 km per h", "L/ha")."""
    from edgevox.language.units import unit  # pint: loaded only when a slash is written

    out: list[tuple[str, int, int]] = []
    for k, tok in enumerate(tokens):
        out.append(tok)
        if k + 1 < len(tokens) and text[tok[2] : tokens[k + 1][1]] == "/":
            nxt = tokens[k + 1][0]
            if unit(tok[0]) is not None and unit(nxt) is not None:
                out.append(("per", tok[2], tok[2] + 1))
    return out


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
        ("down downward lower descend drop", "up upward raise lift higher ascend rise climb"),
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
DIRECTION_STEMS = frozenset(w for pair in DIRECTIONS for group in pair for w in group)
"""Every word stem of :data:`DIRECTIONS`."""
_SPOKEN = {
    stem(w): w
    for w in "up down left right forward back clockwise counterclockwise higher lower open close more less".split()
}


def _say(stems: frozenset[str]) -> str:
    """A readable word for a direction group ("rais" -> "up")."""
    for st, word in _SPOKEN.items():
        if st in stems:
            return word
    return min(stems, key=len) if stems else "?"


DIRECTION_ADVERBS = frozenset(
    """up down left right forward forwards backward backwards ahead clockwise counterclockwise
    anticlockwise upward upwards downward downwards back""".split()
)
"""English adverbs of direction (a closed class): never the verb of a request ("pan *left*" is
not a form of "leave"), except "back" opening a phrasal verb ("*back* up")."""


BE_HAVE = frozenset("is are was were be been have has had got whats thats theres 's".split())


def means_remaining(words: list[str] | tuple[str, ...], i: int) -> bool:
    """ "how much gin is *left*", "what do you have left": "left" after a form of "be" or
    "have" is the participle of "leave" (what remains), not a direction."""
    return words[i] == "left" and i > 0 and words[i - 1] in BE_HAVE


def is_direction(word: str) -> bool:
    """An adverb of direction ("up", "left", "backwards", "clockwise")."""
    return word.lower() in DIRECTION_ADVERBS


COMPOUNDS = {("counter", "clockwis"): "counterclockwis", ("anti", "clockwis"): "anticlockwis"}
"""Two-word stems read as one ("counter clockwise"), so "clockwise" inside it is no cue."""
SIGN_STOP = frozenset("negativ positiv tru fals yes mean valu number zero it is its".split())


@dataclass(frozen=True)
class SignRule:
    """Direction words of a numeric parameter, read from its docstring."""

    negative: frozenset[str]
    positive: frozenset[str]

    @property
    def forward_positive(self) -> bool:
        """Positive is *forward* ("positive runs ahead, negative astern"): a level set without a
        way, or an answer to "how far?" for it, is forward."""
        return bool(self.positive & DIRECTIONS[1][1])

    @property
    def of_motion(self) -> bool:
        """The two signs are directions of motion (up/down, left/right, clockwise, back/forward):
        a magnitude said without one leaves the way unknown ("turn thirty degrees"). Not so for
        a value on a scale ("twenty degrees" of ``celsius``, negative below zero)."""
        return any((a | b) & (self.negative | self.positive) for a, b in DIRECTIONS[:4])

    def choices(self) -> str:
        """The two directions as words for a question: "left or right"."""
        return f"{_say(self.positive)} or {_say(self.negative)}"

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
    marks = {"negativ": "negativ", "positiv": "positiv"}
    rule = _marked_rule(_without_remarks(description), marks)
    glossed = _glossed_bounds(description) if rule is None else ""
    return _marked_rule(glossed, marks) if glossed else rule


_GLOSSED = re.compile(
    r"(?<![\w.])(?P<minus>-|\u2212|minus\s+)?(?P<number>\d+(?:\.\d+)?)\s*(?:[a-z\u00b0%]+\s*)?"
    r"(?:\((?P<paren>[^)]*)\)|(?:is|means|=)\s+(?P<said>[a-z ]+))",
    re.IGNORECASE,
)


def _glossed_bounds(description: str) -> str:
    """A sign convention said by naming signed values ("-90 (looking down) to 90 (looking up)",
    "-30 is full left"), as the sentences "negative looking down. positive looking up."; "" when
    no negative value is named by a direction."""
    sides: dict[str, list[str]] = {"negative": [], "positive": []}
    for m in _GLOSSED.finditer(description):
        gloss = m.group("paren") or m.group("said") or ""
        if float(m.group("number")) == 0 or not {stem(w) for w, _, _ in tokenize(gloss)} & DIRECTION_STEMS:
            continue
        sides["negative" if m.group("minus") else "positive"].append(gloss)
    if not sides["negative"]:
        return ""  # "0 (level) to 90 (straight up)": a scale with named points, no signed change
    return ". ".join(f"{side} {' '.join(glosses)}" for side, glosses in sides.items() if glosses)


_VIEWPOINT = re.compile(r"\s*\((?:as\s+)?(?:seen|viewed|looking|facing)\s+(?:from|at)\b[^()]*\)", re.I)


def _without_remarks(text: str) -> str:
    """The text without a point of view in parentheses ("(as seen from behind the camera)"):
    it says where the observer stands, not which way the motion goes. Other remarks stay, they
    often gloss the direction ("(to the right)", "(so negative z goes down)")."""
    return _VIEWPOINT.sub("", text)


def bool_rule(description: str) -> SignRule | None:
    """What a boolean parameter's text says sets it: "true to start recording, false to stop"
    -> True for "start", False for "stop" (``SignRule.sign`` +1 / -1), read like a sign
    convention with "true"/"false" ("on"/"off", "enabled"/"disabled") as the marks."""
    marks = {"tru": "positiv", "fals": "negativ"}
    return _marked_rule(description, marks, first_word=True)


_ON_OFF = {stem(w) for w in ("on", "off", "open", "close", "shut", "start", "stop", "enable", "disable")}


def _without_particles(raw: list[str]) -> list[str]:
    """The words without a direction that is the particle of a phrasal verb made of a direction
    of another axis ("negative *backs up*": WordNet's back up, "move backwards"; the "up" says
    no height)."""
    from edgevox.language.lexicon import base_form, known  # WordNet: loaded only when a docstring needs it

    out: list[str] = []
    for w in raw:
        prev = out[-1] if out else ""
        axis = [k for k, (a, b) in enumerate(DIRECTIONS) if stem(w) in a | b]
        other = [k for k, (a, b) in enumerate(DIRECTIONS) if stem(prev) in a | b]
        if axis and other and not set(axis) & set(other) and known(f"{base_form(prev, 'v')} {w}", "v"):
            continue
        out.append(w)
    return out


def _inflection(word: str) -> str:
    """ "-s" (third person or plural: "closes", "locks"), "-ing", "-ed" or "" (bare)."""
    return next((end for end in ("ing", "ed", "s") if word.endswith(end) and not word.endswith("ss")), "")


def _coordinated_predicates(raw: list[str], marks: dict[str, str]) -> set[str]:
    """Stems of the verbs joined by "and"/"or" to the first word said after a mark, in the same
    form (English coordinates predicates of one subject alike: "True *unlocks and opens* the
    lid", "False *closes* it *and locks* it"): each is a cue of that mark, the first word too.
    A word in another form is not a second predicate ("opens the lid and the vent")."""
    out: set[str] = set()
    first = ""
    for k, w in enumerate(raw):
        st = stem(w)
        if st in marks:
            first = ""
        elif not first:
            if st not in SIGN_STOP and st not in FUNCTION_WORDS:
                first = w
        elif w in ("and", "or") and k + 1 < len(raw):
            nxt = raw[k + 1]
            if stem(nxt) not in FUNCTION_WORDS | SIGN_STOP and _inflection(nxt) == _inflection(first):
                out |= {stem(first), stem(nxt)}
    return out


def _marked_rule(description: str, marks: dict[str, str], *, first_word: bool = False) -> SignRule | None:
    """``first_word`` (booleans): a mark's cue is the on/off word of its piece ("True turns the
    lamp *on*", "False switches it *off*"), else the first word after it ("true to *start*
    recording"); a word cued for both values says nothing."""
    direction_words = DIRECTION_STEMS
    cues: dict[str, set[str]] = {"negativ": set(), "positiv": set()}

    def cue_words(piece: list[str], coordinated: set[str]) -> set[str]:
        found = {st for st in piece if st not in SIGN_STOP and (st in direction_words or st not in FUNCTION_WORDS)}
        if first_word:
            # an on/off word is the cue ("False switches it *off*": "switch" goes both ways);
            # else the first word ("true to *start* recording"); and the verbs joined to it
            # ("False closes it and *locks* it")
            on_off = {st for st in piece if st in _ON_OFF}
            content = [st for st in piece if st not in SIGN_STOP and st not in FUNCTION_WORDS]
            return (on_off or set(content[:1])) | (coordinated & set(piece))
        return (found & direction_words) or found  # "lowers the arm": the direction, not the arm

    text = re.sub(r"\(([^)]*)\)", lambda m: " " + m.group(1).replace(",", " ") + " ", description)
    for segment in re.split(r"[.;,:]", text.replace("-", " ")):
        raw = _without_particles([t for t, _, _ in tokenize(segment)])
        stems = _join_compounds([stem(t) for t in raw])
        at = [i for i, st in enumerate(stems) if st in marks]
        joined = _coordinated_predicates(raw, marks) if first_word else set()
        for k, i in enumerate(at):
            after = cue_words(stems[i + 1 : at[k + 1] if k + 1 < len(at) else len(stems)], joined)
            before = cue_words(stems[at[k - 1] + 1 if k else 0 : i], joined)
            cues[marks[stems[i]]] |= after or before  # "negative lowers it" / "lowers it when negative"
    if not cues["negativ"] and not cues["positiv"]:
        return None
    neg, pos = set(cues["negativ"]), set(cues["positiv"])
    if first_word:
        neg, pos = neg - cues["positiv"], pos - cues["negativ"]
        if not neg or not pos:  # one side only ("true to switch the lights on"): its on/off word
            neg, pos = neg & _ON_OFF, pos & _ON_OFF
        if not neg and not pos:
            return None
    for a, b in DIRECTIONS:
        for group, other in ((a, b), (b, a)):
            if group & cues["negativ"]:
                neg |= group
                pos |= other
            if group & cues["positiv"]:
                pos |= group
                neg |= other
    # A word glossed by a direction in parentheses is that direction in the robot's own words:
    # "starboard (right)", "port (left)".
    for word, gloss in re.findall(r"([A-Za-z]+)\s*\(\s*([A-Za-z-]+)\s*\)", description):
        g, w = stem(gloss.lower()), stem(word.lower())
        if w in FUNCTION_WORDS or w in SIGN_STOP:
            continue
        if g in neg:
            neg.add(w)
        elif g in pos:
            pos.add(w)
    return SignRule(frozenset(neg - pos), frozenset(pos - neg))
