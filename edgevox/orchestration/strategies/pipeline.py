"""The ``Pipeline`` strategy: agents in order; each receives the user request and the previous
agent's answer. Cancelling mid-way keeps the finished steps under the session id;
:meth:`Pipeline.resume` continues from the next step."""

from __future__ import annotations

from collections.abc import Sequence

from edgevox.agents.base import Agent, AgentResult
from edgevox.agents.events import ReplyDelta
from edgevox.agents.run import drain
from edgevox.errors import Cancelled
from edgevox.orchestration.events import WorkflowSuspended
from edgevox.orchestration.strategies.base import Orchestration, check_agents
from edgevox.orchestration.workflows import Run
from edgevox.runtime.context import AgentContext


class Pipeline(Orchestration):
    """Agents in order; the last answer is the reply."""

    name = "pipeline"

    def __init__(self, agents: Sequence[Agent], **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]  # Orchestration's keyword options, checked by its signature
        self.agents = check_agents("Pipeline", agents)

    def _record(self) -> str:
        return f"workflow/{self.name}"

    def _run(self, task: str, ctx: AgentContext) -> Run:
        """Earlier stages run to the end; the last stage's reply streams as it is generated."""
        return self._run_from(task, ctx, [])

    def resume(self, ctx: AgentContext) -> AgentResult | None:
        """Continue the session's cancelled run from the next step (None if none is kept)."""
        record = self.store_for(ctx).get_record(ctx.session_id, self._record())
        if record is None:
            return None
        done = [AgentResult(agent=s["agent"], text=s["text"]) for s in record["completed"]]
        return drain(self._run_from(record["task"], ctx, done))

    def suspended(self, ctx: AgentContext) -> dict[str, object] | None:
        return self.store_for(ctx).get_record(ctx.session_id, self._record())

    def _run_from(self, task: str, ctx: AgentContext, done: list[AgentResult]) -> Run:
        store = self.store_for(ctx)
        steps = list(done)
        last = self.agents[-1]
        for agent in self.agents[len(done) :]:
            step_task = task if not steps else f"User request: {task}\n{steps[-1].agent} said: {steps[-1].text}"
            try:
                if agent is last:
                    outcome = yield from self.stream_call(agent, step_task, ctx)
                else:
                    outcome = self.call(agent, step_task, ctx)
            except Cancelled as exc:
                record = {"task": task, "completed": [{"agent": s.agent, "text": s.text} for s in steps]}
                store.put_record(ctx.session_id, self._record(), record)
                ctx.publish(
                    WorkflowSuspended(
                        source=self.name, workflow=self.name, completed_steps=len(steps), reason=exc.reason
                    )
                )
                raise
            steps.append(outcome)
            if not outcome.ok:
                store.put_record(ctx.session_id, self._record(), None)
                if agent is last and outcome.text:
                    answer = outcome.text  # part of the reply was streamed (and maybe spoken)
                else:
                    answer = steps[-2].text if len(steps) > 1 else ""  # the best answer there is
                    if answer:
                        yield ReplyDelta(source=self.name, text=answer)
                return AgentResult(answer, agent=outcome.agent, ok=False, error=outcome.error, steps=steps)
        store.put_record(ctx.session_id, self._record(), None)
        return AgentResult(steps[-1].text, agent=steps[-1].agent, steps=steps)
