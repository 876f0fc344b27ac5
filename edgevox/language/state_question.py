"""Is a question about the robot's own present state?

"what are you up to right now?", "are you cleaning?", "where are you?", "which part of the
building are you in?", "are we rolling?", "have you got anything in your hand?": the listener
(or the speaker and the robot together, "we") is the subject, the verb is "be" in the present
tense (a progressive "are you cleaning", or a place or activity "are you in", "are you up to")
or "have got" (what it holds). Such a question is answered from the robot's record, never from
what a language model makes up: when the tool set has one report that takes no argument, the
resolver reads it (``agents/resolver.py``).

Not such questions: opinions and likes ("do you like cats?"), abilities ("can you sing?",
"are you able to fly?"), identity ("are you a robot?"), greetings ("how are you?"), the past
("were you cleaning yesterday?"), plans ("are you going to pick it up?") and hypotheticals ("what would you do if ...").
"""

from __future__ import annotations

from edgevox.language.lexicon import lexname
from edgevox.language.nlp import parse

LISTENER = frozenset(("you", "we"))
PRESENT_BE = frozenset(("VBP", "VBZ"))
NOT_STATE_VERBS = frozenset(("verb.communication", "verb.emotion", "verb.cognition"))
"""WordNet's verb classes of talk, feeling and thought: "are you kidding me?", "are you
thinking?" ask no state a tool reports."""
LATER = frozenset(("later", "tomorrow", "tonight", "soon", "next"))


def asks_robot_state(text: str) -> bool:
    """Whether ``text`` asks about the robot's present state (see the module docstring)."""
    doc = parse(text)
    if any(t.lower_ in LATER for t in doc):
        return False  # "are you going to the kitchen later?": a plan, not a state
    for subject in doc:
        if subject.dep_ != "nsubj" or subject.lower_ not in LISTENER:
            continue
        head = subject.head
        children = list(head.children)
        if any(c.tag_ == "MD" for c in children) or any(c.lower_ == "how" for c in children):
            return False  # "can you ...", "would you ...", "how are you?"
        aux_be = [c for c in children if c.dep_ == "aux" and c.lemma_ == "be" and c.tag_ in PRESENT_BE]
        if head.tag_ == "VBG" and aux_be and any(c.dep_ == "xcomp" for c in children):
            return False  # "are you going to pick up the cup?": a plan ("be going to")
        if head.tag_ == "VBG" and aux_be:
            # "are you cleaning?", "are we rolling right now?"; not talk or thought
            return lexname(head.lemma_, "v") not in NOT_STATE_VERBS
        aux_have = [c for c in children if c.dep_ == "aux" and c.lemma_ == "have" and c.tag_ in PRESENT_BE]
        if head.lemma_ == "get" and head.tag_ == "VBN" and aux_have:
            return True  # "have you got anything in your hand?": what it holds
        if head.lemma_ == "be" and head.tag_ in PRESENT_BE:
            if any(c.dep_ in ("attr", "acomp") and c.tag_ not in ("WP", "WDT") for c in children):
                return False  # "are you a robot?", "are you able to fly?"
            return any(
                c.lower_ == "where" or (c.dep_ in ("prep", "advmod") and c.tag_ in ("IN", "RP")) for c in children
            )
    return False


EVALUATIVE = frozenset(("good", "best", "better", "ideal", "safe", "safest", "recommended", "optimal"))
"""Adjectives of judgement: "a *good* salt rate", "the *best* speed" ask what is advisable ("right" is
also a side: "the right-hand position")."""


def asks_advice(text: str) -> bool:
    """Whether a question asks for advice, not for a reading: an evaluative adjective on the
    noun asked about ("what's a good salt rate for black ice?", "what is the best speed for wet
    floors?") or "should" ("how fast should I drive?"). It is answered in words, never from a
    report of the robot's own state."""
    doc = parse(text)
    if any(t.lower_ == "should" and t.tag_ == "MD" for t in doc):
        return True
    return any(t.dep_ == "amod" and t.lower_ in EVALUATIVE and t.head.pos_ == "NOUN" for t in doc)
