"""The review ``Loop`` strategy: a writer and reviewers; a reviewer approves with "APPROVED";
otherwise its feedback goes into the next draft, up to ``max_iterations``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from edgevox.agents.base import Agent, AgentResult
from edgevox.agents.events import ReplyDelta
from edgevox.agents.run import child_name
from edgevox.orchestration.strategies.base import Orchestration, check_agents
from edgevox.orchestration.workflows import Run
from edgevox.runtime.context import AgentContext

APPROVED = "APPROVED"


class Loop(Orchestration):
    """A writer revised until reviewers approve (``"APPROVED"`` in a review) or ``max_iterations``.

    ``strategy``: ``"all"`` reviewers must approve, ``"any"`` one suffices, ``"majority"``.
    The result's ``data`` has ``approved`` and ``iteration`` (1-based, the one that produced ``text``).
    """

    name = "loop"

    def __init__(
        self,
        agent: Agent,
        reviewers: Sequence[Agent],
        *,
        strategy: Literal["all", "any", "majority"] = "all",
        max_iterations: int = 3,
        **kw: object,
    ) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]  # Orchestration's keyword options, checked by its signature
        if strategy not in ("all", "any", "majority"):
            raise ValueError(f"Loop strategy {strategy!r}: must be 'all', 'any' or 'majority'")
        if max_iterations < 1:
            raise ValueError(f"Loop max_iterations = {max_iterations}: must be >= 1")
        self.agent = agent
        self.reviewers = check_agents("Loop", reviewers)
        self.strategy = strategy
        self.max_iterations = max_iterations

    def _decide(self, votes: list[bool]) -> bool:
        if self.strategy == "all":
            return all(votes)
        if self.strategy == "any":
            return any(votes)
        return sum(votes) * 2 > len(votes)

    def _run(self, task: str, ctx: AgentContext) -> Run:
        steps: list[AgentResult] = []
        prompt = task
        draft = AgentResult(agent=child_name(self.agent))
        for iteration in range(1, self.max_iterations + 1):
            draft = self.call(self.agent, prompt, ctx)
            steps.append(draft)
            facts = {"approved": False, "iteration": iteration}
            if not draft.ok:
                return AgentResult(draft.text, agent=draft.agent, ok=False, error=draft.error, steps=steps, data=facts)
            reviews = [
                self.call(
                    r,
                    f"Request: {task}\nAnswer: {draft.text}\nReply {APPROVED} if the answer is good; otherwise say what to fix.",
                    ctx,
                )
                for r in self.reviewers
            ]
            steps.extend(reviews)
            votes = [r.ok and APPROVED in r.text.upper() for r in reviews]
            if self._decide(votes):
                yield ReplyDelta(source=draft.agent, text=draft.text)
                return AgentResult(draft.text, agent=draft.agent, steps=steps, data={**facts, "approved": True})
            feedback = "\n".join(
                f"- {r.agent}: {r.text if r.ok else 'no review (' + r.error + ')'}"
                for r, v in zip(reviews, votes, strict=True)
                if not v
            )
            prompt = f"{task}\n\nYour previous answer: {draft.text}\nReviewer feedback:\n{feedback}\nWrite an improved answer."
        if draft.text:
            yield ReplyDelta(source=draft.agent, text=draft.text)
        return AgentResult(
            draft.text, agent=draft.agent, steps=steps, data={"approved": False, "iteration": self.max_iterations}
        )
