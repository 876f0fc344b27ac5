"""The review ``Loop`` strategy: a writer and reviewers; each draft is reviewed, and the feedback
of the reviewers who did not approve goes into the next draft, up to ``max_iterations``.

``strategy`` means what it means in RoomKit: how reviewers run. ``"sequential"`` (the default,
also for ``None``): one after another, each seeing the feedback of the earlier reviewers who did
not approve; ``"parallel"``: all at once on threads, each reviewing the same draft. How many
approvals a draft needs is ``approval`` (``"all"``, RoomKit's only rule and the default;
``"any"``; ``"majority"``). A review approves when :func:`~edgevox.orchestration.verdict.parse_verdict`
reads it as approval ("Not approved: fix X" does not).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from edgevox.agents.base import Agent, AgentResult
from edgevox.agents.events import ReplyDelta
from edgevox.agents.run import child_name, run_parallel
from edgevox.orchestration.strategies.base import Orchestration, check_agents
from edgevox.orchestration.verdict import Verdict, parse_verdict
from edgevox.orchestration.workflows import Run
from edgevox.runtime.context import AgentContext

APPROVED = "APPROVED"
ReviewStrategy = Literal["sequential", "parallel"]
Approval = Literal["all", "any", "majority"]
_VOTES = ("all", "any", "majority")


class Loop(Orchestration):
    """A writer revised until reviewers approve or ``max_iterations`` drafts were written.

    ``reviewers`` or the single ``reviewer`` (RoomKit's shorthand), not both. ``strategy``:
    ``"sequential"`` (default) or ``"parallel"``, how reviewers run. ``approval``: ``"all"``
    reviewers must approve (default), ``"any"`` one suffices, ``"majority"``. The result's
    ``data`` has ``approved``, ``iteration`` (1-based, the one that produced ``text``) and
    ``reviews`` (the last round: ``{"reviewer", "verdict", "why", "text"}`` each).
    """

    name = "loop"

    def __init__(
        self,
        agent: Agent,
        reviewers: Sequence[Agent] | None = None,
        reviewer: Agent | None = None,
        max_iterations: int = 3,
        *,
        strategy: ReviewStrategy | None = None,
        approval: Approval = "all",
        **kw: object,
    ) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]  # Orchestration's keyword options, checked by its signature
        if strategy in _VOTES:
            raise ValueError(
                f"Loop strategy {strategy!r}: strategy is how reviewers run, 'sequential' or 'parallel' "
                f"(as in RoomKit); for how many must approve use approval={strategy!r}"
            )
        if strategy not in (None, "sequential", "parallel"):
            raise ValueError(f"Loop strategy {strategy!r}: must be 'sequential', 'parallel' or None (sequential)")
        if approval not in _VOTES:
            raise ValueError(f"Loop approval {approval!r}: must be 'all', 'any' or 'majority'")
        if max_iterations < 1:
            raise ValueError(f"Loop max_iterations = {max_iterations}: must be >= 1")
        if reviewers and reviewer is not None:
            raise ValueError("Loop: give either reviewers=[...] or reviewer=..., not both")
        if reviewer is None and not reviewers:
            raise ValueError("Loop needs at least one reviewer (reviewers=[...] or reviewer=...)")
        self.agent = agent
        self.reviewers = check_agents("Loop", [reviewer] if reviewer is not None else list(reviewers or ()))
        self.strategy: ReviewStrategy = strategy or "sequential"
        self.approval: Approval = approval
        self.max_iterations = max_iterations

    def _decide(self, votes: list[bool]) -> bool:
        if self.approval == "all":
            return all(votes)
        if self.approval == "any":
            return any(votes)
        return sum(votes) * 2 > len(votes)

    def _run(self, task: str, ctx: AgentContext) -> Run:
        steps: list[AgentResult] = []
        prompt = task
        draft = AgentResult(agent=child_name(self.agent))
        facts: dict[str, object] = {}
        for iteration in range(1, self.max_iterations + 1):
            draft = self.call(self.agent, prompt, ctx)
            steps.append(draft)
            facts = {"approved": False, "iteration": iteration, "reviews": []}
            if not draft.ok:
                return AgentResult(draft.text, agent=draft.agent, ok=False, error=draft.error, steps=steps, data=facts)
            review_prompt = (
                f"Request: {task}\nAnswer: {draft.text}\n"
                f"Reply {APPROVED} if the answer is good; otherwise say what to fix."
            )
            review = self._review_parallel if self.strategy == "parallel" else self._review_sequential
            rounds = review(review_prompt, ctx)
            steps.extend(r for r, _ in rounds)
            facts["reviews"] = [
                {"reviewer": r.agent, "verdict": v.kind, "why": v.why, "text": r.text} for r, v in rounds
            ]
            if self._decide([v.approved for _, v in rounds]):
                yield ReplyDelta(source=draft.agent, agent=draft.agent, text=draft.text)
                return AgentResult(draft.text, agent=draft.agent, steps=steps, data={**facts, "approved": True})
            feedback = "\n".join(f"- {r.agent}: {_feedback(r)}" for r, v in rounds if not v.approved)
            prompt = f"{task}\n\nYour previous answer: {draft.text}\nReviewer feedback:\n{feedback}\nWrite an improved answer."
        if draft.text:
            yield ReplyDelta(source=draft.agent, agent=draft.agent, text=draft.text)
        return AgentResult(draft.text, agent=draft.agent, steps=steps, data=facts)

    def _review_sequential(self, prompt: str, ctx: AgentContext) -> list[tuple[AgentResult, Verdict]]:
        """Reviewers one after another; each sees the feedback of the earlier ones who did not approve."""
        rounds: list[tuple[AgentResult, Verdict]] = []
        for reviewer in self.reviewers:
            earlier = "".join(f"\n\n--- {r.agent} feedback ---\n{_feedback(r)}" for r, v in rounds if not v.approved)
            review = self.call(reviewer, prompt + earlier, ctx)
            rounds.append((review, _verdict(review)))
        return rounds

    def _review_parallel(self, prompt: str, ctx: AgentContext) -> list[tuple[AgentResult, Verdict]]:
        """Every reviewer at once, on its own thread, on the same draft; a cancelled branch is
        joined and reported (``cancelled``) like the others, never abandoned."""
        jobs = [(r, prompt) for r in self.reviewers]
        done = run_parallel(
            jobs, ctx, thread_name="edgevox-loop-review", timeout_s=self.timeout_s, unfinished="review did not finish"
        )
        ctx.cancel_token.raise_if_cancelled()
        return [(r, _verdict(r)) for r in done]


def _verdict(review: AgentResult) -> Verdict:
    if not review.ok:
        return Verdict("unclear", f"no review ({review.error or 'failed'})")
    return parse_verdict(review.text)


def _feedback(review: AgentResult) -> str:
    return review.text if review.ok else f"no review ({review.error or 'failed'})"
