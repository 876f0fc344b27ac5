"""Text normalisation for word error rate (WER): case, punctuation, numbers.

Both the reference and the hypothesis go through :func:`normalize` before words are
compared, so "Go forward 10 meters." and "go forward ten meters" count as equal.
Numbers become words (``10`` -> ``ten``, ``30`` -> ``thirty``, ``2.5`` -> ``two point
five``, ``3rd`` -> ``third``, ``50%`` -> ``fifty percent``). Hyphens split words
("twenty-five" -> "twenty five"); apostrophes inside words are kept ("don't").

This is deliberately small and predictable; it is not Whisper's English normaliser
(which also rewrites spellings and contractions).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ((10**9, "billion"), (10**6, "million"), (1000, "thousand"), (100, "hundred"))
_ORDINAL_IRREGULAR = {
    "one": "first",
    "two": "second",
    "three": "third",
    "five": "fifth",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}


def number_to_words(n: int) -> str:
    """English words for a non-negative integer (``105`` -> ``one hundred five``)."""
    if n < 0:
        return "minus " + number_to_words(-n)
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (" " + _ONES[ones] if ones else "")
    for value, name in _SCALES:
        if n >= value:
            head, rest = divmod(n, value)
            return number_to_words(head) + " " + name + (" " + number_to_words(rest) if rest else "")
    raise AssertionError("unreachable")


def ordinal_words(n: int) -> str:
    words = number_to_words(n).split()
    last = words[-1]
    if last in _ORDINAL_IRREGULAR:
        words[-1] = _ORDINAL_IRREGULAR[last]
    elif last.endswith("y"):
        words[-1] = last[:-1] + "ieth"
    else:
        words[-1] = last + "th"
    return " ".join(words)


def _digits_to_words(digits: str) -> str:
    return " ".join(_ONES[int(d)] for d in digits)


_NUMBER_RE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(st|nd|rd|th)?(%)?")


def _number_sub(match: re.Match[str]) -> str:
    integer, fraction, ordinal, percent = match.groups()
    value = int(integer.replace(",", ""))
    if ordinal and not fraction:
        words = ordinal_words(value)
    else:
        words = number_to_words(value)
        if fraction:
            words += " point " + _digits_to_words(fraction)
    if percent:
        words += " percent"
    return f" {words} "


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
    """Levenshtein alignment over words, counting substitutions, deletions and insertions."""
    ref = (reference if normalized else normalize(reference)).split()
    hyp = (hypothesis if normalized else normalize(hypothesis)).split()
    return _align(ref, hyp)


def _align(ref: Sequence[str], hyp: Sequence[str]) -> WordErrors:
    # cost[j] = (total, subs, dels, ins) for ref[:i] vs hyp[:j]; rolling row.
    prev = [(j, 0, 0, j) for j in range(len(hyp) + 1)]
    for i in range(1, len(ref) + 1):
        row = [(i, 0, i, 0)]
        for j in range(1, len(hyp) + 1):
            if ref[i - 1] == hyp[j - 1]:
                best = prev[j - 1]
            else:
                s, d, n = prev[j - 1], prev[j], row[j - 1]
                best = min(
                    (s[0] + 1, s[1] + 1, s[2], s[3]),
                    (d[0] + 1, d[1], d[2] + 1, d[3]),
                    (n[0] + 1, n[1], n[2], n[3] + 1),
                )
            row.append(best)
        prev = row
    total, subs, dels, ins = prev[-1]
    return WordErrors(substitutions=subs, deletions=dels, insertions=ins, reference_words=len(ref))
