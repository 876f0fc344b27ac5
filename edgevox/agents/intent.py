"""Is the user asking the robot to act *now*? Clause, negation, question and tense rules.

A robot may move only on positive evidence that it was asked to, now. The schema
resolver finds *which* tool an utterance names; this module decides whether the
utterance *asks for it*. It knows nothing about any tool set: its rules use only
closed-class English words (pronouns, auxiliaries, negators, wh-words, conjunctions),
so they carry over to any robot. Every rule is a row of ``tests/agents/test_intent.py``.

:func:`analyze` splits an utterance into clauses (punctuation, "but", "then",
"because", "instead", and "and" when a new subject or a negation follows it) and
classifies each clause, first rule that applies:

1. ``hypothetical``: a condition anywhere in the utterance ("if it gets dark turn on
   the light", "what would happen if you turned left", "suppose you went outside").
   "if you could / if you don't mind" are politeness, not conditions.
2. ``negated``: a negator in the clause ("don't", "do not", "never", "no need to",
   "forget about", "avoid"...). "don't forget to X" is a request to X; "never mind" and
   a bare "no, don't" after a command retract that command.
3. ``question``: a wh-word opening ("what is the gripper for", "how far is the
   kitchen"), an auxiliary opening ("are the kitchen lights still on", "did you turn
   left"), or a trailing "?". A modal + "you" opening is a polite *request*, not a
   question ("can you / could you / would you please turn left").
4. ``report`` / ``statement``: a clause whose subject comes first (a pronoun, "the
   kids", "my dad") is about someone, not addressed to the robot: a report when it is
   in the past tense (a past form after the subject, or "yesterday", "ago"...), else a
   statement. Request forms win: "I want you to...", "I need...", "we should...",
   "you should...", "please", "let's".
5. ``command``: anything else: a verb-first clause ("turn left"), or an elliptical
   one ("lights off in the bedroom").

:class:`Intent` is the verdict for the whole utterance: ``command`` when at least one
clause is a command and nothing retracts or conditions it (``clause`` is then the
command clauses joined, the text to resolve: "don't go to the kitchen, go to the
office" -> "go to the office"); otherwise the kind of the first non-command clause.

Questions may still call *query* tools ("what's your battery level" ->
``get_battery``): :func:`is_query_tool` tells them apart from action tools by the
verb that names them (``get_``, "Report the ...").

Rejected alternatives: a dependency parser (spaCy and its models are not installable
offline and cost ~50 MB and tens of ms per utterance on the target CPU) and word
lists fitted to the failing sentences (they do not carry over to unseen phrasings).
The price of a rule layer is coverage of rare constructions; each miss errs on the
side of answering in words, which is the safe side for a robot.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Literal

from edgevox.agents.numbers import TENS, UNIT_WORDS, UNITS

Kind = Literal["command", "negated", "question", "report", "hypothetical", "statement"]

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
"""Modal + "you" opens a polite request ("could you turn left")."""
SUBJECT_PRONOUNS = frozenset(
    """i im ive id ill we were weve wed you youre youve youd he hes she shes it its they theyre theyve
    there theres someone somebody everyone everybody nobody that thats this these those""".split()
)
FIRST_PERSON = frozenset("i im ive id ill we weve wed".split())
DETERMINERS = frozenset("the a an my your his her our their some every each".split())
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
TIME_UNITS = frozenset(w for w, (dim, _) in UNIT_WORDS.items() if dim == "time") | frozenset(
    "day days week weeks moment".split()
)
"""Units of a delay ("in five *minutes*"): the number module's time units, plus calendar words."""
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
SUBORDINATORS = frozenset("that which who whom where when until till while if because so as it there what".split())
BARE_NEGATION_FILLER = frozenset(
    "under any circumstances ever never please now yet no not dont do again at all whatever happens".split()
)
"""Words of a negation that stands alone ("do not, under any circumstances, ..."): it negates
the clause that follows."""
CLAUSE_CONJUNCTIONS = frozenset("but then instead because cause since although though whereas otherwise".split())
NEW_CLAUSE_AFTER_AND = NEGATORS | SUBJECT_PRONOUNS | frozenset("please then".split())

_WORD_RE = re.compile(r"\d+(?:\.\d+)?|[a-z]+")
_BREAK_RE = re.compile(r"(?<=[,;:!?])|(?<=\.)(?!\d)")
"""Clauses end after punctuation (kept, so a clause still ends with its "?")."""


def words(text: str) -> list[str]:
    """Lower-case word tokens, apostrophes removed ("Don't" -> "dont")."""
    return _WORD_RE.findall(text.lower().replace("'", "").replace("\u2019", ""))


@dataclass(frozen=True)
class Clause:
    text: str
    kind: Kind
    reason: str
    elliptical: bool = False
    """A command with no verb of its own ("the kitchen lights", "lights off")."""
    may_query: bool = True
    """A question a query tool may answer; False when it asks what something *is* or
    *does* ("what is the gripper for"): that is answered in words, by no tool."""


@dataclass(frozen=True)
class Intent:
    """What an utterance asks for (see the module docstring)."""

    kind: Kind
    clause: str
    """For ``command``: the command clauses joined (the text to resolve). Otherwise the
    clause that decided the kind."""
    reason: str
    clauses: tuple[Clause, ...] = field(default=(), repr=False)
    may_query: bool = True
    """For a question: whether a query tool may answer it (see :class:`Clause`)."""
    elliptical: bool = False
    """For a command: every command clause lacks a verb ("the red block"): with no tool word
    either, nothing asks for an action."""
    confirm: str = ""
    """For a command: why the robot must ask before acting ("" = it may act): ``"later"`` (a
    time in the future), ``"duration"`` ("in five minutes": asked unless a tool's time
    argument takes it), ``"hedged"`` ("maybe you could ...")."""

    @property
    def acts(self) -> bool:
        return self.kind == "command"


def split_clauses(text: str) -> list[str]:
    """Clauses of ``text`` as written (see the module docstring for the break rules)."""
    pieces = [p for p in _BREAK_RE.split(text) if p.strip()]
    out: list[str] = []
    for piece in pieces:
        toks = list(re.finditer(r"[A-Za-z0-9'\u2019.]+", piece))
        start = 0
        for i, m in enumerate(toks):
            w = m.group().lower().replace("'", "").replace("\u2019", "").strip(".")
            nxt = words(toks[i + 1].group())[0] if i + 1 < len(toks) and words(toks[i + 1].group()) else ""
            cut = (
                w in CLAUSE_CONJUNCTIONS
                or (w == "and" and nxt in NEW_CLAUSE_AFTER_AND)
                or (w == "or" and (nxt in AUXILIARIES or nxt in SUBJECT_PRONOUNS))  # "... or is it too far"
            )
            if cut and i > 0:
                out.append(piece[start : m.start()])
                start = m.start()
        out.append(piece[start:])
    return [c.strip().rstrip(",;:").strip() for c in out if words(c)]


def _has_seq(ws: list[str], seq: tuple[str, ...]) -> bool:
    n = len(seq)
    return any(tuple(ws[i : i + n]) == seq for i in range(len(ws) - n + 1))


def _strip_opening(ws: list[str]) -> list[str]:
    """Skip what opens a clause without being its subject or verb: fillers, "please", a
    vocative ("robot,"), a hedge ("maybe"), a time ("later", "at six", "in ten minutes",
    "after lunch"; :func:`deferral` still sees it)."""
    i = 0
    while i < len(ws):
        w = ws[i]
        if w in DISCOURSE or w in CLAUSE_CONJUNCTIONS or w in ("and", "or", "please", "robot") or w in DEFERRAL_WORDS:
            i += 1
        elif w in HEDGES:
            i += 1
        elif (n := _time_phrase_length(ws, i)) > 0:
            i += n
        else:
            break
    return ws[i:]


def _time_phrase_length(ws: list[str], i: int) -> int:
    """Words of a time phrase starting at ``i`` ("at six", "in ten minutes", "after lunch"), or 0."""
    for p in DEFERRAL_PHRASES:
        if tuple(ws[i : i + len(p)]) == p:
            return len(p)
    rest = ws[i + 1 : i + 4]
    if not rest:
        return 0
    if ws[i] == "at" and (rest[0].isdigit() or rest[0] in _NUMBER_WORDS):
        return 2 + int(len(rest) > 1 and rest[1] in ("oclock", "am", "pm"))
    if ws[i] == "in" and (rest[0] in ("a", "an") or rest[0].isdigit() or rest[0] in _NUMBER_WORDS):
        for k, w in enumerate(rest[1:3], start=2):
            if w in TIME_UNITS:
                return k + 1
    if ws[i] in ("after", "before") and rest[0] not in SUBJECT_PRONOUNS and "NOUN" in _lemmas(rest[0]):
        return 2  # "after lunch", "before bedtime"
    return 0


def is_conditional(ws: list[str]) -> bool:
    """A condition or supposition anywhere in the words (rule 1)."""
    for i, w in enumerate(ws):
        if w in CONDITIONS:
            after = ws[i + 1 : i + 3]
            if w == "if" and len(after) == 2 and after[0] == "you" and after[1] in POLITE_CONDITIONS:
                continue  # "if you could", "if you don't mind"
            return True
        if w == "case" and i > 0 and ws[i - 1] == "in":
            return True
        if w == "what" and i + 1 < len(ws) and ws[i + 1] == "if":
            return True
        if w in ("when", "whenever") and (
            i > 0 or (len(ws) > 1 and (ws[1] in SUBJECT_PRONOUNS or ws[1] in DETERMINERS))
        ):
            return True  # "turn on the light when I get home", "when I get home, ..."
        if w == "once" and i + 1 < len(ws) and (ws[i + 1] in SUBJECT_PRONOUNS or ws[i + 1] in DETERMINERS):
            return True  # "once I leave, drive ...", "drive there once the door opens" (not "once more")
        if w == "as" and ws[i + 1 : i + 3] == ["soon", "as"]:
            return True  # "as soon as I am gone, ..."
    # "what would you do", "where would you go": a wh-question about a supposed action.
    return bool(ws and ws[0] in WH_WORDS and any(w in ("would", "could") for w in ws[1:4]))


def _negated(ws: list[str]) -> bool:
    for seq in DOUBLE_NEGATIONS:
        if _has_seq(ws, seq):
            return False
    if any(w in NEGATORS for w in ws):
        return True
    if any(_has_seq(ws, seq) for seq in NEGATING_PHRASES):
        return True
    # "no" before a verb-ish word mid-clause ("there's no need", "no turning"), not an answer.
    return any(w == "no" and i > 0 for i, w in enumerate(ws))


def _is_past_form(w: str) -> bool:
    if w in IRREGULAR_PAST or (len(w) > 4 and w.endswith("ed") and not w.endswith("eed")):
        return True
    return w.endswith("ed") and any(lemma != w for lemma in _lemmas(w).get("VERB", ()))  # "used", "owed"


def _past_time(ws: list[str]) -> bool:
    """A time in the past: "yesterday", "an hour ago", "last night"."""
    if any(w in PAST_TIME for w in ws):
        return True
    return any(w == "last" and i + 1 < len(ws) and ws[i + 1] in PAST_TIME_AFTER_LAST for i, w in enumerate(ws))


def _past(ws: list[str], verb_at: int) -> bool:
    if _past_time(ws):
        return True
    # The verb right after the subject, allowing one adverb ("I just drove", "we already did").
    return any(_is_past_form(w) for w in ws[verb_at : verb_at + 2])


def _subject_length(ws: list[str]) -> int:
    """Words of a leading subject: a pronoun, or a determiner phrase up to its verb."""
    if ws[0] in SUBJECT_PRONOUNS:
        return 1
    if ws[0] in DETERMINERS:
        for i in range(1, min(len(ws), 5)):
            if ws[i] in FINITE_MARKERS or _is_past_form(ws[i]) or ws[i] in NEGATORS:
                return i
    return 0


@functools.lru_cache(maxsize=8192)
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """Part-of-speech readings of ``word`` from lemminflect's lexicon (offline, in its wheel)."""
    try:
        from lemminflect import getAllLemmas
    except ModuleNotFoundError:  # pragma: no cover - a core dependency; fall back to closed classes only
        return {}
    return dict(getAllLemmas(word))


def can_be_base_verb(word: str) -> bool:
    """``turn``, ``set``, ``people``: the word has a verb reading in its base (imperative) form."""
    return word in _lemmas(word).get("VERB", ())


def can_be_verb(word: str) -> bool:
    return "VERB" in _lemmas(word) or word in FINITE_MARKERS or _is_past_form(word)


def _inflected_verb_only(word: str) -> bool:
    """``turned``, ``picking``, ``says``: only ever an inflected verb - a finite verb or a participle."""
    lem = _lemmas(word)
    verbs = lem.get("VERB", ())
    return bool(verbs) and word not in verbs and not any(k in lem for k in ("NOUN", "ADJ", "ADV"))


def _is_gerund(word: str) -> bool:
    return word.endswith("ing") and "VERB" in _lemmas(word) and word not in _lemmas(word).get("VERB", ())


def _has_finite_verb(ws: list[str]) -> bool:
    """A verb that makes these words a sentence with a subject ("the kids *set* a timer",
    "lights in the office *are* off"), as opposed to a verbless command ("kitchen lights on")."""
    for i, w in enumerate(ws):
        if w in FINITE_MARKERS or _inflected_verb_only(w) or _is_past_form(w):
            return True
        nxt = ws[i + 1] if i + 1 < len(ws) else ""
        if i > 0 and can_be_verb(w) and (nxt in DETERMINERS or nxt in FREQUENCY_ADVERBS):
            return True
    return False


def _subject_clause(ws: list[str]) -> bool:
    """A verb-first clause that is itself the subject of a sentence ("go to the kitchen *is*
    what my dad says", "set a timer is a phrase"): a copula with no subordinator before it."""
    for w in ws[2:]:
        if w in SUBORDINATORS:
            return False
        if w in COPULAS:
            return True
    return False


def _noun_subject(ws: list[str]) -> bool:
    """ "people usually go ...": a noun, a frequency adverb, a verb; "video mode uses a lot":
    two nouns, then a verb with its object."""
    if len(ws) > 2 and "NOUN" in _lemmas(ws[0]) and ws[1] in FREQUENCY_ADVERBS:
        return True
    return (
        len(ws) > 3
        and "NOUN" in _lemmas(ws[0])
        and "NOUN" in _lemmas(ws[1])
        and not can_be_base_verb(ws[1])
        and can_be_verb(ws[2])
        and (ws[3] in DETERMINERS or ws[3] in FREQUENCY_ADVERBS or ws[3].isdigit())
    )


def _starts(ws: list[str], phrases: tuple[tuple[str, ...], ...]) -> bool:
    return any(tuple(ws[: len(p)]) == p for p in phrases)


def deferral(ws: list[str]) -> str:
    """A time in the future: ``"later"`` ("later", "tomorrow", "at noon", "after dinner"),
    ``"duration"`` ("in five minutes": a delay - or the duration a timer tool takes as its
    argument, which the resolver tells apart), or ``""``."""
    if any(w in DEFERRAL_WORDS for w in ws) or any(_has_seq(ws, p) for p in DEFERRAL_PHRASES):
        return "later"
    if any(w in ("after", "before") and _time_phrase_length(ws, i) for i, w in enumerate(ws)):
        return "later"
    found = ""
    for i, w in enumerate(ws):
        if _time_phrase_length(ws, i):
            if w != "in":
                return "later"  # "at five", "after dinner"
            found = "duration"  # "in an hour", "in five minutes"
    return found


_NUMBER_WORDS = frozenset(UNITS) | frozenset(TENS)
"""Spoken integers, from the number module's tables ("at *five*", "in *twenty* minutes")."""


def _bare_negation(text: str) -> bool:
    """A negation with no action of its own ("don't,", "never,", "do not, under any
    circumstances,"): it applies to the clause that follows."""
    ws = words(text)
    return bool(ws) and all(w in NEGATORS or w in BARE_NEGATION_FILLER or w in DISCOURSE for w in ws)


def classify_clause(text: str) -> Clause:
    """The kind of one clause (rules 2-5; conditions are judged on the whole utterance)."""
    raw = words(text)
    ws = _strip_opening(raw)
    for seq in DOUBLE_NEGATIONS:
        if tuple(ws[: len(seq)]) == seq:  # "don't forget to turn off the lights" -> "turn off the lights"
            ws = ws[len(seq) + (ws[len(seq) : len(seq) + 1] == ["to"]) :]
            if not ws:
                return Clause(text, "statement", "nothing asked")
            break
    if not ws:
        return Clause(text, "statement", "only interjections")
    if any(_has_seq(ws, seq) for seq in RETRACTIONS):
        return Clause(text, "negated", "retracts what was said")
    if _negated(ws):
        return Clause(text, "negated", "negated")
    if _starts(ws, HYPOTHETICAL_OPENINGS):
        return Clause(text, "hypothetical", "a story, a game or a supposition")
    polite = (ws[0] in REQUEST_MODALS and len(ws) > 1 and ws[1] in ("you", "u")) or (
        ws[:2] == ["if", "you"] and len(ws) > 2 and ws[2] in POLITE_CONDITIONS
    )
    if ws[0] in WH_WORDS:
        if ws[-1] in ABOUT_ENDINGS or _has_seq(ws[-2:], ("used", "for")):
            return Clause(text, "question", "asks what something is or does", may_query=False)
        return Clause(text, "question", f"opens with the question word {ws[0]!r}")
    if ws[0] == "be" or (
        ws[0] in MAIN_VERB_AUXILIARIES and (len(ws) == 1 or ws[1] in ("a", "an", "some", "your", "me", "it", "this"))
    ):
        pass  # "do a full turn", "have a look", "be quiet": a main verb, not an inversion
    elif ws[0] in AUXILIARIES and not polite:
        return Clause(text, "question", f"opens with the auxiliary {ws[0]!r}")
    if text.rstrip().endswith("?") and not polite:
        return Clause(text, "question", "ends with a question mark")
    if polite and len(ws) > 2 and ws[2] in ABILITY_MARKERS:
        return Clause(text, "question", "asks whether the robot is able to ('can you even ...')")
    if polite:
        return Clause(text, "command", "a polite request")
    if "please" in raw or ws[0] in ("lets", "let"):
        return Clause(text, "command", "a request word")
    n = _subject_length(ws)
    if n:
        subject, rest = ws[:n], ws[n:]
        if subject[0] in FIRST_PERSON and rest and rest[0] in WANT_VERBS:
            return Clause(text, "command", "the speaker asks for something")
        wish = subject[0] in ("id", "wed") and rest and rest[0] in WISH_VERBS
        if subject[0] in FIRST_PERSON and (wish or (rest[:1] == ["would"] and rest[1:2] and rest[1] in WISH_VERBS)):
            return Clause(text, "command", "the speaker asks for something")
        if subject[0] in ("we", "you", "u") and rest and (rest[0] in OBLIGATION or _has_seq(rest[:2], ("need", "to"))):
            return Clause(text, "command", "a request addressed to the robot")
        if subject[0] in ("we", "you", "u") and _has_seq(rest[:2], ("have", "to")):
            return Clause(text, "command", "a request addressed to the robot")
        if _past(ws, n):
            return Clause(text, "report", "a past-tense report")
        return Clause(text, "statement", "a statement with its own subject")
    if _is_past_form(ws[0]) and ws[0] not in ("left",) and _past(ws, 0):
        return Clause(text, "report", "a past-tense report without a subject")
    if _past_time(ws):
        return Clause(text, "report", "a past time")
    if ws[0] == "to":
        return Clause(text, "statement", "an infinitive clause (a purpose or a topic), not an order")
    if _is_gerund(ws[0]):
        return Clause(text, "statement", "a gerund subject: about an action, not an order")
    if can_be_base_verb(ws[0]) and not _noun_subject(ws):
        if _subject_clause(ws):
            return Clause(text, "statement", "a verb phrase used as a subject ('go home is what ...')")
        return Clause(text, "command", "a verb-first command")
    # No verb first: a sentence about its first words (a subject and its verb), or no verb at all.
    if _has_finite_verb(ws[1:]) or _noun_subject(ws):
        if _past(ws, 1) or any(_is_past_form(w) for w in ws):
            return Clause(text, "report", "a report about someone or something")
        return Clause(text, "statement", "a statement about someone or something")
    return Clause(text, "command", "an elliptical command (no verb)", True)


_PRIORITY: tuple[Kind, ...] = ("hypothetical", "negated", "question", "report", "statement")


def analyze(text: str) -> Intent:
    """The :class:`Intent` of one utterance."""
    all_words = words(text)
    if not all_words:
        return Intent("statement", text, "nothing said")
    if is_conditional(all_words):
        return Intent("hypothetical", text, "a condition or supposition")
    clauses = _carry(tuple(classify_clause(c) for c in split_clauses(text)))
    for c in clauses:
        if c.kind == "hypothetical":  # "in theory, you could ...": the whole utterance is supposed
            return Intent("hypothetical", c.text, c.reason, clauses)
    if any(c.kind == "question" and words(c.text)[:1] == ["or"] for c in clauses):
        # "can you go to the bathroom or is the step too high": an alternative question.
        first = next(c for c in clauses if c.kind == "question")
        return Intent("question", first.text, "an alternative question ('..., or is it ...?')", clauses)
    commands = [c for c in clauses if c.kind == "command"]
    if commands:
        last_command = max(i for i, c in enumerate(clauses) if c.kind == "command")
        for c in clauses[last_command + 1 :]:
            if c.kind == "negated" and _retracts(c.text):
                return Intent("negated", c.text, "a later clause takes the request back", clauses)
        elliptical = all(c.elliptical for c in commands)
        if not elliptical or len(commands) == len(clauses):
            confirm = deferral(all_words) or ("hedged" if any(w in HEDGES for w in all_words) else "")
            return Intent(
                "command",
                " ".join(c.text for c in commands),
                commands[0].reason,
                clauses,
                elliptical=elliptical,
                confirm=confirm,
            )
    first = min(clauses, key=lambda c: _PRIORITY.index(c.kind) if c.kind in _PRIORITY else len(_PRIORITY))
    return Intent(first.kind, first.text, first.reason, clauses, may_query=first.may_query)


def _carry(clauses: tuple[Clause, ...]) -> tuple[Clause, ...]:
    """What one clause does to the next: a bare negation ("don't, please, go ...") negates the
    clauses after it (unless one says "instead"); a clause ending with a reporting verb ("the
    manual says:") makes what follows a quotation."""
    out: list[Clause] = []
    negate = quote = False
    for c in clauses:
        if c.kind == "command" and quote:
            c = Clause(c.text, "report", "quoted after a reporting verb", c.elliptical, c.may_query)
        elif c.kind == "command" and negate and "instead" not in words(c.text):
            c = Clause(c.text, "negated", "negated by the clause before it", c.elliptical, c.may_query)
        ws = words(c.text)
        if c.kind == "negated" and _bare_negation(c.text):
            negate = True
        if ws and ws[-1] in REPORTING_VERBS:
            quote = True
        out.append(c)
    return tuple(out)


_RETRACT_CONTENT = frozenset("do it that this wait actually mind please".split())


def _retracts(clause: str) -> bool:
    """A negation with nothing of its own ("no, don't", "never mind") takes back what came before."""
    ws = words(clause)
    if any(_has_seq(ws, seq) for seq in RETRACTIONS):
        return True
    content = [w for w in ws if w not in NEGATORS and w not in DISCOURSE and w not in _RETRACT_CONTENT and w != "no"]
    return not content


YES_WORDS = frozenset(
    "yes yeah yep yup ya sure ok okay correct right affirmative exactly absolutely definitely indeed".split()
)
NO_WORDS = frozenset("no nope nah negative cancel".split())
_ANSWER_FILLER = frozenset("please thanks thank you do it that go ahead for of course robot just".split())
YES_PHRASES = (("do", "it"), ("go", "ahead"), ("of", "course"), ("go", "for", "it"), ("please", "do"))


def answer_polarity(text: str) -> bool | None:
    """``True`` for a yes ("yes", "sure", "do it"), ``False`` for a no ("no", "cancel",
    "never mind", "don't"), ``None`` when the answer says more than yes or no."""
    ws = words(text)
    if not ws:
        return None
    if any(_has_seq(ws, seq) for seq in RETRACTIONS) or ws in (["dont"], ["do", "not"], ["no", "thanks"]):
        return False
    rest = [w for w in ws if w not in DISCOURSE - {"yes", "yeah", "okay", "ok", "alright"}]
    if not rest:
        return True if any(w in YES_WORDS or w == "alright" for w in ws) else None
    if all(w in NO_WORDS or w in _ANSWER_FILLER or w in NEGATORS for w in rest) and (
        rest[0] in NO_WORDS or rest[0] in NEGATORS
    ):
        return False
    if all(w in YES_WORDS or w in _ANSWER_FILLER or w == "alright" for w in rest):
        if any(w in YES_WORDS or w == "alright" for w in rest) or any(_has_seq(rest, s) for s in YES_PHRASES):
            return True
    return None


QUERY_VERBS = frozenset(
    "get read report check query list show tell measure count describe say status is has what how lookup".split()
)
"""Verbs that name a tool which only *reads* the world ("get_battery", "Report the ...")."""


def is_query_tool(name: str, description: str = "") -> bool:
    """True when the tool's name or its description starts with a reading verb: such a
    tool may answer a question; any other tool is an action and never does."""
    first_name = re.split(r"[_\W]+", name.lower().strip("_"))[0] if name else ""
    desc_words = words(description)
    return first_name in QUERY_VERBS or bool(desc_words and desc_words[0] in QUERY_VERBS)
