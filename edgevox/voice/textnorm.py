"""Word error rate (WER) after the product's text normalisation: case, punctuation, numbers.

Both the reference and the hypothesis go through :func:`normalize` before words are
compared, so "Go forward 10 meters." and "go forward ten meters" count as equal.
Numbers become words (``10`` -> ``ten``, ``30`` -> ``thirty``, ``2.5`` -> ``two point
five``, ``3rd`` -> ``third``, ``50%`` -> ``fifty percent``; the words come from
num2words through :mod:`edgevox.voice.spoken_numbers`, without its "and": "105" ->
"one hundred five"). Hyphens split words ("twenty-five" -> "twenty five");
apostrophes inside words are kept ("don't").

This is deliberately small and predictable; it is not Whisper's English normaliser
(which also rewrites spellings and contractions). The word alignment is jiwer's
(``jiwer.process_words``, a C++ Levenshtein from rapidfuzz): it replaced a hand-written
Python dynamic programme with the same counts on the tests and is faster on long texts
(``scripts/bench_text_libs.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import jiwer

from edgevox.voice.spoken_numbers import ordinal, quantity


def _number_words(words: str) -> str:
    return words.replace(" and ", " ")


_NUMBER_RE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(st|nd|rd|th)?(%)?")


def _number_sub(match: re.Match[str]) -> str:
    integer, fraction, ordinal_suffix, percent = match.groups()
    if ordinal_suffix and not fraction:
        words = ordinal(int(integer.replace(",", "")))
    else:
        words = quantity(integer, fraction)  # an identifier ("007", 16+ digits) digit by digit
    if percent:
        words += " percent"
    return f" {_number_words(words)} "


def normalize(text: str) -> str:
    """Lowercase, numbers to words, punctuation removed, whitespace collapsed."""
    t = text.lower()
    t = t.replace("\u2019", "'").replace("&", " and ")
    t = _NUMBER_RE.sub(_number_sub, t)
    t = re.sub(r"[-\u2013\u2014/_]", " ", t)
    # Keep apostrophes only between letters ("don't"), drop every other symbol.
    t = re.sub(r"(?<![a-z])'|'(?![a-z])", " ", t)
    t = re.sub(r"[^a-z0-9' ]+", " ", t)
    return " ".join(t.split())


@dataclass(frozen=True)
class WordErrors:
    """Edit-distance counts between a reference and a hypothesis (after normalisation)."""

    substitutions: int
    deletions: int
    insertions: int
    reference_words: int

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def wer(self) -> float:
        """Errors per reference word; ``inf`` if the reference is empty but words were inserted."""
        if self.reference_words == 0:
            return 0.0 if self.errors == 0 else float("inf")
        return self.errors / self.reference_words


def word_errors(reference: str, hypothesis: str, *, normalized: bool = False) -> WordErrors:
    """Word alignment (jiwer's Levenshtein), counting substitutions, deletions and insertions."""
    ref = reference if normalized else normalize(reference)
    hyp = hypothesis if normalized else normalize(hypothesis)
    out = jiwer.process_words(" ".join(ref.split()), " ".join(hyp.split()))
    return WordErrors(
        substitutions=out.substitutions,
        deletions=out.deletions,
        insertions=out.insertions,
        reference_words=len(ref.split()),
    )
