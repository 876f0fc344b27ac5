"""Does a (partial) transcript sound finished? Text rules for adaptive endpointing.

The segmenter ends an utterance after a short silence when the speculative
transcript of the pause reads as a complete request, and waits longer when it
ends mid-phrase ("turn left and", "set a timer for", "call five five"). This
module is the text side: :func:`classify_ending` looks at the last word and the
final punctuation only, by linguistic category, never by whole sentences:

========================  ====================================================
category                  why the speaker is probably not done
========================  ====================================================
``trailing_punctuation``  a comma, ellipsis, dash, colon or semicolon at the end
``conjunction``           "and", "but", "or", "because", "then" ... joins more
``preposition``           "to", "for", "in", "of" ... needs its object
``determiner``            "the", "a", "my", "some" ... needs its noun
``auxiliary``             "is", "can", "will", "should" ... needs its verb
``number``                "five", "20", "twenty": digit strings often go on
``filler``                "um", "uh", "er", "hmm": the speaker is thinking
========================  ====================================================

Whisper ends most outputs with a period even after a function word ("Turn left
and."), so final ``.``, ``!`` and ``?`` are ignored when the last word is one of
the above; a final ``?`` is treated as complete otherwise.

The cost of a wrong answer is asymmetric: "incomplete" only makes the endpoint
wait longer (``hold_silence_ms``), "complete" on an unfinished phrase splits it.
So the categories are generous; "number" in particular holds every count
("go forward two") for the long silence, the price of not splitting spoken digit
strings.

Rejected alternative: a language model's end-of-turn probability (as some
pipelines do). Better on free conversation, but a second model on the critical
path of every pause, for commands that are short and regular.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Closed-class words, by category. Words that often end a complete request are left out on
# purpose: particles and pronouns ("up", "on", "off", "in", "out", "back", "that", "it", "all",
# "no", "much", "please", "like" in "what's the weather like"), and do/have, often main verbs
# ("what should I do"). A number word that is a pronoun ("the red one") still holds.
CONJUNCTIONS = frozenset(
    "and but or nor so yet because since although though unless until while whereas if when whenever "
    "wherever whether then plus than".split()
)
PREPOSITIONS = frozenset(
    "to for of at by from with into onto toward towards about above across after against along among "
    "before behind below beneath beside besides between beyond during except inside near of outside "
    "past through throughout till under underneath upon via within without per".split()
)
DETERMINERS = frozenset("the a an my your his her its our their these those some any every each another".split())
AUXILIARIES = frozenset(
    "is are was were am be been being can could will would shall should may might must let's i'm you're "
    "we're they're it's i'll you'll we'll i'd you'd".split()
)
NUMBER_WORDS = frozenset(
    "zero oh one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred "
    "thousand million".split()
)
FILLERS = frozenset("um umm uh uhh er erm ah hmm mm mhm uhm".split())

_OPEN_PUNCTUATION = re.compile(r"(,|\.\.\.|…|-|–|—|:|;)\s*$")
_FINAL_PUNCTUATION = re.compile(r"[.!?\"')\]]+\s*$")
_WORD = re.compile(r"[A-Za-z0-9']+(?:[.,][0-9]+)?")

_CATEGORIES: tuple[tuple[str, frozenset[str]], ...] = (
    ("filler", FILLERS),
    ("conjunction", CONJUNCTIONS),
    ("preposition", PREPOSITIONS),
    ("determiner", DETERMINERS),
    ("auxiliary", AUXILIARIES),
    ("number", NUMBER_WORDS),
)


@dataclass(frozen=True)
class Ending:
    """How a transcript ends."""

    complete: bool
    reason: str
    """``"complete"``, ``"statement"``, ``"empty"`` or the category of :mod:`edgevox.voice.endpoint`'s table."""

    @property
    def statement(self) -> bool:
        """Complete, but a statement the speaker may go on with (see :func:`is_request`)."""
        return self.reason == "statement"


def classify_ending(text: str) -> Ending:
    """Classify the end of ``text`` (a speculative transcript) as complete or not, with the reason.

    Empty text (Whisper heard nothing yet) is incomplete: there is no evidence the request is done.
    """
    stripped = text.strip()
    if not stripped:
        return Ending(False, "empty")
    if _OPEN_PUNCTUATION.search(stripped):
        return Ending(False, "trailing_punctuation")
    words = _WORD.findall(_FINAL_PUNCTUATION.sub("", stripped))
    if not words:
        return Ending(True, "complete")
    last = words[-1].lower()
    if last[0].isdigit():
        return Ending(False, "number")
    for reason, vocabulary in _CATEGORIES:
        if last in vocabulary:
            return Ending(False, reason)
    if len(words) > SHORT_ANSWER_WORDS and not is_request(stripped):
        return Ending(True, "statement")
    return Ending(True, "complete")


SHORT_ANSWER_WORDS = 3
"""Up to this many words a complete transcript counts as an answer ("yes", "the kitchen")."""


def is_request(text: str) -> bool:
    """Whether ``text`` asks the robot something - a command, a polite request, a question,
    a greeting (:func:`edgevox.language.intent.analyze`) - rather than tells something (a
    statement, a report, a story). A request is usually the whole turn; someone telling
    something often goes on after a sentence ("For a full hour he paced. But he could wait
    no longer."), so the endpoint waits ``statement_silence_ms`` for those."""
    from edgevox.language.intent import analyze  # the intent rules (lemminflect) load on first use

    return analyze(text).kind in ("command", "question")


def ends_mid_phrase(text: str) -> bool:
    """True when ``text`` reads as unfinished (see :func:`classify_ending`)."""
    return not classify_ending(text).complete
