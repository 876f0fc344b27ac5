"""Safety stop phrases: does this transcript tell the robot to stop?

:class:`StopPhraseMatcher` normalises a transcript (Unicode NFKC, so full-width
"ＳＴＯＰ" is "STOP"; case, punctuation, curly apostrophes, hyphens) into words and
looks for any configured phrase as a whole-word sequence ("stop", "halt",
"freeze", "emergency stop" ...). "STOP!!!" and "stop stop stop" stop. An
occurrence preceded (within ``negation_window`` words of the same clause) by a
negation - "don't stop", "do not stop", "never stop", "non-stop" - does not
count. Punctuation ``, . ; : ! ?`` ends a clause, so "don't go, stop!" and
"not now. Stop." still stop, as does any other un-negated occurrence.

A phrase that ends the utterance is negated only when the negation is its own:
nothing but ``NEGATION_FILLERS`` ("you", "ever", "just" ...) between them
("don't you ever stop"). In "don't do that stop" the negation belongs to "do",
and the final "stop" is a command of its own (speakers drop the comma). Inside
an utterance the window rule stays ("don't stop the music" does not stop).

Policy: a phrase anywhere in the utterance matches ("can you stop now" stops).
A false stop costs a repeated command; a missed stop can cost a collision, so
the matcher errs towards stopping. ``max_words`` can restrict matching to short
utterances where that trade-off is wrong for an application.

A *tolerant* matcher (:meth:`StopPhraseMatcher.tolerant`, used by the stop check on short
utterances heard over the robot's voice) also takes a phrase word's present-tense inflections:
Whisper renders a clipped imperative followed by more words as a progressive or a third person
("are stopping right now" for "Stop right now" said over the robot). The past is left out: "it
stopped" reports, and "Stopped." is the robot's own confirmation. The forms come from
lemminflect's English lexicon, for words it knows as verbs; other words get none.

Pure and thread-safe (immutable after construction); the voice loop calls it on
the STT thread for every transcript, before any agent sees it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from edgevox.language.words import lemmas

DEFAULT_STOP_PHRASES = ("stop", "halt", "freeze")
"""The English default (``safety.stop_phrases`` when ``stt.language`` is ``en``). "stop" also
matches "emergency stop" and "stop stop"."""
DEFAULT_NEGATIONS = (
    "don't",
    "dont",
    "do not",
    "never",
    "not",
    "non",
    "didn't",
    "won't",
    "can't",
    "cannot",
    "no need to",
)

STOP_PHRASES: dict[str, tuple[str, ...]] = {
    "en": DEFAULT_STOP_PHRASES,
    "de": ("stopp", "stop", "halt", "anhalten"),
    "fr": ("stop", "arrête", "arrêtez", "halte"),
    "es": ("alto", "detente", "párate", "stop"),
    "it": ("stop", "fermati", "fermo", "alt"),
    "nl": ("stop", "stoppen", "halt"),
    "pt": ("pare", "parar", "stop"),
}
"""Default stop phrases per spoken language (``stt.language``), used when ``safety.stop_phrases``
is not set. Words that are also everyday function words are left out (Spanish and Portuguese
"para" is also "for"): a phrase must be a command."""
NEGATIONS: dict[str, tuple[str, ...]] = {
    "en": DEFAULT_NEGATIONS,
    "de": ("nicht", "kein", "keine", "nie", "niemals"),
    "fr": ("ne", "n'", "pas", "jamais"),
    "es": ("no", "nunca"),
    "it": ("non", "mai"),
    "nl": ("niet", "nooit", "geen"),
    "pt": ("não", "nao", "nunca"),
}
"""Negations that, just before a stop phrase, make it no stop ("don't stop", "nicht anhalten")."""


def stop_phrases_for(language: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(stop phrases, negations) for ``language`` (ISO 639-1); a ``ValueError`` says what to
    do for a language with no defaults."""
    key = language.lower().split("-")[0]
    if key not in STOP_PHRASES:
        raise ValueError(
            f"no default stop phrases for language {language!r} (known: {', '.join(sorted(STOP_PHRASES))}): "
            "list them in safety.stop_phrases (and their negations in safety.negations)"
        )
    return STOP_PHRASES[key], NEGATIONS[key]


_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'", "\u02bc": "'"})
_WORDS = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
"""Words in any script (letters and digits), with one inner apostrophe ("don't", "n'arrête")."""
NEGATION_FILLERS = frozenset("you ever even just please really dare u".split())
"""Words that may stand between a negation and the phrase it negates at the end of an utterance."""

_CLAUSE_BREAK = re.compile(r"[,.;:!?\u3001\u3002\uff0c\uff01\uff1f]+")


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def normalise_words(text: str) -> list[str]:
    """Lower-case words of ``text``; punctuation and hyphens separate words."""
    return _WORDS.findall(_nfkc(text).translate(_APOSTROPHES).lower())


def present_forms(word: str) -> frozenset[str]:
    """The present-tense inflections English gives ``word`` as a verb ("stops", "stopping" of
    "stop"), without the past; none when the English lexicon does not know it as a verb."""
    if "VERB" not in lemmas(word):
        return frozenset()
    from lemminflect import getInflection

    forms = {form for tag in ("VBZ", "VBG") for form in getInflection(word, tag=tag)}
    return frozenset(f.lower() for f in forms if f.lower() != word)


class StopPhraseMatcher:
    """Matches safety stop phrases in transcripts; see the module docstring for the rules."""

    def __init__(
        self,
        phrases: Iterable[str] = DEFAULT_STOP_PHRASES,
        *,
        negations: Iterable[str] = DEFAULT_NEGATIONS,
        negation_window: int = 2,
        max_words: int | None = None,
        tolerant: bool = False,
    ) -> None:
        phrases, negations = tuple(phrases), tuple(negations)
        self._given = (phrases, negations)
        self.tolerant_forms = tolerant
        """Whether a phrase word's present-tense inflections match too (see the module docstring)."""
        self.phrases = tuple(p for p in (" ".join(normalise_words(p)) for p in phrases) if p)
        if not self.phrases:
            raise ValueError("stop phrases: at least one non-empty phrase is needed (e.g. 'stop')")
        self._phrase_words = [tuple(p.split()) for p in self.phrases]
        # Longest first so "emergency stop" is reported rather than "stop".
        self._phrase_words.sort(key=len, reverse=True)
        self._negations = [tuple(normalise_words(n)) for n in negations if normalise_words(n)]
        if negation_window < 0:
            raise ValueError(f"negation_window = {negation_window}: must be >= 0")
        self.negation_window = negation_window
        self.max_words = max_words
        words = {w for phrase in self._phrase_words for w in phrase}
        self._forms = {w: frozenset((w,)) | (present_forms(w) if tolerant else frozenset()) for w in words}

    def tolerant(self) -> StopPhraseMatcher:
        """The same phrases and negations, also matching present-tense inflections."""
        phrases, negations = self._given
        return StopPhraseMatcher(
            phrases,
            negations=negations,
            negation_window=self.negation_window,
            max_words=self.max_words,
            tolerant=True,
        )

    def match(self, text: str) -> str | None:
        """The matched phrase, or None."""
        if self.max_words is not None and len(normalise_words(text)) > self.max_words:
            return None
        clauses = [normalise_words(c) for c in _CLAUSE_BREAK.split(_nfkc(text))]
        last = max((i for i, c in enumerate(clauses) if c), default=-1)
        for phrase in self._phrase_words:
            size = len(phrase)
            for index, words in enumerate(clauses):
                for start in range(len(words) - size + 1):
                    if not all(w in self._forms[p] for w, p in zip(words[start : start + size], phrase, strict=True)):
                        continue
                    at_end = index == last and start + size == len(words)
                    if not self._negated(words, start, at_end=at_end):
                        return " ".join(phrase)
        return None

    def _negated(self, words: list[str], start: int, *, at_end: bool) -> bool:
        """True if a negation ends within ``negation_window`` words before ``start`` (at the end of
        the utterance: with only ``NEGATION_FILLERS`` in between)."""
        for neg in self._negations:
            size = len(neg)
            # A negation ending at index e (exclusive) with start - e <= window.
            for end in range(max(size, start - self.negation_window), start + 1):
                if tuple(words[end - size : end]) != neg:
                    continue
                if not at_end or all(w in NEGATION_FILLERS for w in words[end:start]):
                    return True
        return False

    def __repr__(self) -> str:
        return f"StopPhraseMatcher({list(self.phrases)!r})"
