"""One clause's kind (rules 2-5 of :mod:`edgevox.language.intent`), where an utterance splits
into clauses, and the whole-utterance word rules the verdict also reads: a condition
(rule 1) and a time in the future (:func:`deferral`).

Over 500 lines because a clause's kind is one ordered cascade (negation, supposition,
question, request, report, statement) whose rules read the same words and must be read in
order; each rule is a row of ``tests/agents/test_intent.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from edgevox.language.frames import LIGHT_READING_VERBS, READING_VERBS
from edgevox.language.lexicon import informs, known
from edgevox.language.nlp import parse, pipeline
from edgevox.language.numbers import find_numbers
from edgevox.language.requests import addressee
from edgevox.language.units import unit
from edgevox.language.words import (
    ABILITY_MARKERS,
    ABOUT_ENDINGS,
    AUXILIARIES,
    BARE_NEGATION_FILLER,
    CLAUSE_CONJUNCTIONS,
    CONDITIONS,
    COPULAS,
    DEFERRAL_PHRASES,
    DEFERRAL_WORDS,
    DETERMINERS,
    DISCOURSE,
    DOUBLE_NEGATIONS,
    FINITE_MARKERS,
    FIRST_PERSON,
    FREQUENCY_ADVERBS,
    HEDGES,
    HYPOTHETICAL_OPENINGS,
    MAIN_VERB_AUXILIARIES,
    NEGATING_PHRASES,
    NEGATORS,
    NEW_CLAUSE_AFTER_AND,
    NUMBER_WORDS,
    OBJECT_PRONOUNS,
    OBLIGATION,
    PAST_TIME,
    PAST_TIME_AFTER_LAST,
    POLITE_CONDITIONS,
    REQUEST_MODALS,
    RETRACTIONS,
    SUBJECT_PRONOUNS,
    SUBORDINATORS,
    WANT_VERBS,
    WH_WORDS,
    WISH_VERBS,
    can_be_base_verb,
    can_be_verb,
    has_seq,
    inflected_verb_only,
    is_gerund,
    is_past_form,
    is_time_unit,
    lemmas,
    words,
)

Kind = Literal["command", "negated", "question", "report", "hypothetical", "statement"]
_BREAK_RE = re.compile(r"(?<=[,;:!?])|(?<=\.)(?!\d)")
"""Clauses end after punctuation (kept, so a clause still ends with its "?")."""


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
    requested: bool = False
    """A question put as a request ("check your battery", "tell me the angles", "see if the
    door is open"): in a compound request it is a step of the plan ("..., then count SKU 7")."""


def split_clauses(text: str) -> list[str]:
    """Clauses of ``text`` as written (see the module docstring for the break rules)."""
    pieces = [p for p in _BREAK_RE.split(text) if p.strip()]
    out: list[str] = []
    for piece in pieces:
        toks = list(re.finditer(r"[A-Za-z0-9'\u2019.]+", piece))
        verb_ands = _coordinated_verbs(piece)
        start = 0
        for i, m in enumerate(toks):
            w = m.group().lower().replace("'", "").replace("\u2019", "").strip(".")
            nxt = words(toks[i + 1].group())[0] if i + 1 < len(toks) and words(toks[i + 1].group()) else ""
            cut = (
                w in CLAUSE_CONJUNCTIONS
                or (w == "and" and (nxt in NEW_CLAUSE_AFTER_AND or m.start() in verb_ands))
                or (w == "or" and (nxt in AUXILIARIES or nxt in SUBJECT_PRONOUNS))  # "... or is it too far"
            )
            if cut and i > 0:
                out.append(piece[start : m.start()])
                start = m.start()
        out.append(piece[start:])
    return [c.strip().rstrip(",;:").strip() for c in out if words(c)]


def _coordinated_verbs(piece: str) -> set[int]:
    """Offsets of each "and" that joins two verb phrases ("pick up the pallet *and* take it to
    dock one", "turn left *and* move forward"): two requests, not one verb with two objects."""
    if " and " not in f" {piece.lower()} ":
        return set()
    doc = parse(piece)
    return {t.idx for t in doc[:-1] if t.lower_ == "and" and _verb_conjunct(doc, t.i + 1)}


def _verb_conjunct(doc: Any, i: int) -> bool:
    """The word at ``i`` opens a second verb phrase: tagged a verb, or a conjunct of a verb that
    English also has as a verb and that is followed, as a verb is, by a particle, an adverb, a
    determiner or a number ("tilt up fifteen and *pan* left twenty", where the tagger read
    "pan" as a noun)."""
    t = doc[i]
    if t.pos_ == "VERB" and t.dep_ in ("conj", "ROOT"):
        return True
    after = doc[i + 1] if i + 1 < len(doc) else None
    return (
        t.dep_ == "conj"
        and t.head.pos_ == "VERB"
        and can_be_base_verb(t.lower_)
        and after is not None
        and after.pos_ in ("ADP", "ADV", "DET", "NUM", "VERB")
    )


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
    if ws[i] == "at" and (rest[0].isdigit() or rest[0] in NUMBER_WORDS):
        spans = find_numbers(ws[i + 1 :])  # "at *three hundred* litres": the whole number
        end = i + 1 + (spans[0].end if spans and spans[0].start == 0 else 1)
        after = ws[end : end + 1]
        if after and (u := unit(after[0])) is not None and u.dimension != "time":
            return 0  # "hover at ten metres", "at 50 percent": a quantity, not a clock time
        return 2 + int(len(rest) > 1 and rest[1] in ("oclock", "am", "pm"))
    if ws[i] == "in" and (rest[0] in ("a", "an") or rest[0].isdigit() or rest[0] in NUMBER_WORDS):
        for k, w in enumerate(rest[1:3], start=2):
            if is_time_unit(w):
                return k + 1
    if ws[i] in ("after", "before") and rest[0] not in SUBJECT_PRONOUNS and "NOUN" in lemmas(rest[0]):
        return 2  # "after lunch", "before bedtime"
    return 0


def _indirect_questions(text: str) -> bool:
    """Every "if" of the text opens the object clause of a verb ("see *if* the door is open",
    "check if it is locked": an indirect question, like "whether"), not a condition."""
    marks = [t for t in parse(text) if t.lower_ == "if"]
    return bool(marks) and all(t.dep_ == "mark" and t.head.dep_ == "ccomp" for t in marks)


def _right_after_opening_verb(ws: list[str], i: int) -> bool:
    """The word at ``i`` follows the verb that opens the request, with nothing between but a
    particle ("check if", "find out if", "could you see if"): it opens that verb's object."""
    k = 0
    while k < i and (
        ws[k] in DISCOURSE or ws[k] in ("please", "robot") or ws[k] in REQUEST_MODALS or ws[k] in ("you", "u")
    ):
        k += 1
    return can_be_base_verb(ws[k]) and (i == k + 1 or (i == k + 2 and ws[k + 1] in ("out",)))


def waits_for_an_event(ws: list[str]) -> bool:
    """A time clause that waits for an event ("once the patient's been moved", "when I get
    home", "as soon as I am gone"): a request for later, unlike a supposition ("if ...")."""
    return any(_waits_at(ws, i) for i in range(len(ws)))


def _waits_at(ws: list[str], i: int) -> bool:
    """A time clause waiting for an event opens at ``ws[i]``: "when", "whenever" or "once"
    before its subject ("once *the* car is out"; not "once more"), or "as soon as"."""
    after = ws[i + 1] if i + 1 < len(ws) else ""
    if ws[i] in ("when", "whenever", "once") and (after in SUBJECT_PRONOUNS or after in DETERMINERS):
        return True
    return ws[i] == "as" and ws[i + 1 : i + 3] == ["soon", "as"]


def is_conditional(ws: list[str], text: str = "") -> bool:
    """A condition or supposition anywhere in the words (rule 1); ``text``, when given, is
    parsed to tell an indirect question's "if" from a condition's."""
    indirect = None
    for i, w in enumerate(ws):
        if w in CONDITIONS:
            after = ws[i + 1 : i + 3]
            if w == "if" and len(after) == 2 and after[0] == "you" and after[1] in POLITE_CONDITIONS:
                continue  # "if you could", "if you don't mind"
            if w == "if" and _right_after_opening_verb(ws, i):
                continue  # "check if the oven is off", "could you see if ...": what to check
            if w == "if" and text:
                indirect = _indirect_questions(text) if indirect is None else indirect
                if indirect:
                    continue
            return True
        if w == "case" and i > 0 and ws[i - 1] == "in":
            return True
        if w == "what" and i + 1 < len(ws) and ws[i + 1] == "if":
            return True
        if (w in ("when", "whenever") and i > 0) or _waits_at(ws, i):
            # "turn on the light when I get home", "once I leave, drive ...", "as soon as I am
            # gone, ..." (not "once more")
            return True
    # "what would you do", "where would you go": a wh-question about a supposed action.
    return bool(ws and ws[0] in WH_WORDS and any(w in ("would", "could") for w in ws[1:4]))


ONLY_INTERJECTIONS = "only interjections"
"""The reason of a clause with no content ("oh,", "please.", "whoa,"): it counts for nothing."""

NAME_OPENERS = frozenset("on off".split()) | DETERMINERS
"""Words after which a negator cannot negate a verb: a determiner or a verb's particle must be
followed by a noun phrase, so "do not disturb" after one is a name ("turn on do not disturb",
"the do not disturb mode"). "to" is not one: "remember to not go" is negated."""


def _interjection(ws: list[str]) -> bool:
    """One word that is neither an English content word (WordNet knows it as no noun, verb,
    adjective or adverb) nor a function word (spaCy's English stop words, a negator) nor a
    number: an interjection ("whoa", "oops") or a name said to get attention."""
    if len(ws) != 1:
        return False
    w = ws[0]
    if w.isdigit() or w in NUMBER_WORDS or w in NEGATORS or pipeline().vocab[w].is_stop:
        return False
    return not any(known(w, pos) for pos in ("n", "v", "a", "r"))


INDEFINITES = frozenset("a an another some any".split())


def is_vocative(text: str) -> bool:
    """A clause that only addresses someone, beside others ("follow me, Rex", "Rex, sit",
    "alright mate, park yourself"): the one spoken to, no request (alone, "Kitchen." may
    answer a question)."""
    return bool(addressee([t for t in parse(text) if not t.is_punct]))


def _question_tag(ws: list[str]) -> bool:
    """ "..., would you", "..., can you?": a modal and "you" alone after a request only softens it."""
    return len(ws) == 2 and ws[0] in REQUEST_MODALS | {"wont", "cant"} and ws[1] in ("you", "u")


def _asks_to_be_told(ws: list[str]) -> bool:
    """A verb of telling addressed to the speaker ("tell me the battery", "show us where you
    are", "let me know ..."): a question put as a request. "remind me *to* ..." or "remind me
    *in five minutes*" asks for an act,
    and "tell me *a* joke" for something made up, not for the state of anything."""
    if len(ws) < 3 or ws[1] not in ("me", "us") or ws[2] == "to" or ws[2] in INDEFINITES:
        return False
    if deferral(ws):
        return False  # "remind me in five minutes", "alert me at six": an act for later (a timer)
    return informs(ws[0]) or (ws[0] == "let" and ws[2] == "know")


def _negators(ws: list[str]) -> list[int]:
    """Where a negator negates: not inside a name (see :data:`NAME_OPENERS`)."""
    out = []
    for i, w in enumerate(ws):
        if w not in NEGATORS:
            continue
        start = i - 1 if w == "not" and i > 0 and ws[i - 1] == "do" else i
        if start > 0 and ws[start - 1] in NAME_OPENERS:
            continue
        out.append(i)
    return out


def _negated(ws: list[str]) -> bool:
    for seq in DOUBLE_NEGATIONS:
        if has_seq(ws, seq):
            return False
    if _negators(ws):
        return True
    if any(has_seq(ws, seq) for seq in NEGATING_PHRASES):
        return True
    # "no" before a verb-ish word mid-clause ("there's no need", "no turning"), not an answer.
    return any(w == "no" and i > 0 for i, w in enumerate(ws))


def _past_time(ws: list[str]) -> bool:
    """A time in the past: "yesterday", "an hour ago", "last night"."""
    if any(w in PAST_TIME for w in ws):
        return True
    return any(w == "last" and i + 1 < len(ws) and ws[i + 1] in PAST_TIME_AFTER_LAST for i, w in enumerate(ws))


def _past(ws: list[str], verb_at: int) -> bool:
    if _past_time(ws):
        return True
    # The verb right after the subject, allowing one adverb ("I just drove", "we already did").
    return any(is_past_form(w) for w in ws[verb_at : verb_at + 2])


def _subject_length(ws: list[str]) -> int:
    """Words of a leading subject: a pronoun, or a determiner phrase up to its verb."""
    if ws[0] in SUBJECT_PRONOUNS:
        return 1
    if ws[0] in DETERMINERS:
        # a determiner's noun comes first: right after it "left" is an adjective ("the left one")
        for i in range(2, min(len(ws), 5)):
            if ws[i] in FINITE_MARKERS or is_past_form(ws[i]) or ws[i] in NEGATORS:
                return i
    return 0


def _has_finite_verb(ws: list[str], start: int = 0) -> bool:
    """A verb that makes these words a sentence with a subject ("the kids *set* a timer",
    "lights in the office *are* off"), as opposed to a verbless command ("kitchen lights on")."""
    for i, w in enumerate(ws):
        if i < start:
            continue
        if _after_determiner(ws, i):
            continue  # "to *the left*", "a full *turn*": a determiner opens a noun phrase
        if w in FINITE_MARKERS or inflected_verb_only(w) or is_past_form(w):
            return True
        nxt = ws[i + 1] if i + 1 < len(ws) else ""
        if i > start and can_be_verb(w) and (nxt in DETERMINERS or nxt in FREQUENCY_ADVERBS):
            return True
    return False


PROCEDURE_AUXILIARIES = frozenset("do does should would can could".split())
GENERIC_SUBJECTS = frozenset("you i we one people u".split())


def _after_determiner(ws: list[str], i: int) -> bool:
    """The word follows a determiner, so it is a noun ("the left", "a turn"), not a verb."""
    return i > 0 and ws[i - 1] in DETERMINERS


def _subject_clause(ws: list[str]) -> bool:
    """A verb-first clause that is itself the subject of a sentence ("go to the kitchen *is*
    what my dad says", "set a timer is a phrase"): a copula with no subordinator before it."""
    for w in ws[1:]:
        if w in SUBORDINATORS:
            return False
        if w in COPULAS:
            return True
    return False


def _noun_subject(ws: list[str]) -> bool:
    """ "people usually go ...": a noun, a frequency adverb, a verb; "video mode uses a lot":
    two nouns, then a verb with its object."""
    if len(ws) > 2 and "NOUN" in lemmas(ws[0]) and ws[1] in FREQUENCY_ADVERBS:
        return True
    return (
        len(ws) > 3
        and "NOUN" in lemmas(ws[0])
        and "NOUN" in lemmas(ws[1])
        and ws[1] not in DETERMINERS  # "turn *your* head 30 degrees": a possessive opens an object
        and ws[1] not in OBJECT_PRONOUNS  # "turn *it* up a bit": a pronoun is an object, never a noun's part
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
    if any(w in DEFERRAL_WORDS for w in ws) or any(has_seq(ws, p) for p in DEFERRAL_PHRASES):
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


def bare_negation(text: str) -> bool:
    """A negation with no action of its own ("don't,", "never,", "do not, under any
    circumstances,"): it applies to the clause that follows."""
    ws = words(text)
    return bool(ws) and all(w in NEGATORS or w in BARE_NEGATION_FILLER or w in DISCOURSE for w in ws)


QUOTED = re.compile(r"[\"\u201c\u201d]([^\"\u201c\u201d]+)[\"\u201c\u201d]")
"""A text in quotation marks: what the user gives to be said or shown."""


def classify_clause(text: str) -> Clause:
    """The kind of one clause (rules 2-5; conditions are judged on the whole utterance). A
    quoted text is one object of the clause ("put *"Lunch is served"* on your screen" is put
    *it* on the screen): its own verbs are not the clause's."""
    raw = words(QUOTED.sub(" it ", text))
    ws = _strip_opening(raw)
    for seq in DOUBLE_NEGATIONS:
        if tuple(ws[: len(seq)]) == seq:  # "don't forget to turn off the lights" -> "turn off the lights"
            ws = ws[len(seq) + (ws[len(seq) : len(seq) + 1] == ["to"]) :]
            if not ws:
                return Clause(text, "statement", "nothing asked")
            break
    if not ws or _interjection(ws) or _question_tag(ws):
        return Clause(text, "statement", ONLY_INTERJECTIONS)
    if any(has_seq(ws, seq) for seq in RETRACTIONS):
        return Clause(text, "negated", "retracts what was said")
    if _negated(ws):
        return Clause(text, "negated", "negated")
    if _starts(ws, HYPOTHETICAL_OPENINGS):
        return Clause(text, "hypothetical", "a story, a game or a supposition")
    polite = (ws[0] in REQUEST_MODALS and len(ws) > 1 and ws[1] in ("you", "u")) or (
        ws[:2] == ["if", "you"] and len(ws) > 2 and ws[2] in POLITE_CONDITIONS
    )
    if ws[0] in WH_WORDS:
        if ws[-1] in ABOUT_ENDINGS or has_seq(ws[-2:], ("used", "for")):
            return Clause(text, "question", "asks what something is or does", may_query=False)
        if "should" in ws[1:4] or "ought" in ws[1:4]:
            # "how tall should grass be", "what should I do": advice, not the robot's state
            return Clause(text, "question", "asks for advice", may_query=False)
        if ws[0] == "how" and ws[1:2] and ws[1] in PROCEDURE_AUXILIARIES and ws[2:3] and ws[2] in GENERIC_SUBJECTS:
            # "how do you empty the bin": how a thing is done, not the robot's state
            return Clause(text, "question", "asks how something is done", may_query=False)
        if any(has_seq(ws, (m, "you")) for m in ("can", "could")) or has_seq(ws, ("able", "to")):
            # "how many degrees can you turn": what the robot is able to do, not its state
            return Clause(text, "question", "asks what the robot is able to do", may_query=False)
        return Clause(text, "question", f"opens with the question word {ws[0]!r}")
    if ws[0] == "be" or (
        ws[0] in MAIN_VERB_AUXILIARIES
        and (
            len(ws) == 1
            or raw[0] in ("and", "then")  # "..., and do the back lawn": a next step, no inversion
            or ws[1] in ("a", "an", "some", "your", "me", "it", "this")
            or ws[1] in ("something", "anything", "everything", "nothing")  # an object, no subject
            or ws[1].isdigit()
            or ws[1] in NUMBER_WORDS  # "do three laps": a count opens an object, not a subject
        )
    ):
        pass  # "do a full turn", "have a look", "be quiet": a main verb, not an inversion
    elif ws[0] in AUXILIARIES and not polite:
        return Clause(text, "question", f"opens with the auxiliary {ws[0]!r}")
    suggested = (ws[0] in ("you", "u") and len(ws) > 2 and ws[1] in REQUEST_MODALS and can_be_base_verb(ws[2])) or (
        can_be_base_verb(ws[0]) and ws[0] not in AUXILIARIES and not _noun_subject(ws) and not _subject_clause(ws)
    )
    if text.rstrip().endswith("?") and not polite and not (suggested and any(w in HEDGES for w in raw)):
        # "Maybe you could speed up a bit?", "Maybe lower the mast a bit?": a hedged request
        # said with a rising voice has no inverted auxiliary; it is a request, confirmed first
        return Clause(text, "question", "ends with a question mark")
    if suggested and ws[0] in ("you", "u"):
        return Clause(text, "command", "a request addressed to the robot")
    if _asks_to_be_told(ws[2:] if polite else ws):
        return Clause(text, "question", "asks to be told ('tell me ...', 'let me know ...')", requested=True)
    asked = ws[2:] if polite else ws
    if len(asked) > 1 and asked[0] in READING_VERBS and asked[0] not in LIGHT_READING_VERBS:
        # "check your battery", "read the gauge": a verb that names reading tools asks to read its object
        return Clause(text, "question", f"asks to {asked[0]} something ('check your battery')", requested=True)
    if len(asked) > 2 and can_be_base_verb(asked[0]) and asked[1] in ("whether", "if"):
        # "check whether the gate is locked", "see if the door is open": the object is a
        # yes/no question; a tool that reads state answers it
        return Clause(text, "question", "an indirect yes/no question ('check whether ...')", requested=True)
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
        if subject[0] in ("we", "you", "u") and rest and (rest[0] in OBLIGATION or has_seq(rest[:2], ("need", "to"))):
            return Clause(text, "command", "a request addressed to the robot")
        if subject[0] in ("we", "you", "u") and has_seq(rest[:2], ("have", "to")):
            return Clause(text, "command", "a request addressed to the robot")
        if _past(ws, n):
            return Clause(text, "report", "a past-tense report")
        return Clause(text, "statement", "a statement with its own subject")
    if is_past_form(ws[0]) and ws[0] not in ("left",) and _past(ws, 0):
        return Clause(text, "report", "a past-tense report without a subject")
    if _past_time(ws):
        return Clause(text, "report", "a past time")
    if ws[0] == "to":
        return Clause(text, "statement", "an infinitive clause (a purpose or a topic), not an order")
    if is_gerund(ws[0]):
        return Clause(text, "statement", "a gerund subject: about an action, not an order")
    if can_be_base_verb(ws[0]) and not _noun_subject(ws):
        if _subject_clause(ws):
            return Clause(text, "statement", "a verb phrase used as a subject ('go home is what ...')")
        return Clause(text, "command", "a verb-first command")
    # No verb first: a sentence about its first words (a subject and its verb), or no verb at all.
    if _has_finite_verb(ws, start=1) or _noun_subject(ws):
        if _past(ws, 1) or any(is_past_form(w) and not _after_determiner(ws, i) for i, w in enumerate(ws)):
            return Clause(text, "report", "a report about someone or something")
        return Clause(text, "statement", "a statement about someone or something")
    return Clause(text, "command", "an elliptical command (no verb)", True)
