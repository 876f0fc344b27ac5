"""Is this turn the user cancelling the workflow, or a request for the agent?

During a workflow with return (a specialist will hand back), "cancel", "never mind",
"stop that", "forget it" or "abort" spoken or typed is a command to the orchestration:
the Coordinator cancels the workflow as :meth:`Coordinator.cancel_workflow` does. But
"cancel my order" is a request *for the agent*, and "cancel the refund" while the
refund specialist holds the conversation could be either.

:class:`CancelMatcher` finds the phrase with the safety stop matcher's rules
(:class:`~edgevox.voice.stop_phrases.StopPhraseMatcher`: whole words, punctuation and
case ignored, "don't cancel" is not a cancel) and then looks at what else was said,
ignoring the resolver's function words (:data:`~edgevox.language.terms.FUNCTION_WORDS`):

* nothing else, or only words naming the workflow itself ("that", "the task", the
  specialist's name) -> ``"cancel"``;
* words from the workflow's topic (the handoff's reason) -> ``"ask"``: the coordinator
  asks which one was meant;
* anything else ("my order") -> ``None``: the agent gets the turn.

Pure and thread-safe (immutable after construction).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from edgevox.language.terms import FUNCTION_WORDS, stem
from edgevox.voice.stop_phrases import StopPhraseMatcher, normalise_words

CANCEL_PHRASES = ("cancel", "cancel that", "never mind", "nevermind", "stop that", "forget it", "abort")
"""Phrases that cancel a workflow with return (``cancel_phrases`` in class and YAML)."""

WORKFLOW_WORDS = frozenset("workflow task handoff transfer process everything whole thing please thanks thank".split())
"""Words that name the workflow itself rather than something the agent should cancel."""

YES_WORDS = frozenset("yes yeah yep sure ok okay correct right stop cancel".split())
NO_WORDS = frozenset("no nope nah don't dont not keep continue".split())

Decision = Literal["cancel", "ask"] | None


class CancelMatcher:
    """Classifies a turn as a workflow cancel, a question to ask, or a request for the agent."""

    def __init__(self, phrases: Iterable[str] = CANCEL_PHRASES) -> None:
        self._matcher = StopPhraseMatcher(phrases)
        self.phrases = self._matcher.phrases

    def classify(self, text: str, *, agent: str = "", topic: Iterable[str] = ()) -> Decision:
        """``"cancel"``, ``"ask"`` or None (see the module docstring). ``agent``: the specialist's
        name (saying it still means the workflow); ``topic``: texts describing the workflow."""
        phrase = self._matcher.match(text)
        if phrase is None:
            return None
        rest = _without(normalise_words(text), phrase.split())
        naming = WORKFLOW_WORDS | set(normalise_words(agent.replace("_", " "))) | {agent.lower()}
        content = [w for w in rest if w not in FUNCTION_WORDS and w not in naming]
        if not content:
            return "cancel"
        topic_stems = {stem(w) for t in topic for w in normalise_words(t) if w not in FUNCTION_WORDS}
        if {stem(w) for w in content} & topic_stems:
            return "ask"
        return None

    def answer(self, text: str) -> bool | None:
        """The user's answer to "do you want to stop it?": True (yes), False (no), None (neither)."""
        words = normalise_words(text)
        if not words:
            return None
        if any(w in NO_WORDS for w in words):
            return False
        if words[0] in YES_WORDS or self.classify(text) == "cancel":
            return True
        return None


def _without(words: list[str], phrase: list[str]) -> list[str]:
    """``words`` with the first occurrence of ``phrase`` removed."""
    size = len(phrase)
    for i in range(len(words) - size + 1):
        if words[i : i + size] == phrase:
            return words[:i] + words[i + size :]
    return words
