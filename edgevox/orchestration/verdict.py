"""Reading a reviewer's verdict: did this review approve the answer?

A review loop asks reviewers to reply APPROVED when an answer is good; small models answer
"**APPROVED**", "Approved.", "Not approved: fix X", "I can't approve this yet",
"Approved? No." or repeat the instruction ("reply APPROVED if it is good"). A substring test
takes all of them for approval. :func:`parse_verdict` reads the review word by word instead:

* the text is lower-cased, markdown marks dropped, and split into clauses at ``. ! ? ; : ,``,
  new lines and "but";
* an **approval word** (approve, approved, approves, lgtm) counts for approval unless, in its
  clause, it is negated (a negator such as not, never, can't, cannot, won't, isn't, without
  anywhere before it in the clause: "I do not think this should be approved"; or "no" right
  before it), hedged (almost, nearly, partially),
  conditional (if, once, after, when, unless, until around it: "approved once you fix X",
  "reply APPROVED if..."), or asked ("approved?"; "approved? no" and "approved: no" reject,
  "approved: yes" approves);
* a **rejection word** (unapproved, disapprove(d), reject(ed), declined, denied) counts against.

A negator reaches over the whole clause on purpose: wrongly reading a rejection costs one
more draft, wrongly reading an approval ships an answer nobody approved. Any reading against
approval rejects; approval needs at least one clean approval word and
nothing against it; a review with neither is ``unclear``, which is not approval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

APPROVE = frozenset({"approve", "approved", "approves", "approving", "lgtm"})
REJECT = frozenset(
    {"unapproved", "disapprove", "disapproved", "reject", "rejected", "rejecting", "declined", "denied", "deny"}
)
NEGATORS = frozenset(
    {
        "not",
        "never",
        "nor",
        "neither",
        "cannot",
        "without",
        "can't",
        "cant",
        "won't",
        "wont",
        "don't",
        "dont",
        "doesn't",
        "doesnt",
        "didn't",
        "didnt",
        "isn't",
        "isnt",
        "wasn't",
        "aren't",
        "couldn't",
        "wouldn't",
        "shouldn't",
        "hasn't",
        "haven't",
        "mustn't",
    }
)
HEDGES = frozenset({"almost", "nearly", "partially", "partly", "conditionally"})
CONDITIONS = frozenset({"if", "once", "after", "when", "unless", "until", "provided"})
NO = frozenset({"no", "nope", "nah", "not", "false", "never"})
YES = frozenset({"yes", "yep", "true", "definitely"})
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|[.!?;:,\n]|-(?=\s)")
_BREAKS = frozenset({".", "!", "?", ";", ":", ",", "\n", "-", "but", "however", "although"})
_ASK = frozenset({"?", ":", "-"})
"""A separator after an approval word that makes it a question or a label ("approved?", "approved: no")."""


@dataclass(frozen=True)
class Verdict:
    """What a review said: ``approved``, ``rejected`` or ``unclear`` (only ``approved`` approves)."""

    kind: Literal["approved", "rejected", "unclear"]
    why: str
    """The words that decided it ("approved", "not approved", "approved?", "no verdict")."""

    @property
    def approved(self) -> bool:
        return self.kind == "approved"


def _tokens(text: str) -> list[str]:
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    text = re.sub(r"[*_#`>|~\[\]()\"]", " ", text)  # markdown marks: **APPROVED**, `approved`, > quotes
    return _TOKEN.findall(text)


def _clause_start(tokens: list[str], i: int) -> int:
    while i > 0 and tokens[i - 1] not in _BREAKS:
        i -= 1
    return i


def _clause_end(tokens: list[str], i: int) -> int:
    while i < len(tokens) and tokens[i] not in _BREAKS:
        i += 1
    return i


def _read_approval(tokens: list[str], i: int) -> tuple[bool | None, str]:
    """One approval word at ``i``: True (approves), False (rejects) or None (unclear), and why."""
    word = tokens[i]
    start, end = _clause_start(tokens, i), _clause_end(tokens, i + 1)
    before = tokens[start:i]
    negator = next((w for w in reversed(before) if w in NEGATORS), None)
    if negator is None and i > start and tokens[i - 1] == "no":
        negator = "no"
    if negator is not None:
        return False, f"{negator} {word}"
    hedge = next((w for w in before if w in HEDGES), None)
    if hedge is not None:
        return None, f"{hedge} {word}"
    condition = next((w for w in tokens[start:end] if w in CONDITIONS), None)
    if condition is not None:
        return None, f"{word} ... {condition}"
    if end < len(tokens) and tokens[end] in _ASK and end == i + 1:
        answer = tokens[end + 1] if end + 1 < len(tokens) else ""
        if answer in NO:
            return False, f"{word}{tokens[end]} {answer}"
        if answer in YES:
            return True, f"{word}{tokens[end]} {answer}"
        if tokens[end] == "?":
            return None, f"{word}?"
    return True, word


def parse_verdict(text: str) -> Verdict:
    """Read ``text`` (a reviewer's reply) word by word; see the module docs for the rules."""
    tokens = _tokens(text)
    approvals: list[str] = []
    unclear: list[str] = []
    for i, word in enumerate(tokens):
        if word in REJECT:
            return Verdict("rejected", word)
        if word in APPROVE:
            reading, why = _read_approval(tokens, i)
            if reading is False:
                return Verdict("rejected", why)
            (approvals if reading else unclear).append(why)
    if unclear:
        return Verdict("unclear", unclear[0])
    if approvals:
        return Verdict("approved", approvals[0])
    return Verdict("unclear", "no verdict")


def approves(text: str) -> bool:
    """True when ``text`` is a review that approves (:func:`parse_verdict` reads ``approved``)."""
    return parse_verdict(text).approved
