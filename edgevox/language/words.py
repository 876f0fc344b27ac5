"""The English the intent rules read: closed-class word tables (pronouns, auxiliaries,
negators, wh-words, conjunctions, time words) and verb forms from lemminflect's offline
lexicon (loaded on first use).

No word here names a tool or a robot; see :mod:`edgevox.language.intent` for the rules that
use them. Apostrophes are removed before lookup ("don't" -> "dont").
"""

from __future__ import annotations

import functools
import re

from edgevox.language.lexicon import is_verb_lemma
from edgevox.language.numbers import TENS, UNITS
from edgevox.language.units import unit

LIGHT_VERBS = frozenset("set get do make take go put have give change keep bring".split())
"""English light verbs: they carry little meaning of their own ("*set* the volume", "*take* a
photo"); their object or particle says what is done."""

# -- closed-class word tables (apostrophes are removed: "don't" -> "dont") ------------------

DISCOURSE = frozenset("oh uh um umm uhm er erm hmm ah ahh well okay ok alright hey so now just yes yeah".split())
"""Interjections and fillers skipped at the start of a clause ("oh move forward two")."""
NEGATORS = frozenset(
    """not never dont doesnt didnt wont wouldnt cant cannot couldnt shouldnt mustnt neednt
    isnt arent wasnt werent havent hasnt hadnt nor avoid refrain""".split()
)
NEGATING_PHRASES = (("no", "need"), ("no", "more"), ("no", "longer"), ("forget", "about"), ("stop", "trying"))
"""Two-word negations; "no" alone is an answer or an interjection, not a negation."""
DOUBLE_NEGATIONS = (("dont", "forget"), ("never", "forget"), ("do", "not", "forget"))
""""don't forget to X" asks for X."""
RETRACTIONS = (("never", "mind"), ("nevermind",), ("forget", "it"), ("scratch", "that"), ("cancel", "that"))
WH_WORDS = frozenset("what whats which who whos whom whose where wheres when whens why how hows".split())
AUXILIARIES = frozenset(
    """am is are was were be do does did have has had can could will would shall should may might must
    isnt arent wasnt werent dont doesnt didnt havent hasnt hadnt cant couldnt wont wouldnt shouldnt""".split()
)
MAIN_VERB_AUXILIARIES = frozenset("do have be".split())
"""Auxiliaries that are also imperative verbs: before an indefinite object ("do a turn",
"have a look") they open a command, not a question ("do you ...", "do the lights work");
"be" never opens a question."""
REQUEST_MODALS = frozenset("can could will would".split())
ABILITY_MARKERS = frozenset("even actually really still ever".split())
""""can you *even* go upstairs": a question about ability, not a request."""
SUBJECT_PRONOUNS = frozenset(
    """i im ive id ill we were weve wed you youre youve youd he hes she shes it its they theyre theyve
    there theres someone somebody everyone everybody nobody that thats this these those""".split()
)
OBJECT_PRONOUNS = frozenset("me us you him her it them".split())
FIRST_PERSON = frozenset("i im ive id ill we weve wed".split())
DETERMINERS = frozenset("the a an my your his her our their its some every each this that these those".split())
FINITE_MARKERS = frozenset(
    """is are was were am isnt arent wasnt werent has have had hasnt havent will would can could
    should might must may does did doesnt didnt""".split()
)
"""Words that make a noun-first clause a sentence ("the office *is* too cold"), not an
elliptical command ("the kitchen lights on")."""
WANT_VERBS = frozenset("want wanna need".split())
"""After a first-person subject, present tense: a request ("I want the lights on")."""
WISH_VERBS = frozenset("like love prefer".split())
"""After "I'd"/"we'd"/"would": a request ("I'd like the lights on"); alone a statement ("I like it")."""
OBLIGATION = frozenset("should must gotta can could may".split())
"""After "we"/"you": a request ("we should go", "you can go now")."""
IRREGULAR_PAST = frozenset(
    """was were did had went came drove took got made gave saw said told ran rode brought bought
    caught found thought knew flew threw grew drew wrote spoke broke chose froze woke stole sold held
    kept slept swept felt left lost meant sent spent built lent bent fell forgot began sang sat stood
    understood hung shook""".split()
)
PAST_TIME = frozenset("yesterday ago earlier previously".split())
PAST_TIME_AFTER_LAST = frozenset("night week weekend month year time morning evening".split())
CONDITIONS = frozenset("if unless whenever suppose supposing imagine assuming hypothetically".split())
POLITE_CONDITIONS = frozenset("can could would will please dont".split())
""""if you could/can/would/please/don't mind": politeness, not a condition."""
ABOUT_ENDINGS = frozenset("do does for work works mean means".split())
""""what does X do", "what is X for", "how does X work": about a thing, not a reading of it."""
DEFERRAL_WORDS = frozenset("later tomorrow tonight someday sometime eventually afterwards afterward".split())
"""Future time: the robot has no scheduler, so a command for later is asked about, never run now."""
DEFERRAL_PHRASES = (
    ("at", "some", "point"), ("one", "day"), ("in", "a", "bit"), ("in", "a", "while"), ("next", "time"),
    ("next", "week"), ("this", "evening"), ("this", "afternoon"), ("this", "weekend"), ("at", "noon"),
    ("at", "midnight"), ("after", "dinner"), ("after", "lunch"), ("after", "breakfast"), ("before", "bed"),
)  # fmt: skip
CALENDAR_UNITS = frozenset("day days week weeks moment".split())


def is_time_unit(word: str) -> bool:
    """A unit of a delay ("in five *minutes*", "in two *days*")."""
    u = unit(word)
    return word in CALENDAR_UNITS or (u is not None and u.dimension == "time")


HYPOTHETICAL_OPENINGS = (
    ("in", "theory"), ("theoretically",), ("pretend",), ("lets", "say"), ("let", "us", "say"), ("say", "you"),
    ("in", "the", "movie"), ("in", "a", "story"), ("in", "the", "story"), ("in", "the", "game"),
)  # fmt: skip
"""Openings that put what follows in a story, a game or a supposition."""
HEDGES = frozenset("maybe perhaps possibly probably".split())
"""With a modal ("maybe you could ..."): a suggestion, asked about before acting."""
REPORTING_VERBS = frozenset("says said say tells told asks asked reads read writes wrote goes went".split())
"""A clause ending with one ("the manual says:") quotes what follows."""
FREQUENCY_ADVERBS = frozenset(
    "usually always often sometimes rarely seldom normally generally typically frequently occasionally".split()
)
"""After a noun they mark a habit of that noun ("people usually go ..."): a statement."""
COPULAS = frozenset("is are was were isnt arent wasnt werent".split())
SUBORDINATORS = frozenset(
    "that which who whom where when until till while if whether because so as it there what".split()
)
BARE_NEGATION_FILLER = frozenset(
    "under any circumstances ever never please now yet no not dont do again at all whatever happens".split()
)
"""Words of a negation that stands alone ("do not, under any circumstances, ..."): it negates
the clause that follows."""
CLAUSE_CONJUNCTIONS = frozenset("but then instead because cause since although though whereas otherwise".split())
NEW_CLAUSE_AFTER_AND = NEGATORS | SUBJECT_PRONOUNS | frozenset("please then".split())

_WORD_RE = re.compile(r"\d+(?:\.\d+)?|[a-z]+")


def words(text: str) -> list[str]:
    """Lower-case word tokens, apostrophes removed ("Don't" -> "dont"); a hyphenated compound
    is one word ("do-not-disturb" -> "donotdisturb": a name, not a negation). A noun's "'s" is
    "is" unless what is possessed follows ("the kitchen's a mess", "the left section's already
    off"; "the cafeteria's menu" is a possessive): see :func:`_possessive_or_is`."""
    lowered = _NOUN_IS.sub(_possessive_or_is, _HYPHENATED.sub("", text.lower().replace("\u2019", "'")))
    return _WORD_RE.findall(lowered.replace("'", ""))


_NOUN_IS = re.compile(
    r"(?P<before>\b[a-z0-9]+\s+)?\b(?!(?:it|that|what|there|here|he|she|who|let|where|how)'s)"
    r"(?P<noun>[a-z]+)'s\s+(?P<next>[a-z]+)(?P<rest>\s+[a-z]+)?"
)
_IS_BEFORE = frozenset("a an the this that my your our their not been".split())


def _possessive_or_is(m: re.Match[str]) -> str:
    """A possessive "'s" is followed by what is possessed, a noun (maybe after an adjective):
    "the cafeteria's menu", "the robot's left arm". Before a determiner, "not", an -ing form, or
    a word that is no noun (an adverb, a particle, an adjective ending the clause) it is "is":
    "the left section's *already* off", "the tank's *empty*". After a number it is a plural
    ("four k's an hour")."""
    before, noun, nxt, rest = m.group("before") or "", m.group("noun"), m.group("next"), m.group("rest") or ""
    if before.strip() and (before.strip().isdigit() or before.strip() in NUMBER_WORDS):
        return f"{before}{noun}s {nxt}{rest}"
    after = rest.strip()
    readings = lemmas(nxt)
    noun_follows = "ADJ" in readings and bool(after) and "NOUN" in lemmas(after)
    if nxt in _IS_BEFORE or nxt.endswith("ing") or ("NOUN" not in readings and not noun_follows):
        return f"{before}{noun} is {nxt}{rest}"
    return m.group(0)


_HYPHENATED = re.compile(r"(?<=[a-z])-(?=[a-z])")


def has_seq(ws: list[str], seq: tuple[str, ...]) -> bool:
    n = len(seq)
    return any(tuple(ws[i : i + n]) == seq for i in range(len(ws) - n + 1))


NUMBER_WORDS = frozenset(UNITS) | frozenset(TENS)
"""Spoken integers, from the number module's tables ("at *five*", "in *twenty* minutes")."""


@functools.lru_cache(maxsize=8192)
def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """Part-of-speech readings of ``word`` from lemminflect's lexicon (offline, in its wheel)."""
    try:
        from lemminflect import getAllLemmas
    except ModuleNotFoundError:  # pragma: no cover - a core dependency; fall back to closed classes only
        return {}
    return dict(getAllLemmas(word))


NUMBER_NAMES = frozenset(UNITS) | frozenset(TENS) | frozenset(("hundred", "thousand"))


def can_be_base_verb(word: str) -> bool:
    """``turn``, ``set``, ``people``: the word has a verb reading in its base (imperative) form.
    A word the tagger reads only as another verb's past ("slew" of "slay") is also a base verb
    when WordNet lists it as one ("slew to Mars"), unless it is a known past form."""
    verbs = lemmas(word).get("VERB", ())
    return word in verbs or (bool(verbs) and not is_past_form(word) and is_verb_lemma(word))


def can_be_verb(word: str) -> bool:
    return "VERB" in lemmas(word) or word in FINITE_MARKERS or is_past_form(word)


def inflected_verb_only(word: str) -> bool:
    """``turned``, ``picking``, ``says``: only ever an inflected verb - a finite verb or a participle."""
    lem = lemmas(word)
    verbs = lem.get("VERB", ())
    return bool(verbs) and word not in verbs and not any(k in lem for k in ("NOUN", "ADJ", "ADV"))


def is_gerund(word: str) -> bool:
    return word.endswith("ing") and "VERB" in lemmas(word) and word not in lemmas(word).get("VERB", ())


def is_past_form(w: str) -> bool:
    """``turned``, ``drove``: a past tense or participle; never a number word ("a hundred")."""
    if w in NUMBER_NAMES:
        return False
    if w in IRREGULAR_PAST or (len(w) > 4 and w.endswith("ed") and not w.endswith("eed")):
        return True
    return w.endswith("ed") and any(lemma != w for lemma in lemmas(w).get("VERB", ()))  # "used", "owed"
