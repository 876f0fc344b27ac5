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

Questions may still call tools that only read the world ("what's your battery level" ->
``get_battery``): ``ToolFrame.reads`` (:mod:`edgevox.language.frames`) tells them apart
from actions by the verb that names them (``get_``, "Report the ...").

Rejected alternatives: a dependency parser (spaCy and its models are not installable
offline and cost ~50 MB and tens of ms per utterance on the target CPU) and word
lists fitted to the failing sentences (they do not carry over to unseen phrasings).
The price of a rule layer is coverage of rare constructions; each miss errs on the
side of answering in words, which is the safe side for a robot.

Modules: this one gives the verdict for a whole utterance (:func:`analyze`, :class:`Intent`),
and yes/no answers (:func:`answer_polarity`);
:mod:`~edgevox.language.clauses` splits and classifies clauses (rules 1-5), and
:mod:`~edgevox.language.words` holds the word tables and verb forms they read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from edgevox.language.clauses import (
    ONLY_INTERJECTIONS,
    Clause,
    Kind,
    bare_negation,
    classify_clause,
    deferral,
    is_conditional,
    is_vocative,
    split_clauses,
    waits_for_an_event,
)
from edgevox.language.words import DISCOURSE, HEDGES, NEGATORS, REPORTING_VERBS, RETRACTIONS, has_seq, words


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


_PRIORITY: tuple[Kind, ...] = ("hypothetical", "negated", "question", "report", "statement")


def analyze(text: str) -> Intent:
    """The :class:`Intent` of one utterance."""
    all_words = words(text)
    if not all_words:
        return Intent("statement", text, "nothing said")
    if is_conditional(all_words, text):
        if waits_for_an_event(all_words) and not any(w in ("if", "unless", "suppose") for w in all_words):
            # "start the cycle once the patient's been moved": an order for later, which the
            # robot cannot keep: asked about now, never done now unasked
            later = [c for c in (classify_clause(p) for p in split_clauses(text)) if c.kind == "command"]
            later = [c for c in later if not waits_for_an_event(words(c.text))]
            if later:
                return Intent("command", " ".join(c.text for c in later), "an order for later", confirm="later")
        return Intent("hypothetical", text, "a condition or supposition")
    pieces = split_clauses(text)
    clauses = _carry(
        tuple(
            Clause(c, "statement", ONLY_INTERJECTIONS) if len(pieces) > 1 and is_vocative(c) else classify_clause(c)
            for c in pieces
        )
    )
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
        said = [c for c in clauses if c.reason != ONLY_INTERJECTIONS]
        # A verbless command with only reasons besides it ("emergency brake now, there's a
        # hedgehog!") is still a command; the resolver acts on it only if it names a tool.
        reasons = all(c.kind in ("command", "statement", "report") for c in said)
        if not elliptical or len(commands) == len(said) or reasons:
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
        if c.kind == "negated" and bare_negation(c.text):
            negate = True
        if ws and ws[-1] in REPORTING_VERBS:
            quote = True
        out.append(c)
    return tuple(out)


_RETRACT_CONTENT = frozenset("do it that this wait actually mind please".split())


def _retracts(clause: str) -> bool:
    """A negation with nothing of its own ("no, don't", "never mind") takes back what came before."""
    ws = words(clause)
    if any(has_seq(ws, seq) for seq in RETRACTIONS):
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
    if any(has_seq(ws, seq) for seq in RETRACTIONS) or ws in (["dont"], ["do", "not"], ["no", "thanks"]):
        return False
    rest = [w for w in ws if w not in DISCOURSE - {"yes", "yeah", "okay", "ok", "alright"}]
    if not rest:
        return True if any(w in YES_WORDS or w == "alright" for w in ws) else None
    if all(w in NO_WORDS or w in _ANSWER_FILLER or w in NEGATORS for w in rest) and (
        rest[0] in NO_WORDS or rest[0] in NEGATORS
    ):
        return False
    if all(w in YES_WORDS or w in _ANSWER_FILLER or w == "alright" for w in rest):
        if any(w in YES_WORDS or w == "alright" for w in rest) or any(has_seq(rest, s) for s in YES_PHRASES):
            return True
    return None
